//go:build !mkrelease_testhooks

package testhook

// Nondeterministic reports whether the hook point should emit a value that
// differs on every run. Without the mkrelease_testhooks build tag it is
// always false.
func Nondeterministic(point string) bool { return false }

// Crash marks a point where a crash-safety test may kill the process.
// Without the mkrelease_testhooks build tag it does nothing.
func Crash(point string) {}

// Count records that the operation point (one of the Count* constants)
// was done once on key, a file's path (recorded absolute and clean, see
// the package doc). Without the mkrelease_testhooks
// build tag it does nothing.
func Count(point, key string) {}
