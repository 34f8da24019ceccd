package artdiff

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// DiffoscopeTimeout bounds a Diffoscope run whose context has no
	// deadline.
	DiffoscopeTimeout = 10 * time.Minute
	// diffoscopeStderr is how much of diffoscope's standard error is kept
	// for an error message.
	diffoscopeStderr = 4 << 10
	// diffoscopeWaitDelay is how long a killed diffoscope's children may
	// keep its output open.
	diffoscopeWaitDelay = 5 * time.Second
)

// Diffoscope runs diffoscope (https://diffoscope.org) on the files a and b
// when it is installed (found on PATH) and returns its plain-text report:
// empty when diffoscope finds no difference. ok is false, with no error,
// when diffoscope is not installed.
//
// The run is bounded in time by ctx, or by [DiffoscopeTimeout] when ctx
// has no deadline, and in output: the report is at most maxBytes bytes
// (diffoscope is asked to stop there, and is stopped when it writes more),
// followed by a one-line notice when it was cut. When the time runs out,
// the report so far comes back with the context's error.
func Diffoscope(ctx context.Context, a, b string, maxBytes int) (report string, ok bool, err error) {
	if maxBytes <= 0 {
		return "", false, fmt.Errorf("artdiff: diffoscope report limit %d: must be positive", maxBytes)
	}
	exe, err := exec.LookPath("diffoscope")
	if err != nil {
		return "", false, nil
	}
	if _, has := ctx.Deadline(); !has {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DiffoscopeTimeout)
		defer cancel()
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	cmd := exec.CommandContext(runCtx, exe,
		"--no-progress", "--text", "-", "--max-text-report-size", strconv.Itoa(maxBytes), "--", a, b)
	stdout := &capWriter{max: maxBytes, full: stop}
	stderr := &capWriter{max: diffoscopeStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = diffoscopeWaitDelay
	runErr := cmd.Run()
	report, cut := stdout.result()
	if cut {
		return report + fmt.Sprintf("\n[diffoscope report cut at %d bytes]\n", maxBytes), true, nil
	}
	if err := ctx.Err(); err != nil {
		return report, true, fmt.Errorf("diffoscope: %w", err)
	}
	var exit *exec.ExitError
	if errors.As(runErr, &exit) && exit.ExitCode() == 1 {
		// 1: the files differ.
		runErr = nil
	}
	if runErr != nil {
		msg, _ := stderr.result()
		if msg = strings.TrimSpace(msg); msg != "" {
			return report, true, fmt.Errorf("diffoscope: %w: %s", runErr, msg)
		}
		return report, true, fmt.Errorf("diffoscope: %w", runErr)
	}
	return report, true, nil
}

// capWriter keeps the first max bytes written to it and discards the
// rest, calling full (when set) once it has discarded something.
type capWriter struct {
	mu   sync.Mutex
	max  int
	full func()
	buf  []byte
	cut  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := w.max - len(w.buf)
	if len(p) > room {
		w.buf = append(w.buf, p[:room]...)
		if !w.cut && w.full != nil {
			w.full()
		}
		w.cut = true
	} else {
		w.buf = append(w.buf, p...)
	}
	return len(p), nil
}

func (w *capWriter) result() (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf), w.cut
}
