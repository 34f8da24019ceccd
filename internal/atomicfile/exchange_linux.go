package atomicfile

import "golang.org/x/sys/unix"

// exchange swaps the folders a and b atomically (renameat2
// RENAME_EXCHANGE). It fails, and changes nothing, where the file system
// or kernel cannot exchange.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
