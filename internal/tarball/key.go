package tarball

import (
	"fmt"
	"io/fs"
	"sort"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// keyFormat names the layout of what Key hashes; change it when that
// layout changes.
const keyFormat = "mkrelease-tarball-key/1"

// Key returns the hex sha256 of everything the bytes Write makes from
// entries and o depend on: writer (the identity of the writing code, which
// must change whenever this package, archive/tar or the compression
// libraries may have: the digest of the mkrelease executable), the root
// folder, the time, and each entry, in name order, with its path, type and
// mode and the sha256 of its content (Entry.SHA256 when set, else read
// from File or Data). Concurrency is left out: it never changes the bytes.
// Two archives with the same key are the same bytes, so a cache may serve
// one by its key.
func Key(entries []Entry, o Options, writer string) (string, error) {
	if writer == "" {
		return "", fmt.Errorf("tarball key without the writer's identity")
	}
	type entry struct {
		Path   string      `json:"path"`
		Mode   fs.FileMode `json:"mode"`
		SHA256 string      `json:"sha256,omitempty"`
	}
	k := struct {
		Format  string  `json:"format"`
		Writer  string  `json:"writer"`
		Root    string  `json:"root"`
		MTime   int64   `json:"mtime"`
		Entries []entry `json:"entries"`
	}{Format: keyFormat, Writer: writer, Root: o.Root, MTime: o.MTime}
	for _, e := range entries {
		sha := ""
		switch {
		case e.Mode.IsDir():
		case e.File == "":
			sha = checksum.Bytes(e.Data)
		case e.SHA256 != "":
			if !checksum.IsSHA256(e.SHA256) {
				return "", fmt.Errorf("tarball entry %s: %q is not a sha256", e.Path, e.SHA256)
			}
			sha = e.SHA256
		default:
			var err error
			if sha, _, err = checksum.File(e.File); err != nil {
				return "", fmt.Errorf("tarball entry %s: %w", e.Path, err)
			}
		}
		k.Entries = append(k.Entries, entry{Path: e.Path, Mode: e.Mode, SHA256: sha})
	}
	sort.SliceStable(k.Entries, func(i, j int) bool { return k.Entries[i].Path < k.Entries[j].Path })
	return checksum.JSON(k)
}
