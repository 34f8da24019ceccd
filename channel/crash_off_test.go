//go:build !mkrelease_testhooks

package channel

import (
	"path/filepath"
	"testing"
)

// TestCrashHookOffByDefault: a build without the mkrelease_testhooks tag
// (this test binary) ignores MKRELEASE_TEST_CRASH_AT: the hooks are no-ops.
// It is left out of a build with the tag, where the hook would kill the
// test binary itself.
func TestCrashHookOffByDefault(t *testing.T) {
	t.Setenv("MKRELEASE_TEST_CRASH_AT", "stage/created")
	dest := filepath.Join(t.TempDir(), "ch")
	mustPublish(t, dest, release(t, "0.2.0", ""))
	mustVerify(t, dest)
}
