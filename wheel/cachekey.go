package wheel

import (
	"fmt"
	"io/fs"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// cacheKeyFormat names the layout of what CacheKey hashes; change it when
// that layout changes.
const cacheKeyFormat = "mkrelease-wheel-key/1"

// CacheKey returns the hex sha256 of everything the bytes Write makes from
// c depend on: writer (the identity of the code that writes, which must
// change whenever the writer's code or its compression library may have:
// the digest of the mkrelease executable), the file name, the epoch, and
// each member in write order with its path, mode and the sha256 of its
// content (Member.SHA256 when set, else read from File or Data). Two
// Contents with the same key give the same wheel, byte for byte, so a
// cache may serve a wheel by its key.
func (c *Contents) CacheKey(writer string) (string, error) {
	if writer == "" {
		return "", fmt.Errorf("wheel %s: cache key without the writer's identity", c.Name)
	}
	members, err := c.ordered()
	if err != nil {
		return "", err
	}
	type member struct {
		Path   string      `json:"path"`
		Mode   fs.FileMode `json:"mode"`
		SHA256 string      `json:"sha256"`
	}
	k := struct {
		Format  string   `json:"format"`
		Writer  string   `json:"writer"`
		Name    string   `json:"name"`
		Epoch   int64    `json:"epoch"`
		Members []member `json:"members"`
	}{Format: cacheKeyFormat, Writer: writer, Name: c.Name.String(), Epoch: c.Epoch}
	for _, m := range members {
		sha := m.SHA256
		switch {
		case m.Data != nil || m.File == "":
			sha = checksum.Bytes(m.Data)
		case sha == "":
			if sha, _, err = checksum.File(m.File); err != nil {
				return "", fmt.Errorf("wheel %s: %s: %w", c.Name, m.Path, err)
			}
		case !checksum.IsSHA256(sha):
			return "", fmt.Errorf("wheel %s: %s: %q is not a sha256", c.Name, m.Path, sha)
		}
		mode := fs.FileMode(0o644)
		if m.Mode&0o111 != 0 {
			mode = 0o755
		}
		k.Members = append(k.Members, member{Path: m.Path, Mode: mode, SHA256: sha})
	}
	return checksum.JSON(k)
}
