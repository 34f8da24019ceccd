//go:build !mkrelease_testhooks

package testhook

// Nondeterministic reports whether the hook point should emit a value that
// differs on every run. Without the mkrelease_testhooks build tag it is
// always false.
func Nondeterministic(point string) bool { return false }

// Crash marks a point where a crash-safety test may kill the process.
// Without the mkrelease_testhooks build tag it does nothing.
func Crash(point string) {}
