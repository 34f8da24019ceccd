// Package cachetrim removes the files of a cache that nothing wrote for a
// while: memos kept by content digest, whose owners cannot tell which are
// still wanted, go once they are old enough, and a wanted one is only
// written again.
package cachetrim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Files removes the regular files below root that one of patterns (fs.Glob
// patterns of slash-separated paths below root) matches, that ours accepts
// (nil accepts every name) and that were last written more than maxUnused
// before now; a folder below root that this leaves empty goes too. A root
// that does not exist holds nothing to remove. It returns how many files
// it removed, and every failure to remove one.
func Files(root string, patterns []string, ours func(name string) bool, now time.Time, maxUnused time.Duration) (int, error) {
	removed := 0
	var errs []error
	for _, pattern := range patterns {
		names, err := fs.Glob(os.DirFS(root), pattern)
		if err != nil {
			return removed, fmt.Errorf("trim %s: %w", root, err)
		}
		for _, name := range names {
			if ours != nil && !ours(name) {
				continue
			}
			p := filepath.Join(root, filepath.FromSlash(name))
			info, err := os.Lstat(p)
			if err != nil || !info.Mode().IsRegular() || now.Sub(info.ModTime()) <= maxUnused {
				continue
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed++
			if dir := filepath.Dir(p); dir != filepath.Clean(root) {
				_ = os.Remove(dir) // fails, as it should, while the folder holds anything
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("trim %s: %w", root, err)
	}
	return removed, nil
}
