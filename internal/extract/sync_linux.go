package extract

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncEachFile is false on Linux: one syncfs(2) in flushTree flushes the
// whole extracted tree, far faster than an fsync per file.
const syncEachFile = false

// flushTree flushes the file system holding dir to stable storage.
func flushTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return &os.PathError{Op: "syncfs", Path: dir, Err: err}
	}
	return nil
}

// renameNoReplace renames old to new, failing with an error matching
// fs.ErrExist if new exists, atomically where the file system supports
// renameat2(RENAME_NOREPLACE).
func renameNoReplace(old, new string) error {
	err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameChecked(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
