package actioncache

import (
	"os"

	"golang.org/x/sys/unix"
)

// reflink makes dst, an empty file open for writing, a clone of src that
// shares its blocks until either is written (FICLONE: btrfs, XFS, bcachefs,
// overlayfs over one of those). Where the file system cannot (ext4, tmpfs,
// two file systems), it fails and changes nothing: the caller copies.
func reflink(dst, src *os.File) error {
	dc, err := dst.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	err = dc.Control(func(dfd uintptr) {
		sc, err := src.SyscallConn()
		if err != nil {
			cerr = err
			return
		}
		if err := sc.Control(func(sfd uintptr) {
			cerr = unix.IoctlFileClone(int(dfd), int(sfd))
		}); err != nil {
			cerr = err
		}
	})
	if err != nil {
		return err
	}
	return cerr
}
