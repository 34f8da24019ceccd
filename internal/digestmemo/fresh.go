package digestmemo

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Fresh is the digest of a file hashed moments after it was written, by
// [Memo.HashLinkedFresh], that [Memo.RememberLinked] may remember.
type Fresh struct {
	SHA256 string
	Size   int64

	id      ident
	settled bool // the hash began after the file system's clock passed the file's last write
}

// tickWait bounds how long HashLinkedFresh waits for the file system's
// clock to move past a file's modification time: a few of the kernel's
// clock ticks (1 to 10 ms). A file system that keeps coarser times (whole
// seconds, FAT's 2 s) does not get there in time, and its files are
// remembered only once they are Racy old, as before.
const tickWait = 50 * time.Millisecond

// HashLinkedFresh hashes the regular file path, which its caller has just
// written and keeps under several names as [Memo.SHA256Linked] describes
// (an action cache entry being stored), so that its digest can be
// remembered now, rather than after it is hashed again once Racy old.
//
// A write made in the same tick of the file system's clock as the file's
// last one would leave its identity as it was; a write made after the
// clock moved on cannot. So, where the file is younger than Racy, the hash
// begins only after the file system's own clock, read from the times of a
// file created (and removed) in path's folder, shows a time later than the
// file's modification time. Only when it has is the digest remembered. The
// clock read is the one the file's times come from (the same file
// system), so the rule holds whatever its precision: one that keeps whole
// seconds simply never shows a later time within the short wait.
//
// Where identities are not read, or m remembers nothing, it only hashes.
func (m Memo) HashLinkedFresh(path string) (Fresh, error) {
	before, ok := identity(path)
	if !ok || m.Dir == "" {
		sha, size, err := checksum.File(path)
		return Fresh{SHA256: sha, Size: size}, err
	}
	before.ctime = 0
	settled := before.settled(m.now()) || clockPassed(filepath.Dir(path), before.mtime)
	sha, size, err := checksum.File(path)
	if err != nil {
		return Fresh{}, err
	}
	after, ok := identity(path)
	after.ctime = 0
	return Fresh{SHA256: sha, Size: size, id: before, settled: settled && ok && after == before}, nil
}

// RememberLinked remembers f as the digest of the file name (a name of
// the file f hashed, such as the one it has once its entry is committed),
// when f's hash began after the file's last write could still hide (see
// HashLinkedFresh) and name is still that very file, unchanged.
// [Memo.SHA256Linked] then finds it. Like every memo, it is best effort.
func (m Memo) RememberLinked(name string, f Fresh) {
	if m.Dir == "" || !f.settled {
		return
	}
	id, ok := identity(name)
	id.ctime = 0
	if !ok || id != f.id {
		return
	}
	_ = os.MkdirAll(m.Dir, 0o755)
	memo := filepath.Join(m.Dir, key(name, id.String()))
	_ = atomicfile.WriteFile(memo, []byte(f.SHA256+" "+strconv.FormatInt(f.Size, 10)+"\n"), 0o644)
}

// clockPassed waits, at most tickWait, until a file created in dir gets a
// modification time later than mtime (nanoseconds), and says whether one
// did. Files of one file system take their times from one clock, so every
// write after that moment gets a later time too.
func clockPassed(dir string, mtime int64) bool {
	deadline := time.Now().Add(tickWait)
	for {
		t, err := probe(dir)
		if err != nil {
			return false
		}
		if t > mtime {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// probe creates and removes a file in dir and returns its modification
// time in nanoseconds.
func probe(dir string) (int64, error) {
	f, err := os.CreateTemp(dir, ".clock-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	st, err := f.Stat()
	f.Close()
	if err != nil {
		return 0, err
	}
	return st.ModTime().UnixNano(), nil
}
