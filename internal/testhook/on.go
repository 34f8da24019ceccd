//go:build mkrelease_testhooks

package testhook

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Nondeterministic reports whether MKRELEASE_TEST_NONDETERMINISM (a comma
// list of hook points) names point.
func Nondeterministic(point string) bool {
	for _, p := range strings.Split(os.Getenv("MKRELEASE_TEST_NONDETERMINISM"), ",") {
		if strings.TrimSpace(p) == point {
			return true
		}
	}
	return false
}

// Crash kills the process with SIGKILL, as a power cut or the OOM killer
// would (no deferred function runs, nothing is flushed), when the
// environment variable MKRELEASE_TEST_CRASH_AT names point. It writes
// CrashMarker and the point to standard error first.
func Crash(point string) {
	if os.Getenv("MKRELEASE_TEST_CRASH_AT") != point {
		return
	}
	fmt.Fprintf(os.Stderr, "%s%s\n", CrashMarker, point)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	for {
		// SIGKILL to oneself is delivered before the call returns; never
		// go on even if it were not.
		time.Sleep(time.Hour)
	}
}

// Count appends the line "point\tkey\n" to the file that the environment
// variable MKRELEASE_TEST_COUNT names (created with mode 0644 if missing),
// key made absolute and clean first (filepath.Abs, so callers pass the path
// they opened as they have it), in a single write on a file opened with O_APPEND, so lines from
// concurrent goroutines and processes do not interleave. It does nothing
// when the variable is empty, and ignores errors: a count that cannot be
// recorded makes the test reading it fail, not the operation counted.
func Count(point, key string) {
	file := os.Getenv("MKRELEASE_TEST_COUNT")
	if file == "" {
		return
	}
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	_, _ = f.Write([]byte(point + "\t" + key + "\n"))
	_ = f.Close()
}
