//go:build !unix

package measure

// writeBack does nothing where there is no sync(2); the benchmarks run
// on Linux (they time commands under GNU time).
func writeBack() {}
