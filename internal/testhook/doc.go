// Package testhook lets end-to-end tests inject faults that no input can
// cause, such as a non-deterministic byte in an artifact or a kill at a
// chosen point of a publish, to prove that the tools which must notice them
// do, and that nothing is left half-written. The hooks exist only in
// binaries built with the build tag mkrelease_testhooks; in every other
// build they are constant no-ops the compiler removes.
//
// Environment variables read by the hooks (only with the build tag):
//
//	MKRELEASE_TEST_NONDETERMINISM  comma list of points for Nondeterministic
//	MKRELEASE_TEST_CRASH_AT        the one point where Crash kills the process
package testhook

// CrashMarker is what Crash writes to standard error, followed by the
// point's name and a newline, just before the process kills itself: a test
// reads it to know that the child died at that point and not elsewhere.
const CrashMarker = "mkrelease testhook: SIGKILL at "
