package artdiff

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxDrained bounds how many remaining entry names are read to classify
// a member list mismatch in a tar stream.
const maxDrained = 1 << 20

// compareGzip compares two gzip streams whose bytes differ: the header
// fields, then the decompressed contents (a tar archive, usually).
func (c *comparer) compareGzip(p []string, depth int, a, b blob, res scanResult) (*Difference, error) {
	ra, rb, err := openBoth(a, b)
	if err != nil {
		return c.fail(p, err)
	}
	defer ra.Close()
	defer rb.Close()
	ga, errA := gzip.NewReader(ra)
	gb, errB := gzip.NewReader(rb)
	if errA != nil || errB != nil {
		return c.failBoth(p, onSide(original, errA), onSide(rebuilt, errB), res)
	}
	ha, hb := ga.Header, gb.Header
	fields := []struct{ name, a, b string }{
		{"Name", shown(ha.Name), shown(hb.Name)},
		{"Comment", shown(ha.Comment), shown(hb.Comment)},
		{"ModTime", optionalTime(ha.ModTime), optionalTime(hb.ModTime)},
		{"OS", strconv.Itoa(int(ha.OS)), strconv.Itoa(int(hb.OS))},
		{"Extra", fmt.Sprintf("%x", ha.Extra), fmt.Sprintf("%x", hb.Extra)},
	}
	for _, f := range fields {
		if f.a != f.b {
			return c.diff(p, "gzip header field "+f.name, fmt.Sprintf("original %s, rebuilt %s", clip(f.a), clip(f.b))), nil
		}
	}
	inner := innerName(a.name)
	innerA := blob{name: inner, size: -1, open: (&liveOpener{live: ga, reopen: gunzipOpener(a)}).open}
	innerB := blob{name: inner, size: -1, open: (&liveOpener{live: gb, reopen: gunzipOpener(b)}).open}
	if d, err := c.compareBlobs(p, depth, innerA, innerB); d != nil || err != nil {
		return d, err
	}
	return c.diff(p, "compressed stream", "uncompressed contents identical; "+byteDetail(res.off, a.size, b.size)), nil
}

// innerName is the name of a gzip stream's content: x.tar for x.tar.gz
// and x.tgz, x for x.gz.
func innerName(name string) string {
	lower := strings.ToLower(name)
	switch {
	case strings.HasSuffix(lower, ".tgz"):
		return name[:len(name)-len(".tgz")] + ".tar"
	case strings.HasSuffix(lower, ".gz"):
		return name[:len(name)-len(".gz")]
	}
	return name
}

// gunzipOpener opens the decompressed content of b.
func gunzipOpener(b blob) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := b.open()
		if err != nil {
			return nil, err
		}
		gz, err := gzip.NewReader(rc)
		if err != nil {
			rc.Close()
			return nil, err
		}
		return readCloser{gz, rc}, nil
	}
}

// tarNext is tar.Reader.Next, tolerating an insecure name (reported
// entry by entry, never extracted).
func tarNext(tr *tar.Reader) (*tar.Header, error) {
	h, err := tr.Next()
	if err != nil && errors.Is(err, tar.ErrInsecurePath) && h != nil {
		err = nil
	}
	return h, err
}

// compareTar compares two tar streams whose bytes differ, entry by entry
// in archive order.
func (c *comparer) compareTar(p []string, depth int, a, b blob, res scanResult) (*Difference, error) {
	ra, rb, err := openBoth(a, b)
	if err != nil {
		return c.fail(p, err)
	}
	defer ra.Close()
	defer rb.Close()
	ta, tb := tar.NewReader(ra), tar.NewReader(rb)
	for i := 0; ; i++ {
		if err := c.ctx.Err(); err != nil {
			return nil, err
		}
		ha, errA := tarNext(ta)
		if errA != nil && errA != io.EOF {
			return c.fail(p, onSide(original, fmt.Errorf("entry %d: %w", i+1, errA)))
		}
		hb, errB := tarNext(tb)
		if errB != nil && errB != io.EOF {
			return c.fail(p, onSide(rebuilt, fmt.Errorf("entry %d: %w", i+1, errB)))
		}
		if ha == nil && hb == nil {
			break
		}
		if ha == nil || hb == nil || ha.Name != hb.Name {
			return c.entryMismatch(p, i, drainNames(ta, ha), drainNames(tb, hb)), nil
		}
		mp := memberPath(p, ha.Name)
		if why := unsafeName(ha.Name); why != "" {
			return c.diff(mp, "unsafe name", why+"; not opened"), nil
		}
		if sparse(ha) || sparse(hb) {
			return c.diff(mp, "sparse entry", fmt.Sprintf("logical sizes %d and %d bytes; not opened", ha.Size, hb.Size)), nil
		}
		if ha.Typeflag != hb.Typeflag {
			return c.diff(mp, "type", fmt.Sprintf("original %s, rebuilt %s", typeString(ha.Typeflag), typeString(hb.Typeflag))), nil
		}
		if ha.Linkname != hb.Linkname {
			return c.diff(mp, "link target", fmt.Sprintf("original %s, rebuilt %s", shown(ha.Linkname), shown(hb.Linkname))), nil
		}
		ba := blob{name: path.Base(ha.Name), size: ha.Size, open: (&liveOpener{live: ta, reopen: tarEntryOpener(a, i, ha.Name)}).open}
		bb := blob{name: path.Base(hb.Name), size: hb.Size, open: (&liveOpener{live: tb, reopen: tarEntryOpener(b, i, hb.Name)}).open}
		if d, err := c.compareBlobs(mp, depth+1, ba, bb); d != nil || err != nil {
			return d, err
		}
		if d := c.compareTarHeaders(mp, ha, hb); d != nil {
			return d, nil
		}
	}
	return c.diff(p, "archive structure", fmt.Sprintf("entries, contents and headers are identical; first difference at byte %d of the tar stream", res.off)), nil
}

