//go:build !mkrelease_testhooks

package testhook

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHooksOff: without the build tag the hooks ignore their environment
// variables.
func TestHooksOff(t *testing.T) {
	file := filepath.Join(t.TempDir(), "count")
	t.Setenv("MKRELEASE_TEST_COUNT", file)
	t.Setenv("MKRELEASE_TEST_NONDETERMINISM", "p")
	t.Setenv("MKRELEASE_TEST_CRASH_AT", "p")
	Count(CountHash, file)
	Crash("p")
	if Nondeterministic("p") {
		t.Error("Nondeterministic is true without the build tag")
	}
	if _, err := os.Lstat(file); !os.IsNotExist(err) {
		t.Errorf("Count without the build tag wrote %s (%v)", file, err)
	}
}
