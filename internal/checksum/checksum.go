package checksum

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/testhook"
)

// readBufSize is the size of each read while hashing.
// 128 KiB hashes as fast as larger reads (BenchmarkFile) and, allocated per
// file, leaves little garbage when thousands of files are hashed.
const readBufSize = 128 << 10

// Sum is the sha256 of one file.
type Sum struct {
	// Name is the file's slash-separated path relative to the folder of
	// the sums file.
	Name string
	// SHA256 is the digest in lower-case hex (64 digits).
	SHA256 string
}

// Sums is the content of a checksum file.
type Sums []Sum

// Marshal returns the sums in `sha256sum -c` format, sorted by name, one
// "<sha256>  <name>\n" line each. It refuses an invalid name (see
// [CheckName]) or digest, and a name listed twice.
func (s Sums) Marshal() ([]byte, error) {
	sorted := append(Sums(nil), s...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var b bytes.Buffer
	for i, sum := range sorted {
		if err := CheckName(sum.Name); err != nil {
			return nil, fmt.Errorf("checksum for %q: %w; only clean relative names can be listed, rename the file", sum.Name, err)
		}
		if i > 0 && sorted[i-1].Name == sum.Name {
			return nil, fmt.Errorf("checksum for %s given twice; list each file once", sum.Name)
		}
		digest, err := NormalDigest(sum.SHA256)
		if err != nil {
			return nil, fmt.Errorf("checksum for %s: %w", sum.Name, err)
		}
		b.WriteString(digest)
		b.WriteString("  ")
		b.WriteString(sum.Name)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}

// Lookup returns the digest listed for name.
func (s Sums) Lookup(name string) (sha string, ok bool) {
	for _, sum := range s {
		if sum.Name == name {
			return sum.SHA256, true
		}
	}
	return "", false
}

// NormalDigest checks a hex sha256 (either case) and returns it in lower
// case.
func NormalDigest(d string) (string, error) {
	if len(d) != 2*sha256.Size {
		return "", fmt.Errorf("sha256 %q has %d hex digits, want %d", d, len(d), 2*sha256.Size)
	}
	for i := 0; i < len(d); i++ {
		if !isHex(d[i]) {
			return "", fmt.Errorf("sha256 %q is not hex", d)
		}
	}
	return strings.ToLower(d), nil
}

// IsSHA256 reports whether s is a sha256 as mkrelease writes one: exactly
// 64 lower-case hex digits.
func IsSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// CheckName reports why name cannot be listed in a checksum file: it must
// be a slash-separated relative path of valid UTF-8, with no empty, "."
// or ".." element, no leading "/" or Windows drive letter, and no
// backslash or control character. It returns nil for a valid name.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty name")
	}
	if !utf8.ValidString(name) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range name {
		switch {
		case r == '\\':
			return errors.New("contains a backslash")
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("contains control character %U", r)
		}
	}
	if name[0] == '/' {
		return errors.New("absolute path")
	}
	if len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z') {
		return errors.New("starts with a Windows drive letter")
	}
	for elem := range strings.SplitSeq(name, "/") {
		switch elem {
		case "":
			return errors.New("empty path element (doubled or trailing \"/\")")
		case ".":
			return errors.New("\".\" element")
		case "..":
			return errors.New("\"..\" element (path traversal)")
		}
	}
	return nil
}

// Parse reads a checksum file in `sha256sum -c` format, strictly: any
// malformed line is an error giving its number. Sums are returned in file
// order, digests in lower case. Names are not judged beyond the syntax
// (see [Verify]), except that a name may appear only once.
func Parse(data []byte) (Sums, error) {
	if len(data) == 0 {
		return nil, errors.New("no checksum lines (empty file)")
	}
	var out Sums
	first := map[string]int{}
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, fmt.Errorf("line %d: no newline at the end of the file; the file looks truncated, regenerate it", line)
		}
		text := string(data[:i])
		data = data[i+1:]
		sum, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if prev, ok := first[sum.Name]; ok {
			return nil, fmt.Errorf("line %d: %s is listed again (first on line %d); list each file once", line, sum.Name, prev)
		}
		first[sum.Name] = line
		out = append(out, sum)
	}
	return out, nil
}

