package actioncache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
)

// The cache forgets what no build has used for a while, as Go's build
// cache does: every build that stores a changed wheel and bundle adds
// their size to the cache, and without trimming it only grows.
const (
	// MaxUnused is how long an entry stays once no build uses it.
	MaxUnused = 5 * 24 * time.Hour
	// TrimInterval is how often [Cache.Trim] looks through the cache.
	TrimInterval = 24 * time.Hour
	// usedResolution is how stale an entry's last-use time may get before
	// a restore records the use (a write, so not at every restore).
	usedResolution = time.Hour
	// tmpMaxAge is how old a folder that an entry was assembled in must be
	// before Trim takes it for one a killed run left.
	tmpMaxAge = 24 * time.Hour
)

// trimFile records when the cache was last trimmed, in Unix seconds.
const trimFile = "trim.txt"

// TrimStats says what [Cache.Trim] did.
type TrimStats struct {
	// Skipped is set when the cache was trimmed less than TrimInterval
	// ago, and nothing was looked at.
	Skipped bool
	// Entries is how many entries were removed, Bytes their files' size
	// (freed, except what an entry stored by an earlier mkrelease still
	// shares with an output folder by a hard link).
	Entries int
	Bytes   int64
	// Memos is how many digest memos ([Cache.Digests]) went with them.
	Memos int
	// StepFolders is how many of the steps' own caches ([Cache.StepDirs])
	// went, StepBytes their files' size.
	StepFolders int
	StepBytes   int64
}

// markUsed records that the entry in dir served a build now: its
// entry.json's modification time is the entry's last use. It is written
// only when it is over usedResolution old.
func markUsed(dir string, now time.Time) {
	p := filepath.Join(dir, "entry.json")
	if st, err := os.Stat(p); err == nil && now.Sub(st.ModTime()) > usedResolution {
		_ = os.Chtimes(p, now, now) // best effort: a missed mark only shortens the entry's life
	}
}

// Trim removes the entries no build has stored or restored for MaxUnused,
// the digest memos ([Cache.Digests]) not written for as long, the steps'
// own caches no step run used for as long ([Cache.StepDirs]), and the
// folders that runs killed while storing an entry, or discarding a damaged
// one, left behind, at most once every TrimInterval (it returns at once,
// Skipped, otherwise). An entry is only a cache of what its action makes:
// a build that needs a removed one runs the action again; output folders
// hold copies of its files, which stay. Trimming the cache of a running build is
// safe: an entry it uses is one used now, and one removed while it is
// being restored is reported damaged and rebuilt, never served in part.
func (c *Cache) Trim(now time.Time) (TrimStats, error) {
	root := filepath.Join(c.Dir, "actions")
	mark := filepath.Join(root, trimFile)
	if b, err := os.ReadFile(mark); err == nil {
		if sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			if last := time.Unix(sec, 0); now.Sub(last) < TrimInterval && !last.After(now) {
				return TrimStats{Skipped: true}, nil
			}
		}
	}
	shards, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return TrimStats{}, nil
	}
	if err != nil {
		return TrimStats{}, fmt.Errorf("trim action cache: %w", err)
	}
	var st TrimStats
	var errs []error
	for _, shard := range shards {
		if !shard.IsDir() {
			continue
		}
		dir := filepath.Join(root, shard.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			used, ok := lastUse(p, e.Name())
			if !ok || now.Sub(used) <= maxAge(e.Name()) {
				continue
			}
			size := treeSize(p)
			if err := os.RemoveAll(p); err != nil {
				errs = append(errs, err)
				continue
			}
			if !strings.HasPrefix(e.Name(), ".tmp-") {
				st.Entries++
				st.Bytes += size
			}
		}
	}
	n, err := c.Digests.Trim(now, MaxUnused)
	st.Memos = n
	if err != nil {
		errs = append(errs, err)
	}
	st.StepFolders, st.StepBytes, err = c.trimSteps(now)
	if err != nil {
		errs = append(errs, err)
	}
	if err := atomicfile.WriteFile(mark, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o644); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return st, fmt.Errorf("trim action cache %s: %w", root, err)
	}
	return st, nil
}

// lastUse is when the entry (or the temporary folder of one being stored)
// at p was last stored or restored; ok is false for names that are
// neither, which Trim leaves alone.
func lastUse(p, name string) (time.Time, bool) {
	switch {
	case strings.HasPrefix(name, ".tmp-"):
		st, err := os.Stat(p)
		if err != nil {
			return time.Time{}, false
		}
		return st.ModTime(), true
	case checkKey(name) == nil:
		st, err := os.Stat(filepath.Join(p, "entry.json"))
		if err != nil {
			// No record: what a run removing the entry left (it is no
			// entry to Restore); the folder's time stands for its use.
			if st, err = os.Stat(p); err != nil {
				return time.Time{}, false
			}
		}
		return st.ModTime(), true
	}
	return time.Time{}, false
}

// maxAge is how long the folder name may go unused.
func maxAge(name string) time.Duration {
	if strings.HasPrefix(name, ".tmp-") {
		return tmpMaxAge
	}
	return MaxUnused
}

// treeSize adds up the sizes of the regular files below dir.
func treeSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