// sparse reports whether h is a sparse file, whose holes can make a few
// bytes of archive expand to exabytes.
func sparse(h *tar.Header) bool {
	if h.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// compareTarHeaders compares the metadata of two entries of the same name,
// type and content.
func (c *comparer) compareTarHeaders(mp []string, ha, hb *tar.Header) *Difference {
	if ha.Mode != hb.Mode {
		return c.diff(mp, "mode", fmt.Sprintf("original %04o, rebuilt %04o", ha.Mode, hb.Mode))
	}
	if ha.Uid != hb.Uid || ha.Gid != hb.Gid || ha.Uname != hb.Uname || ha.Gname != hb.Gname {
		return c.diff(mp, "owner", fmt.Sprintf("original %s, rebuilt %s", ownerString(ha), ownerString(hb)))
	}
	if !ha.ModTime.Equal(hb.ModTime) {
		return c.diff(mp, "mtime", fmt.Sprintf("original %s, rebuilt %s", timeString(ha.ModTime), timeString(hb.ModTime)))
	}
	fields := []struct{ name, a, b string }{
		{"AccessTime", optionalTime(ha.AccessTime), optionalTime(hb.AccessTime)},
		{"ChangeTime", optionalTime(ha.ChangeTime), optionalTime(hb.ChangeTime)},
		{"Devmajor", strconv.FormatInt(ha.Devmajor, 10), strconv.FormatInt(hb.Devmajor, 10)},
		{"Devminor", strconv.FormatInt(ha.Devminor, 10), strconv.FormatInt(hb.Devminor, 10)},
		{"Size", strconv.FormatInt(ha.Size, 10), strconv.FormatInt(hb.Size, 10)},
	}
	for _, f := range fields {
		if f.a != f.b {
			return c.diff(mp, "header field "+f.name, fmt.Sprintf("original %s, rebuilt %s", f.a, f.b))
		}
	}
	keys := slices.Sorted(maps.Keys(ha.PAXRecords))
	for k := range maps.Keys(hb.PAXRecords) {
		if _, ok := ha.PAXRecords[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, okA := ha.PAXRecords[k]
		vb, okB := hb.PAXRecords[k]
		if va != vb || okA != okB {
			return c.diff(mp, "header field PAX "+printable(k), fmt.Sprintf("original %s, rebuilt %s", paxString(va, okA), paxString(vb, okB)))
		}
	}
	if ha.Format != hb.Format {
		return c.diff(mp, "header field Format", fmt.Sprintf("original %v, rebuilt %v", ha.Format, hb.Format))
	}
	return nil
}

// optionalTime shows a time that may be unset.
func optionalTime(t time.Time) string {
	if t.IsZero() {
		return "unset"
	}
	return timeString(t)
}

func paxString(v string, ok bool) string {
	if !ok {
		return "absent"
	}
	return shown(v)
}

// ownerString shows uid:gid, then uname:gname when either is set.
func ownerString(h *tar.Header) string {
	s := fmt.Sprintf("%d:%d", h.Uid, h.Gid)
	if h.Uname != "" || h.Gname != "" {
		s += " " + printable(h.Uname) + ":" + printable(h.Gname)
	}
	return s
}

func typeString(t byte) string {
	names := map[byte]string{
		tar.TypeReg: "regular file", tar.TypeLink: "hard link", tar.TypeSymlink: "symlink",
		tar.TypeChar: "character device", tar.TypeBlock: "block device", tar.TypeDir: "directory",
		tar.TypeFifo: "FIFO", tar.TypeCont: "contiguous file", tar.TypeGNUSparse: "sparse file",
	}
	if n, ok := names[t]; ok {
		return n
	}
	return fmt.Sprintf("type %q", t)
}

// drainNames returns the name of first (when not nil) and of every entry
// after it, up to maxDrained; a read failure ends the list.
func drainNames(tr *tar.Reader, first *tar.Header) []string {
	var names []string
	if first == nil {
		return names
	}
	names = append(names, first.Name)
	for len(names) < maxDrained {
		h, err := tarNext(tr)
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}

// tarEntryOpener reopens entry idx (0-based), called name, of the tar
// stream b.
func tarEntryOpener(b blob, idx int, name string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		rc, err := b.open()
		if err != nil {
			return nil, err
		}
		tr := tar.NewReader(rc)
		var h *tar.Header
		for range idx + 1 {
			if h, err = tarNext(tr); err != nil {
				rc.Close()
				return nil, shortRead(err)
			}
		}
		if h.Name != name {
			rc.Close()
			return nil, fmt.Errorf("entry %d is %s on a second reading, not %s", idx+1, shown(h.Name), shown(name))
		}
		return readCloser{tr, rc}, nil
	}
}
