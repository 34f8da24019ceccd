// Package testhook lets end-to-end tests inject faults that no input can
// cause, such as a non-deterministic byte in an artifact or a kill at a
// chosen point of a publish, to prove that the tools which must notice them
// do, and that nothing is left half-written; and count expensive operations
// (hashing a file, extracting an archive) to prove that a command does each
// only once. The hooks exist only in
// binaries built with the build tag mkrelease_testhooks; in every other
// build they are constant no-ops the compiler removes.
//
// Environment variables read by the hooks (only with the build tag):
//
//	MKRELEASE_TEST_NONDETERMINISM  comma list of points for Nondeterministic
//	MKRELEASE_TEST_CRASH_AT        the one point where Crash kills the process
//	MKRELEASE_TEST_COUNT           the file Count appends "point\tkey\n" lines to
//
// # Count points
//
// [Count] is called at these points, each with the key given:
//
//	hash     a whole file read to compute its sha256; key: the file's
//	         absolute, cleaned path (internal/checksum: File, Verify)
//	extract  an archive extracted to disk; key: the archive's absolute,
//	         cleaned path (internal/extract: ExtractFile)
//	copy     a file copied byte for byte with its digest checked (into a
//	         channel, say); key: the source's absolute, cleaned path
//	         (channel: every asset copied into a generation)
package testhook

// Point names for [Count].
const (
	// CountHash: a whole file was read to compute its sha256.
	CountHash = "hash"
	// CountExtract: an archive was extracted to disk.
	CountExtract = "extract"
	// CountCopy: a file was copied byte for byte with its digest checked.
	CountCopy = "copy"
)

// CrashMarker is what Crash writes to standard error, followed by the
// point's name and a newline, just before the process kills itself: a test
// reads it to know that the child died at that point and not elsewhere.
const CrashMarker = "mkrelease testhook: SIGKILL at "
