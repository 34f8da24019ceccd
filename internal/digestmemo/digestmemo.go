// Package digestmemo remembers the sha256 of files that are large and
// rarely change (a compiler's executable, mkrelease itself) by the file's
// identity on disk, so that a build does not read a 150 MB compiler every
// time to learn that it is still the one locked.
//
// A file's identity is its device and inode numbers, its size, its
// modification time and its status change time (ctime), each to the
// nanosecond. Every change made through the file system changes the ctime:
// writing the file, replacing it by a rename (a new inode), touching it,
// changing its mode or owner; and the ctime cannot be set by a user, only
// by the kernel, from the clock. So a file whose identity is the one
// remembered has the content it had when it was hashed, and a compiler
// swapped behind the same version line is hashed again and seen. Where the
// identity is not read (systems other than Linux and macOS, Windows among
// them, and files that are not regular), the file is hashed every time.
//
// Memos are files under Dir named by the sha256 of the path and identity,
// written atomically; a memo that cannot be read or parsed is ignored and
// replaced. A file that changes while it is hashed (its identity before
// and after differ) is not remembered, and neither is a file changed less
// than [Racy] before it was hashed: file systems keep times in coarse
// ticks (milliseconds on Linux, up to 2 s on FAT), so a write in the tick
// of the hash could leave the identity as it was. Such a file is hashed
// again next time, until it is old enough (git's index has the same
// rule, for the same reason).
//
// A [Table] remembers the files of one folder (a local source tree) in one
// file that each run replaces, so that it does not grow as they change.
package digestmemo

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Memo remembers digests in Dir (created on first use). The zero Memo
// (empty Dir) remembers nothing: every call hashes.
type Memo struct {
	Dir string
	// Now is the clock the racy rule reads (nil: time.Now); tests set it.
	Now func() time.Time
}

// Racy is how recently a file may have changed and still be hashed every
// time rather than remembered (package doc).
const Racy = 2 * time.Second

func (m Memo) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// SHA256 returns the hex sha256 and the size of the regular file path,
// from the memo when the file's identity is the one remembered, else by
// reading it (and remembering it).
func (m Memo) SHA256(path string) (string, int64, error) {
	return m.sha256(path, identity)
}

// SHA256Linked is SHA256 for a file that its owner keeps under several
// names by hard links and links and unlinks as it works: an action cache
// entry, restored into each build's output by a link that a later build
// removes. Making or removing a link changes the file's ctime, so a memo
// that counted it would never be found again; the identity remembered here
// leaves the ctime out and is the device and inode numbers, the size and
// the modification time to the nanosecond (git's core.trustctime=false,
// for the same reason). Every write changes the modification time, so a
// change in place is still seen, unless whoever made it set the time back
// to the nanosecond and kept the size; a memo is also only remembered for
// a file whose modification time is at least Racy old.
func (m Memo) SHA256Linked(path string) (string, int64, error) {
	return m.sha256(path, func(path string) (ident, bool) {
		id, ok := identity(path)
		id.ctime = 0
		return id, ok
	})
}

func (m Memo) sha256(path string, identity func(string) (ident, bool)) (string, int64, error) {
	before, ok := identity(path)
	if !ok || m.Dir == "" {
		return checksum.File(path)
	}
	memo := filepath.Join(m.Dir, key(path, before.String()))
	if sha, size, ok := read(memo); ok {
		return sha, size, nil
	}
	start := m.now()
	sha, size, err := checksum.File(path)
	if err != nil {
		return "", 0, err
	}
	if after, ok := identity(path); ok && after == before && before.settled(start) {
		// Best effort: a memo that cannot be written only costs a
		// hash next time.
		_ = os.MkdirAll(m.Dir, 0o755)
		_ = atomicfile.WriteFile(memo, []byte(sha+" "+strconv.FormatInt(size, 10)+"\n"), 0o644)
	}
	return sha, size, nil
}

// key names the memo of path with identity id.
func key(path, id string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	h := sha256.Sum256([]byte(abs + "\x00" + id))
	return hex.EncodeToString(h[:])
}

