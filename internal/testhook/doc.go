// Package testhook lets end-to-end tests inject faults that no input can
// cause, such as a non-deterministic byte in an artifact, to prove that the
// tools which must notice them do. The hooks exist only in binaries built
// with the build tag mkrelease_testhooks; in every other build they are
// constant no-ops the compiler removes.
package testhook
