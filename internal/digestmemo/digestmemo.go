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
// and after differ) is not remembered.
package digestmemo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Memo remembers digests in Dir (created on first use). The zero Memo
// (empty Dir) remembers nothing: every call hashes.
type Memo struct {
	Dir string
}

// SHA256 returns the hex sha256 and the size of the regular file path,
// from the memo when the file's identity is the one remembered, else by
// reading it (and remembering it).
func (m Memo) SHA256(path string) (string, int64, error) {
	before, ok := identity(path)
	if !ok || m.Dir == "" {
		return checksum.File(path)
	}
	memo := filepath.Join(m.Dir, key(path, before))
	if sha, size, ok := read(memo); ok {
		return sha, size, nil
	}
	sha, size, err := checksum.File(path)
	if err != nil {
		return "", 0, err
	}
	if after, ok := identity(path); ok && after == before {
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

// format writes an identity's fields.
func format(dev, ino uint64, size, mtime, ctime int64) string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d ctime=%d", dev, ino, size, mtime, ctime)
}
