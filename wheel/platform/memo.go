package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/cachetrim"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Memo remembers what Inspect found in binaries, by the sha256 of their
// content, so that a build whose binaries did not change does not parse
// their symbol tables again. What a binary needs depends only on its bytes
// and on the code that reads them, so a memo is kept under the content's
// digest together with Version, which names that code (the digest of the
// running mkrelease executable): a changed inspector never reads an older
// one's memos.
//
// Memos are JSON files under Dir, written atomically; one that cannot be
// read or parsed is ignored and written again. Only binaries are
// remembered: for anything else Inspect reads a few bytes, no more than a
// memo costs. The zero Memo (or one without a Version) remembers nothing.
type Memo struct {
	Dir     string
	Version string
}

// Inspect is [Inspect] for the file at path whose content has the hex
// sha256 digest: from the memo when one is kept for the digest, else by
// reading the file (and remembering what it found). The caller vouches for
// the digest (the file was hashed when it was prepared, and what is built
// from it is checked against that digest again).
func (m Memo) Inspect(path, digest string) (Need, error) {
	if m.Dir == "" || m.Version == "" || !checksum.IsSHA256(digest) {
		return Inspect(path)
	}
	file := m.file(digest)
	if b, err := os.ReadFile(file); err == nil {
		var n Need
		if json.Unmarshal(b, &n) == nil && n.OS != "" {
			n.File = path
			return n, nil
		}
	}
	n, err := Inspect(path)
	if err != nil {
		return n, err
	}
	kept := n
	kept.File = ""
	if b, err := json.Marshal(kept); err == nil {
		// Best effort: a memo that cannot be written only costs a parse
		// next time.
		if os.MkdirAll(filepath.Dir(file), 0o755) == nil {
			_ = atomicfile.WriteFile(file, b, 0o644)
		}
	}
	return n, nil
}

// file names the memo of the content with the given digest.
func (m Memo) file(digest string) string {
	h := sha256.Sum256([]byte(m.Version + "\x00" + digest))
	k := hex.EncodeToString(h[:])
	return filepath.Join(m.Dir, k[:2], k+".json")
}

// Trim removes the memos of m.Dir written more than maxUnused before
// now. Memos are kept per inspector (Version), so those of every earlier
// mkrelease, and of binaries no longer built, would otherwise stay for
// ever; a memo still in use that goes only costs one parse, which writes
// it again. Files that are not memos, and memos of the last maxUnused,
// are left alone. It returns how many memos it removed.
func (m Memo) Trim(now time.Time, maxUnused time.Duration) (int, error) {
	if m.Dir == "" {
		return 0, nil
	}
	n, err := cachetrim.Files(m.Dir, []string{"*/*.json"}, isMemoName, now, maxUnused)
	if err != nil {
		return n, fmt.Errorf("platform memos: %w", err)
	}
	return n, nil
}

// isMemoName reports whether name ("ab/ab….json") is a memo's path
// below Dir, as [Memo.file] makes them.
func isMemoName(name string) bool {
	shard, base, ok := strings.Cut(name, "/")
	k, isJSON := strings.CutSuffix(base, ".json")
	return ok && isJSON && checksum.IsSHA256(k) && strings.HasPrefix(k, shard) && len(shard) == 2
}
