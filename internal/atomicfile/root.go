package atomicfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// WriteNewIn is [WriteNew] for the file name inside root: the temporary
// file, the link that puts it in place (and fails when name exists) and
// the folder sync all go through root, so that no link, ".." or rename
// made meanwhile can take the write outside root's folder.
func WriteNewIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTempIn(root, name, data, perm)
	if err != nil {
		return err
	}
	defer root.Remove(tmp)
	if err := root.Link(tmp, name); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", name, fs.ErrExist)
		}
		return fmt.Errorf("write %s: %w", name, err)
	}
	return syncDirIn(root, filepath.Dir(name))
}

// WriteFileIn is [WriteFile] for the file name inside root: it replaces
// name, whole, by a rename that stays inside root.
func WriteFileIn(root *os.Root, name string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTempIn(root, name, data, perm)
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, name); err != nil {
		root.Remove(tmp)
		return fmt.Errorf("write %s: %w", name, err)
	}
	return syncDirIn(root, filepath.Dir(name))
}

// writeTempIn writes data, synced and with mode perm (given only once it
// is written: the file is 0600 until then), to a new temporary file beside
// name inside root, and returns its name.
func writeTempIn(root *os.Root, name string, data []byte, perm fs.FileMode) (string, error) {
	dir, base := filepath.Split(name)
	var f *os.File
	var tmp string
	for range 10 {
		tmp = filepath.Join(dir, "."+base+".tmp-"+rand.Text()[:12])
		var err error
		f, err = root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create %s: %w", name, err)
		}
	}
	if f == nil {
		return "", fmt.Errorf("create %s: no free temporary name beside it", name)
	}
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		root.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return tmp, nil
}

// syncDirIn is [SyncDir] for the folder dir inside root.
func syncDirIn(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer d.Close()
	// As syncDir: a file system that cannot sync a folder (EINVAL), and
	// Windows, where a folder cannot be synced, leave nothing more to do.
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
