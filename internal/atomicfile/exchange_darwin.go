package atomicfile

import "golang.org/x/sys/unix"

// exchange swaps the folders a and b atomically (renamex_np RENAME_SWAP,
// which APFS and HFS+ support). It fails, and changes nothing, where the
// file system cannot swap.
func exchange(a, b string) error {
	return unix.RenamexNp(a, b, unix.RENAME_SWAP)
}
