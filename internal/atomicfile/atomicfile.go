// Package atomicfile writes files and folders so that a reader, or a kill
// at any moment, never sees them half-written: content goes to a temporary
// name in the same folder, is synced, and is renamed into place.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written under a temporary name. Commit renames it
// into place; Abort (safe after Commit) removes it.
type File struct {
	*os.File
	path string
	perm fs.FileMode
	done bool
}

// Create starts writing path. Parent folders must exist.
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit syncs, closes and renames the file into place, then syncs its folder.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("commit %s: already finished", f.path)
	}
	f.done = true
	tmp := f.Name()
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, f.perm)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return SyncDir(filepath.Dir(f.path))
}

// Abort discards the file. It does nothing after Commit.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path atomically with mode perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Commit()
}

// WriteNew writes data to path with mode perm, complete or not at all, and
// never over an existing file: the content is written and synced under a
// temporary name, then hard-linked to path, which fails when path exists
// (also when it appears between a caller's check and the write). That
// failure wraps [fs.ErrExist]. The temporary file is created with mode
// 0600 and only then given perm, so a private key is never readable by
// others, not even for a moment.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w", path, fs.ErrExist)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir flushes a folder's entries (new names, renames) to disk. Where
// the platform cannot sync a folder (Windows; a file system that refuses)
// it does nothing: see syncDir.
func SyncDir(dir string) error {
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// TempDir creates a folder beside final (same file system, so it can be
// renamed onto final) to assemble its new content in.
func TempDir(final string) (string, error) {
	parent := filepath.Dir(filepath.Clean(final))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", parent, err)
	}
	dir, err := os.MkdirTemp(parent, "."+filepath.Base(final)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("create staging folder for %s: %w", final, err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// ReplaceDir puts the folder staged in place of final in one step: where
// final exists the two are exchanged atomically (renameat2 RENAME_EXCHANGE
// on Linux, renamex_np RENAME_SWAP on macOS) and the old content is
// removed afterwards, so final is at every moment either the whole old or
// the whole new folder. Where the platform or file system cannot exchange
// (Windows, where a folder cannot even be renamed onto an existing one;
// file systems without the exchange), the old folder is moved aside first:
// between the two renames final does not exist, and a kill there leaves
// the old content beside it, named staged+".old".
func ReplaceDir(staged, final string) error {
	return replaceDir(staged, final, exchange)
}

// replaceDir is ReplaceDir with the platform's exchange given (tests give
// one that fails, to take the move-aside path).
func replaceDir(staged, final string, exchange func(a, b string) error) error {
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(staged, final); err != nil {
			return fmt.Errorf("publish %s: %w", final, err)
		}
		return SyncDir(filepath.Dir(final))
	}
	if err := exchange(staged, final); err != nil {
		aside := staged + ".old"
		if err := os.Rename(final, aside); err != nil {
			return fmt.Errorf("publish %s: move the previous folder aside: %w", final, err)
		}
		if err := os.Rename(staged, final); err != nil {
			if rerr := os.Rename(aside, final); rerr != nil {
				return fmt.Errorf("publish %s: %w (and putting the previous folder back failed: %v; it is %s)", final, err, rerr, aside)
			}
			return fmt.Errorf("publish %s: %w", final, err)
		}
		staged = aside
	}
	if err := SyncDir(filepath.Dir(final)); err != nil {
		return err
	}
	// staged now holds the old content.
	if err := os.RemoveAll(staged); err != nil {
		return fmt.Errorf("remove previous %s: %w", final, err)
	}
	return nil
}
