// Package workdir creates the folders a run owns while it runs (the staging
// folder beside an output, the scratch folder of a build) and removes the
// ones a killed run left behind.
//
// A run holds an exclusive lock (flock) on each folder it creates, for as
// long as the folder is open. The kernel drops the lock when the process
// ends, however it ends (SIGKILL included), so [Sweep] can tell a folder of
// a live run (locked) from one a dead run left (lockable) without guessing
// from ages or process IDs. A folder whose lock Sweep takes is removed while
// Sweep holds the lock; [Create] re-checks that its new folder still exists
// once it holds the lock, so the two never race.
package workdir

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Dir is a folder the run owns. Close releases it (the folder stays).
type Dir struct {
	// Path is the folder.
	Path string
	f    *os.File
}

// Create makes a new folder in parent named pattern (a "*" in it is
// replaced by a random string, as [os.MkdirTemp] does), mode 0755, and
// locks it for this process.
func Create(parent, pattern string) (*Dir, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", parent, err)
	}
	for range 10 {
		dir, err := os.MkdirTemp(parent, pattern)
		if err != nil {
			return nil, fmt.Errorf("create a working folder in %s: %w", parent, err)
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		f, err := os.Open(dir)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		if err := lock(f, true); err != nil {
			f.Close()
			os.RemoveAll(dir)
			return nil, fmt.Errorf("lock working folder %s: %w", dir, err)
		}
		// A concurrent Sweep may have removed the folder between MkdirTemp
		// and the lock: then make another.
		if same(f, dir) {
			return &Dir{Path: dir, f: f}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("create a working folder in %s: it kept being removed", parent)
}

// Close releases the folder's lock; the folder stays where it is.
func (d *Dir) Close() error {
	if d == nil || d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// Remove removes the folder and releases it.
func (d *Dir) Remove() error {
	if d == nil {
		return nil
	}
	err := os.RemoveAll(d.Path)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Sweep removes every folder in parent whose name starts with prefix and
// that no live run holds: what a killed run left. It returns the folders it
// removed. A folder it cannot lock is in use and is left alone.
func Sweep(parent, prefix string) ([]string, error) {
	entries, err := os.ReadDir(parent)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for left-over working folders in %s: %w", parent, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		f, err := os.Open(dir)
		if err != nil {
			continue // gone, or not ours to open
		}
		if err := lock(f, false); err != nil {
			f.Close() // a live run holds it
			continue
		}
		if !same(f, dir) {
			f.Close()
			continue
		}
		err = os.RemoveAll(dir)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("remove left-over working folder %s: %w", dir, err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}

// same reports whether the open folder f is still the one at path.
func same(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// Scratch removes the folders named prefix* in the temporary folder that
// killed runs left, then creates a new one for this run. It returns the
// folders it removed, for the caller to log.
func Scratch(prefix string) (*Dir, []string, error) {
	removed, err := Sweep(os.TempDir(), prefix)
	d, cerr := Create(os.TempDir(), prefix+"*")
	if cerr != nil {
		return nil, removed, cerr
	}
	return d, removed, err
}

// LogSwept logs the folders interrupted runs left that were removed, and a
// failure to remove one.
func LogSwept(log *slog.Logger, removed []string, err error) {
	for _, d := range removed {
		log.Info("removed a folder an interrupted run left", "folder", d)
	}
	if err != nil {
		log.Warn("could not remove a folder an interrupted run left", "error", err)
	}
}
