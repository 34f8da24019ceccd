package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/mkrelease/mkrelease/internal/progress"
	"golang.org/x/term"
)

// newProgress returns the progress display for f's stderr: drawn in place
// on a terminal, plain lines when stderr is not one or CI=true, NO_COLOR
// or TERM=dumb is set (progress.Live).
func newProgress(f *Factory) *progress.Meter {
	// The display draws on the terminal itself, under the inert writer
	// that other text goes through (it escapes what it draws).
	errOut := f.IO.ErrOut
	if u, ok := errOut.(interface{ Underlying() io.Writer }); ok {
		errOut = u.Underlying()
	}
	file, isFile := errOut.(*os.File)
	tty := isFile && term.IsTerminal(int(file.Fd()))
	lookup := f.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	o := progress.Options{Live: progress.Live(tty, lookup)}
	if tty {
		o.Width = func() int {
			if w, _, err := term.GetSize(int(file.Fd())); err == nil && w > 0 {
				return w
			}
			return 80
		}
	}
	return progress.New(errOut, o)
}

// lineHandler writes one plain line per record, for terminals and CI logs
// alike: "mkrelease: MESSAGE key=value ...", with WARNING/ERROR prefixes.
type lineHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("mkrelease: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("ERROR: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("WARNING: ")
	}
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		v := a.Value.Resolve().String()
		if strings.ContainsAny(v, " \t\"") {
			v = fmt.Sprintf("%q", v)
		}
		b.WriteString(" " + a.Key + "=" + v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	b.WriteByte('\n')
	if h.mu != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
	}
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *lineHandler) WithGroup(string) slog.Handler { return h }