func parseLine(text string) (Sum, error) {
	const hexLen = 2 * sha256.Size
	switch {
	case text == "":
		return Sum{}, errors.New("empty line")
	case strings.HasSuffix(text, "\r"):
		return Sum{}, errors.New("line ends in a carriage return (CRLF line endings); convert the file to LF line endings")
	case strings.ContainsRune(text, '\r'):
		return Sum{}, errors.New("name contains a carriage return, which mkrelease refuses")
	case strings.ContainsRune(text, 0):
		return Sum{}, errors.New("line contains a NUL byte")
	case text[0] == '\\':
		return Sum{}, errors.New("escaped name (line starts with \"\\\"), which GNU sha256sum writes for names with a backslash, newline or carriage return; mkrelease refuses such names, rename the file")
	case text[0] == '#':
		return Sum{}, errors.New("comment lines are not allowed")
	case strings.HasPrefix(text, "SHA256 (") || strings.HasPrefix(text, "SHA256("):
		return Sum{}, errors.New("BSD-style line (\"SHA256 (name) = digest\"); write the file with sha256sum without --tag")
	}
	n := 0
	for n < len(text) && isHex(text[n]) {
		n++
	}
	switch {
	case n == 0:
		return Sum{}, fmt.Errorf("%q does not start with a sha256 in hex", short(text))
	case n != hexLen:
		return Sum{}, fmt.Errorf("digest has %d hex digits, a sha256 has %d", n, hexLen)
	case len(text) < hexLen+2 || text[hexLen] != ' ' || (text[hexLen+1] != ' ' && text[hexLen+1] != '*'):
		return Sum{}, errors.New("the digest must be followed by two spaces (or a space and \"*\") and the file name")
	case len(text) == hexLen+2:
		return Sum{}, errors.New("no file name after the digest")
	}
	return Sum{Name: text[hexLen+2:], SHA256: strings.ToLower(text[:hexLen])}, nil
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// ReadSums reads and parses the checksum file at path; errors name it.
func ReadSums(path string) (Sums, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read checksums: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// WriteSums writes s to path atomically (mode 0644) in the format of
// [Sums.Marshal].
func WriteSums(path string, s Sums) error {
	data, err := s.Marshal()
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// Bytes returns the sha256 of data in lower-case hex.
func Bytes(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// JSON returns the hex sha256 of v's encoding/json encoding: the one way
// a cache key is made from a document of everything that decides an
// output (encoding/json sorts map keys and keeps struct field order, so
// the encoding is canonical for a given Go type).
func JSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("checksum of %T: %w", v, err)
	}
	return Bytes(b), nil
}

// File returns the sha256 (lower-case hex) and size of the file at path,
// reading it once, in 128 KiB reads.
func File(path string) (sha string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, fmt.Errorf("hash: %w", err)
	}
	defer f.Close()
	testhook.Count(testhook.CountHash, path)
	sha, size, err = hashReader(f, make([]byte, readBufSize), nil)
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	return sha, size, nil
}

// hashReader hashes r, checking stop (when not nil) between reads.
func hashReader(r io.Reader, buf []byte, stop func() error) (string, int64, error) {
	h := sha256.New()
	var n int64
	for {
		if stop != nil {
			if err := stop(); err != nil {
				return "", n, err
			}
		}
		k, err := r.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			return hex.EncodeToString(h.Sum(nil)), n, nil
		}
		if err != nil {
			return "", n, err
		}
	}
}

// CopyFile copies src to dst atomically (a temporary name, synced, then
// renamed) with mode perm, hashing the bytes as they are copied: when they
// do not have digest sha and size (the file changed since it was checked),
// nothing is written and the error names src with both digests. Parent
// folders of dst are created.
func CopyFile(ctx context.Context, src, dst, sha string, size int64, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	out, err := atomicfile.Create(dst, perm)
	if err != nil {
		return err
	}
	defer out.Abort()
	got, n, err := hashReader(io.TeeReader(in, out), make([]byte, readBufSize), ctx.Err)
	if err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if got != sha || n != size {
		return fmt.Errorf("copy %s: it changed while copied: sha256 %s (%d bytes), checked %s (%d bytes)", src, got, n, sha, size)
	}
	return out.Commit()
}