// read parses a memo: "SHA256 SIZE\n".
func read(memo string) (string, int64, bool) {
	b, err := os.ReadFile(memo)
	if err != nil {
		return "", 0, false
	}
	sha, sizeText, ok := strings.Cut(strings.TrimSuffix(string(b), "\n"), " ")
	if !ok || !checksum.IsSHA256(sha) {
		return "", 0, false
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 {
		return "", 0, false
	}
	return sha, size, true
}

// ident is a file's identity on disk (package doc); times in nanoseconds.
type ident struct {
	dev, ino           uint64
	size, mtime, ctime int64
}

// String writes an identity's fields.
func (id ident) String() string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d", id.dev, id.ino, id.size, id.mtime, id.ctime)
}

// settled says the file last changed at least Racy before start, the
// moment its hash began: no write of the tick it was hashed in can hide
// behind an unchanged identity.
func (id ident) settled(start time.Time) bool {
	limit := start.Add(-Racy).UnixNano()
	return id.ctime < limit && id.mtime < limit
}

// Table remembers the digests of the files below one folder, in one file
// of its Memo's Dir named for the folder. Its SHA256 answers from what the
// last run remembered and may be called from many goroutines; Save
// replaces the file with what this run hashed or found, so files that left
// the folder are forgotten.
type Table struct {
	memo Memo
	file string
	old  map[string]tableRow
	mu   sync.Mutex
	seen map[string]tableRow
}

type tableRow struct {
	id   ident
	sha  string
	size int64
}

// Table opens the table of the folder root. With an empty Dir, or where
// identities are not read, it remembers nothing: every call hashes.
func (m Memo) Table(root string) *Table {
	t := &Table{memo: m, old: map[string]tableRow{}, seen: map[string]tableRow{}}
	if m.Dir == "" || !identities {
		return t
	}
	t.file = filepath.Join(m.Dir, "tables", key(root, "table"))
	data, err := os.ReadFile(t.file)
	if err != nil {
		return t
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p, row, ok := parseRow(sc.Text()); ok {
			t.old[p] = row
		}
	}
	return t
}

// SHA256 returns the hex sha256 and size of the regular file path, from
// the table when its identity is the one remembered, else by reading it.
func (t *Table) SHA256(path string) (string, int64, error) {
	if t.file == "" {
		return checksum.File(path)
	}
	before, ok := identity(path)
	if !ok {
		return checksum.File(path)
	}
	if row, ok := t.old[path]; ok && row.id == before {
		t.remember(path, row)
		return row.sha, row.size, nil
	}
	start := t.memo.now()
	sha, size, err := checksum.File(path)
	if err != nil {
		return "", 0, err
	}
	if after, ok := identity(path); ok && after == before && before.settled(start) {
		t.remember(path, tableRow{id: before, sha: sha, size: size})
	}
	return sha, size, nil
}

func (t *Table) remember(path string, row tableRow) {
	if strings.ContainsAny(path, "\n\r") {
		return // a line of the table could not hold it
	}
	t.mu.Lock()
	t.seen[path] = row
	t.mu.Unlock()
}

// Save writes what this run remembered in place of the table, atomically.
// Like a memo, it is best effort: a table that cannot be written only
// costs hashes next time, so the error is for logs.
func (t *Table) Save() error {
	if t.file == "" {
		return nil
	}
	t.mu.Lock()
	paths := make([]string, 0, len(t.seen))
	for p := range t.seen {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b bytes.Buffer
	for _, p := range paths {
		r := t.seen[p]
		fmt.Fprintf(&b, "%s %d %d %d %d %d %s\n", r.sha, r.size, r.id.dev, r.id.ino, r.id.mtime, r.id.ctime, p)
	}
	t.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(t.file), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(t.file, b.Bytes(), 0o644)
}

// parseRow reads a table line: "SHA256 SIZE DEV INO MTIME CTIME PATH".
func parseRow(line string) (string, tableRow, bool) {
	f := strings.SplitN(line, " ", 7)
	if len(f) != 7 || !checksum.IsSHA256(f[0]) || f[6] == "" {
		return "", tableRow{}, false
	}
	var n [5]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil || (i == 0 && v < 0) {
			return "", tableRow{}, false
		}
		n[i] = v
	}
	return f[6], tableRow{sha: f[0], size: n[0],
		id: ident{dev: uint64(n[1]), ino: uint64(n[2]), size: n[0], mtime: n[3], ctime: n[4]}}, true
}
