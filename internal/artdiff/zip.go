package artdiff

import (
	"archive/zip"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
)

// ambiguousError is a zip archive that the structure audit refuses
// (package zipaudit): readers would not agree on what it holds, so what
// archive/zip shows of it is not a fair account of the archive.
type ambiguousError struct {
	side side
	err  error
	// corrupt is set when the first problem is broken structure rather
	// than a well-formed ambiguity.
	corrupt bool
}

func (e *ambiguousError) Error() string { return e.side.String() + ": " + e.err.Error() }

// openZip audits b's zip structure and opens it as a zip archive; release
// frees what it holds. An archive that archive/zip opens but the audit
// refuses is an *ambiguousError.
func (c *comparer) openZip(b blob, s side) (z *zip.Reader, release func(), err error) {
	ra, size, release, err := c.readerAt(b)
	if err != nil {
		return nil, nil, onSide(s, err)
	}
	rep, err := zipaudit.Audit(ra, size)
	if err != nil {
		release()
		return nil, nil, onSide(s, err)
	}
	z, err = zip.NewReader(ra, size)
	if err != nil && !(errors.Is(err, zip.ErrInsecurePath) && z != nil) {
		// An insecure name is reported member by member, not here.
		release()
		return nil, nil, onSide(s, err)
	}
	if err := rep.Err(); err != nil {
		// archive/zip opens it, but the audit refuses it: broken
		// structure archive/zip does not look at (a local header), or
		// well-formed bytes that other readers read otherwise.
		release()
		return nil, nil, &ambiguousError{side: s, err: err, corrupt: rep.Problems[0].Corrupt}
	}
	return z, release, nil
}

// compareZip compares two zip archives whose bytes differ. When either
// side fails the structure audit, that is the difference: "ambiguous
// archive" (or "unreadable" for broken structure), naming the side, the
// member and the offset.
func (c *comparer) compareZip(p []string, depth int, a, b blob, res scanResult) (*Difference, error) {
	za, releaseA, errA := c.openZip(a, original)
	if releaseA != nil {
		defer releaseA()
	}
	zb, releaseB, errB := c.openZip(b, rebuilt)
	if releaseB != nil {
		defer releaseB()
	}
	if d := c.ambiguous(p, errA, errB); d != nil {
		return d, nil
	}
	if errA != nil || errB != nil {
		return c.failBoth(p, errA, errB, res)
	}
	fa, fb := za.File, zb.File
	for i := range max(len(fa), len(fb)) {
		if err := c.ctx.Err(); err != nil {
			return nil, err
		}
		if i >= len(fa) || i >= len(fb) || fa[i].Name != fb[i].Name {
			return c.entryMismatch(p, i, zipNames(fa[min(i, len(fa)):]), zipNames(fb[min(i, len(fb)):])), nil
		}
		if d, err := c.compareZipMember(memberPath(p, fa[i].Name), depth, fa[i], fb[i]); d != nil || err != nil {
			return d, err
		}
	}
	if za.Comment != zb.Comment {
		return c.diff(p, "archive comment", fmt.Sprintf("original %s, rebuilt %s", shown(za.Comment), shown(zb.Comment))), nil
	}
	return c.diff(p, "archive structure", fmt.Sprintf("members, contents and metadata are identical; first difference at byte %d, in the %s",
		res.off, zipRegion(za, res.off))), nil
}

// ambiguous reports the audit's refusal of one or both sides (errA, errB
// from openZip), or nil when neither is an *ambiguousError. The refusal of
// a side wins over the other side's failure to open: it says why the
// archive cannot be trusted, whatever the other side holds.
func (c *comparer) ambiguous(p []string, errA, errB error) *Difference {
	var parts []string
	what := "unreadable"
	for _, err := range []error{errA, errB} {
		var ae *ambiguousError
		if errors.As(err, &ae) {
			parts = append(parts, ae.side.String()+": zip structure: "+ae.err.Error())
			if !ae.corrupt {
				what = "ambiguous archive"
			}
		}
	}
	if len(parts) == 0 {
		return nil
	}
	detail := strings.Join(parts, "; ")
	if what == "ambiguous archive" {
		detail += "; zip readers would not agree on what the archive holds"
	}
	return c.diff(p, what, detail)
}

func zipNames(files []*zip.File) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return names
}

// zipBlob is the decompressed content of a zip member.
func zipBlob(f *zip.File) blob {
	return blob{
		name: path.Base(f.Name),
		size: int64(f.UncompressedSize64),
		open: f.Open,
	}
}

