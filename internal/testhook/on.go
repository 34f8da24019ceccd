//go:build mkrelease_testhooks

package testhook

import (
	"fmt"
	"os"
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
