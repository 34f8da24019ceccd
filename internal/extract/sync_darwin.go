package extract

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// syncEachFile: each file is fsynced as it is closed.
const syncEachFile = true

// flushTree fsyncs the root directory (its files are synced as written).
func flushTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// renameNoReplace renames old to new, failing with an error matching
// fs.ErrExist if new exists, atomically where the file system supports
// renamex_np(RENAME_EXCL).
func renameNoReplace(old, new string) error {
	err := unix.RenamexNp(old, new, unix.RENAME_EXCL)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOTSUP) {
		return renameChecked(old, new)
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: err}
	}
	return nil
}