// compareZipMember compares two members of the same name, at member path
// mp: content (skipped when the compressed bytes are identical), then
// metadata, then the compressed bytes.
func (c *comparer) compareZipMember(mp []string, depth int, f, g *zip.File) (*Difference, error) {
	if why := unsafeName(f.Name); why != "" {
		return c.diff(mp, "unsafe name", why+"; not opened"), nil
	}
	var raw *scanResult
	if f.Method == g.Method && f.CompressedSize64 == g.CompressedSize64 {
		res, err := c.scan(rawBlob(f), rawBlob(g))
		if err != nil {
			return c.fail(mp, err)
		}
		raw = &res
	}
	if raw == nil || !raw.equal {
		// Same method and same compressed bytes mean the same content;
		// otherwise decompress and compare.
		if d, err := c.compareBlobs(mp, depth+1, zipBlob(f), zipBlob(g)); d != nil || err != nil {
			return d, err
		}
	}
	if f.Mode() != g.Mode() {
		return c.diff(mp, "mode", fmt.Sprintf("original %s, rebuilt %s", modeString(f.Mode()), modeString(g.Mode()))), nil
	}
	if !f.Modified.Equal(g.Modified) {
		return c.diff(mp, "mtime", fmt.Sprintf("original %s, rebuilt %s", timeString(f.Modified), timeString(g.Modified))), nil
	}
	if f.ModifiedDate != g.ModifiedDate || f.ModifiedTime != g.ModifiedTime {
		return c.diff(mp, "mtime", fmt.Sprintf("MS-DOS date and time: original %#04x %#04x, rebuilt %#04x %#04x",
			f.ModifiedDate, f.ModifiedTime, g.ModifiedDate, g.ModifiedTime)), nil
	}
	if f.Method != g.Method {
		return c.diff(mp, "compression method", fmt.Sprintf("original %s, rebuilt %s", methodString(f.Method), methodString(g.Method))), nil
	}
	fields := []struct{ name, a, b string }{
		{"ExternalAttrs", fmt.Sprintf("%#x", f.ExternalAttrs), fmt.Sprintf("%#x", g.ExternalAttrs)},
		{"Flags", fmt.Sprintf("%#x", f.Flags), fmt.Sprintf("%#x", g.Flags)},
		{"CreatorVersion", fmt.Sprintf("%#x", f.CreatorVersion), fmt.Sprintf("%#x", g.CreatorVersion)},
		{"ReaderVersion", fmt.Sprintf("%#x", f.ReaderVersion), fmt.Sprintf("%#x", g.ReaderVersion)},
		{"CRC32", fmt.Sprintf("%#08x", f.CRC32), fmt.Sprintf("%#08x", g.CRC32)},
		{"UncompressedSize", strconv.FormatUint(f.UncompressedSize64, 10), strconv.FormatUint(g.UncompressedSize64, 10)},
		{"Extra", fmt.Sprintf("%x", f.Extra), fmt.Sprintf("%x", g.Extra)},
		{"Comment", shown(f.Comment), shown(g.Comment)},
		{"NonUTF8", strconv.FormatBool(f.NonUTF8), strconv.FormatBool(g.NonUTF8)},
	}
	for _, fl := range fields {
		if fl.a != fl.b {
			return c.diff(mp, "header field "+fl.name, fmt.Sprintf("original %s, rebuilt %s", clip(fl.a), clip(fl.b))), nil
		}
	}
	switch {
	case raw == nil:
		return c.diff(mp, "compressed data", fmt.Sprintf("same content; compressed sizes %d and %d bytes", f.CompressedSize64, g.CompressedSize64)), nil
	case !raw.equal:
		return c.diff(mp, "compressed data", fmt.Sprintf("same content; compressed bytes differ from byte %d of %d", raw.off, f.CompressedSize64)), nil
	}
	return nil, nil
}

// rawBlob is the compressed content of a zip member, as stored.
func rawBlob(f *zip.File) blob {
	return blob{
		name: path.Base(f.Name),
		size: int64(f.CompressedSize64),
		open: func() (io.ReadCloser, error) {
			r, err := f.OpenRaw()
			if err != nil {
				return nil, err
			}
			return io.NopCloser(r), nil
		},
	}
}

// zipRegion names the part of a zip archive that holds byte off.
func zipRegion(z *zip.Reader, off int64) string {
	type span struct {
		start, end int64
		name       string
	}
	var spans []span
	for _, f := range z.File {
		start, err := f.DataOffset()
		if err != nil {
			continue
		}
		spans = append(spans, span{start, start + int64(f.CompressedSize64), f.Name})
	}
	slices.SortStableFunc(spans, func(x, y span) int { return cmp.Compare(x.start, y.start) })
	for _, s := range spans {
		if off < s.start {
			return "local header of " + shown(s.name)
		}
		if off < s.end {
			return "compressed data of " + shown(s.name)
		}
	}
	return "central directory or end record"
}

// modeString shows a mode in octal and symbolically.
func modeString(m fs.FileMode) string {
	octal := uint32(m.Perm())
	for bit, v := range map[fs.FileMode]uint32{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if m&bit != 0 {
			octal |= v
		}
	}
	return fmt.Sprintf("%04o %s", octal, m)
}

func timeString(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

func methodString(m uint16) string {
	names := map[uint16]string{zip.Store: "store", zip.Deflate: "deflate", 12: "bzip2", 14: "lzma", 93: "zstd", 95: "xz"}
	if n, ok := names[m]; ok {
		return n
	}
	return "method " + strconv.Itoa(int(m))
}

// clip shortens a shown value to about maxShown bytes.
func clip(s string) string {
	if len(s) <= 2*maxShown {
		return s
	}
	return s[:2*maxShown] + "…"
}
