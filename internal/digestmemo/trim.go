package digestmemo

import (
	"time"

	"github.com/mkrelease/mkrelease/internal/cachetrim"
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
	return cachetrim.Files(m.Dir, []string{"*", "tables/*"}, nil, now, maxUnused)
}
