package digestmemo

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

// Trim removes the memos and tables of m.Dir last written more than
// maxUnused before now: those of files that are gone (an action cache
// entry trimmed, a compiler replaced, a folder no longer built) would
// otherwise stay for ever. A memo still in use that goes only costs one
// hash, which remembers it again. It returns how many files it removed.
func (m Memo) Trim(now time.Time, maxUnused time.Duration) (int, error) {
	if m.Dir == "" {
		return 0, nil
	}
	removed := 0
	var errs []error
	for _, dir := range []string{m.Dir, filepath.Join(m.Dir, "tables")} {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if err != nil || now.Sub(info.ModTime()) <= maxUnused {
				continue
			}
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	return removed, errors.Join(errs...)
}
