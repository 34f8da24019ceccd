package extract

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

const (
	blockSize = 512
	// maxMetaBytes bounds the content of a PAX or GNU meta header, as
	// archive/tar does (it refuses larger ones).
	maxMetaBytes = 1 << 20
	// ustarMaxSize is the largest size the 11-digit octal field holds.
	ustarMaxSize = 1<<33 - 1
)

// errTarAudit stops archive/tar once the audit has refused the archive;
// the refusal itself is in tarAudit.v.
var errTarAudit = errors.New("tar archive refused")

// globalKeyAllowed reports the PAX global header keys that change nothing an
// extraction writes, whoever reads them (times and owners are not kept;
// "comment" is what git archive writes, the commit id). Any other key in a
// global header is refused: readers apply global headers differently
// (GNU tar to every later entry, Python's tarfile only to entries with
// their own extended header, archive/tar to none), so a global path,
// linkpath or size would give different archives.
func globalKeyAllowed(key string) bool {
	switch key {
	case "comment", "mtime", "atime", "ctime", "uid", "gid", "uname", "gname", "charset":
		return true
	}
	return false
}

// tarAudit reads a tar stream on its way to archive/tar and frames it the
// same way, block by block, to see what archive/tar hides from its caller
// (PAX and GNU meta headers, the ustar name behind a PAX path) and refuse
// what readers disagree on:
//
//   - a PAX global header ('g') with any key but comment, times, owners
//     and charset (see globalKeyAllowed);
//   - two extended headers of one kind (two PAX 'x', two GNU long names
//     'L', two GNU long link names 'K') before one entry: archive/tar lets
//     the last win, Python's tarfile the first;
//   - both a PAX path and a GNU long name (or linkpath and long link name)
//     for one entry: readers give either precedence;
//   - a meta header followed by a global header or by the end of the
//     archive instead of its entry;
//   - a GNU long name or link name of which the entry's own ustar field is
//     not a prefix (GNU tar, Python and archive/tar all write the first
//     100 bytes there), so readers that ignore 'L' would write elsewhere;
//   - a PAX path (or linkpath) that is ASCII and fits the ustar field but
//     differs from it, or a ustar name behind a longer PAX path that is
//     itself unsafe (absolute, "..", NUL, backslash), since readers that
//     ignore PAX records use it;
//   - a PAX size that differs from the ustar size field although it fits
//     in it (readers that ignore PAX would frame the rest of the archive
//     differently);
//   - a hard link, symlink, device, directory or FIFO whose header
//     declares data: archive/tar and Python's tarfile read the next header
//     right after it, GNU tar skips the data first;
//   - a sparse file (GNU 'S', or PAX GNU.sparse records): readers that do
//     not support the format extract its sparse map as data.
//
// When archive/tar hands an entry to the walk, the audit checks that it
// framed the stream the same way (the entry header ends where archive/tar
// stopped reading, with the same name), so no disagreement between the
// two goes unnoticed.
type tarAudit struct {
	r   io.Reader
	pos int64 // offset in the tar stream of the next byte

	blk  [blockSize]byte
	nblk int

	skip int64 // data and padding bytes before the next header

	inMeta   bool
	meta     []byte // content of the meta header being read
	metaLeft int64  // content bytes still to read
	metaPad  int64  // padding after it
	metaType byte
	metaOff  int64

	pend  tarPending
	zeros int
	done  bool // end of archive, or a header archive/tar will refuse itself

	// v is the first refusal, for the entry named vName (or the archive);
	// once set, every Read fails.
	v     *violation
	vName string

	// The last entry header: where it started and ended, and the name
	// archive/tar gives it.
	lastStart, lastEnd int64
	lastName           string
	entries            int
}

// tarPending is what the meta headers since the last entry said.
type tarPending struct {
	pax, longName, longLink     bool
	paxOff, longOff, linkOff    int64
	path, linkpath, size        string
	hasPath, hasLink, hasSize   bool
	longNameValue, longLinkName string
}

func (p *tarPending) any() bool { return p.pax || p.longName || p.longLink }

// firstOff is the offset of the first pending meta header.
func (p *tarPending) firstOff() int64 {
	off := int64(-1)
	for _, o := range []struct {
		ok  bool
		off int64
	}{{p.pax, p.paxOff}, {p.longName, p.longOff}, {p.longLink, p.linkOff}} {
		if o.ok && (off < 0 || o.off < off) {
			off = o.off
		}
	}
	return off
}

func (a *tarAudit) Read(p []byte) (int, error) {
	if a.v != nil {
		return 0, errTarAudit
	}
	n, err := a.r.Read(p)
	a.feed(p[:n])
	if a.v != nil {
		return n, errTarAudit
	}
	return n, err
}

// refuse records the first refusal, at offset off in the tar stream.
func (a *tarAudit) refuse(name string, off int64, reason error, format string, args ...any) {
	if a.v != nil {
		return
	}
	v := refusal(reason, format, args...)
	v.offset, v.hasOffset = off, true
	a.v, a.vName = v, name
}

func (a *tarAudit) feed(p []byte) {
	for len(p) > 0 && a.v == nil && !a.done {
		switch {
		case a.skip > 0:
			n := min(int64(len(p)), a.skip)
			a.skip -= n
			a.pos += n
			p = p[n:]
		case a.inMeta && a.metaLeft > 0:
			n := min(int64(len(p)), a.metaLeft)
			a.meta = append(a.meta, p[:n]...)
			a.metaLeft -= n
			a.pos += n
			p = p[n:]
		case a.inMeta && a.metaPad > 0:
			n := min(int64(len(p)), a.metaPad)
			a.metaPad -= n
			a.pos += n
			p = p[n:]
		case a.inMeta:
			a.endMeta()
		default:
			n := copy(a.blk[a.nblk:], p)
			a.nblk += n
			a.pos += int64(n)
			p = p[n:]
			if a.nblk == blockSize {
				a.nblk = 0
				a.header()
			}
		}
	}
	if a.inMeta && a.metaLeft == 0 && a.metaPad == 0 && a.v == nil {
		a.endMeta()
	}
}

// tarParseString is archive/tar's parseString: up to the first NUL.
func tarParseString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return string(b[:i])
	}
	return string(b)
}

// tarParseNumeric is archive/tar's parseNumeric: base-256 when the high
// bit is set, else octal padded with spaces and NULs.
func tarParseNumeric(b []byte) (int64, bool) {
	if len(b) > 0 && b[0]&0x80 != 0 {
		var inv byte
		if b[0]&0x40 != 0 {
			inv = 0xff
		}
		var x uint64
		for i, c := range b {
			c ^= inv
			if i == 0 {
				c &= 0x7f
			}
			if x>>56 > 0 {
				return 0, false
			}
			x = x<<8 | uint64(c)
		}
		if x>>63 > 0 {
			return 0, false
		}
		if inv == 0xff {
			return ^int64(x), true
		}
		return int64(x), true
	}
	b = bytes.Trim(b, " \x00")
	if len(b) == 0 {
		return 0, true
	}
	x, err := strconv.ParseUint(tarParseString(b), 8, 64)
	return int64(x), err == nil
}

// header handles one complete header block.
func (a *tarAudit) header() {
	start := a.pos - blockSize
	if a.blk == [blockSize]byte{} {
		a.zeros++
		if a.pend.any() {
			a.refuse("", a.pend.firstOff(), ErrAmbiguous, "a PAX or GNU extended header is followed by the end of the archive, not by the entry it describes")
			return
		}
		if a.zeros == 2 {
			a.done = true
		}
		return
	}
	if a.zeros > 0 {
		a.done = true // archive/tar refuses a header after a zero block
		return
	}
	b := a.blk[:]
	typ := b[156]
	size, ok := tarParseNumeric(b[124:136])
	if !ok || size < 0 {
		a.done = true // archive/tar refuses it
		return
	}
	name := tarParseString(b[0:100])
	link := tarParseString(b[157:257])
	magic, trailer := string(b[257:263]), string(b[508:512])
	switch {
	case magic == "ustar\x00" && trailer == "tar\x00": // star
		if prefix := tarParseString(b[345:476]); prefix != "" {
			name = prefix + "/" + name
		}
	case magic == "ustar\x00": // ustar, PAX
		if prefix := tarParseString(b[345:500]); prefix != "" {
			name = prefix + "/" + name
		}
	}
	switch typ {
	case 'x', 'g', 'L', 'K':
		if size > maxMetaBytes {
			a.done = true // archive/tar refuses it
			return
		}
		switch {
		case typ == 'g' && a.pend.any():
			a.refuse("", start, ErrAmbiguous, "a PAX global header comes between an extended header and its entry; readers disagree on which records apply")
			return
		case typ == 'x' && a.pend.pax:
			a.refuse("", start, ErrAmbiguous, "two PAX extended headers (at offsets %d and %d) before one entry: archive/tar lets the later one win, Python's tarfile the earlier", a.pend.paxOff, start)
			return
		case typ == 'L' && a.pend.longName:
			a.refuse("", start, ErrAmbiguous, "two GNU long name headers (at offsets %d and %d) before one entry: readers keep one or the other", a.pend.longOff, start)
			return
		case typ == 'K' && a.pend.longLink:
			a.refuse("", start, ErrAmbiguous, "two GNU long link name headers (at offsets %d and %d) before one entry: readers keep one or the other", a.pend.linkOff, start)
			return
		}
		a.inMeta, a.meta, a.metaType, a.metaOff = true, a.meta[:0], typ, start
		a.metaLeft, a.metaPad = size, (blockSize-size%blockSize)%blockSize
		return
	case 'S':
		a.refuse(name, start, ErrAmbiguous, "a GNU sparse file: readers that do not support the format extract its sparse map as data; repack the archive without sparse files (tar --format=pax without --sparse)")
		return
	}
	a.entry(start, typ, name, link, size)
}

// endMeta handles the complete content of a meta header.
func (a *tarAudit) endMeta() {
	a.inMeta = false
	off, content := a.metaOff, a.meta
	switch a.metaType {
	case 'L':
		a.pend.longName, a.pend.longOff, a.pend.longNameValue = true, off, tarParseString(content)
	case 'K':
		a.pend.longLink, a.pend.linkOff, a.pend.longLinkName = true, off, tarParseString(content)
	case 'x', 'g':
		recs, ok := parsePAXRecords(content)
		if !ok {
			a.done = true // archive/tar refuses it
			return
		}
		for _, r := range recs {
			if strings.HasPrefix(r[0], "GNU.sparse.") {
				a.refuse("", off, ErrAmbiguous, "a PAX header with %s records describes a sparse file: readers that do not support the format extract its sparse map as data; repack the archive without sparse files", r[0])
				return
			}
		}
		if a.metaType == 'g' {
			for _, r := range recs {
				if !globalKeyAllowed(r[0]) {
					a.refuse("", off, ErrAmbiguous, "a PAX global header sets %q=%q: GNU tar applies it to every later entry, Python's tarfile only to some, archive/tar to none; repack the archive without global headers", r[0], r[1])
					return
				}
			}
			return
		}
		a.pend.pax, a.pend.paxOff = true, off
		for _, r := range recs {
			switch r[0] {
			case "path":
				a.pend.path, a.pend.hasPath = r[1], true
			case "linkpath":
				a.pend.linkpath, a.pend.hasLink = r[1], true
			case "size":
				a.pend.size, a.pend.hasSize = r[1], true
			}
		}
	}
}

// parsePAXRecords parses "LEN KEY=VALUE\n" records as archive/tar does; it
// reports false where archive/tar would refuse the header.
func parsePAXRecords(b []byte) ([][2]string, bool) {
	s := string(b)
	var recs [][2]string
	for len(s) > 0 {
		nStr, rest, ok := strings.Cut(s, " ")
		if !ok {
			return nil, false
		}
		n, err := strconv.ParseInt(nStr, 10, 0)
		if err != nil || n < 5 || n > int64(len(s)) {
			return nil, false
		}
		n -= int64(len(nStr) + 1)
		if n <= 0 {
			return nil, false
		}
		rec, nl, rem := rest[:n-1], rest[n-1:n], rest[n:]
		if nl != "\n" {
			return nil, false
		}
		k, v, ok := strings.Cut(rec, "=")
		if !ok {
			return nil, false
		}
		recs = append(recs, [2]string{k, v})
		s = rem
	}
	return recs, true
}

// entry handles the header of an entry (not a meta header) at start.
func (a *tarAudit) entry(start int64, typ byte, ustarName, ustarLink string, size int64) {
	p := a.pend
	a.pend = tarPending{}
	name := ustarName
	if p.hasPath {
		name = p.path
	}
	if p.longName {
		name = p.longNameValue // archive/tar's precedence; both at once are refused
	}
	switch {
	case p.hasPath && p.longName:
		a.refuse(name, start, ErrAmbiguous, "both a PAX path %q and a GNU long name %q: archive/tar uses the long name, GNU tar the PAX path", p.path, p.longNameValue)
	case p.hasLink && p.longLink:
		a.refuse(name, start, ErrAmbiguous, "both a PAX linkpath %q and a GNU long link name %q: readers give either precedence", p.linkpath, p.longLinkName)
	case p.longName && !strings.HasPrefix(p.longNameValue, ustarName):
		a.refuse(name, start, ErrAmbiguous, "the GNU long name is %q but the header's own name field is %q, not its beginning: readers that ignore long names would write %q", p.longNameValue, ustarName, ustarName)
	case p.longLink && !strings.HasPrefix(p.longLinkName, ustarLink):
		a.refuse(name, start, ErrAmbiguous, "the GNU long link name is %q but the header's own link field is %q, not its beginning", p.longLinkName, ustarLink)
	case p.hasPath && p.path != ustarName && fitsUSTAR(p.path, 100):
		a.refuse(name, start, ErrAmbiguous, "the PAX path is %q but the ustar name is %q, although the path fits there: readers that ignore PAX records would write %q", p.path, ustarName, ustarName)
	case p.hasPath && ustarName != "" && unsafeName(ustarName):
		a.refuse(name, start, ErrAmbiguous, "the ustar name %q behind the PAX path %q is unsafe, and readers that ignore PAX records use it", ustarName, p.path)
	case p.hasLink && p.linkpath != ustarLink && fitsUSTAR(p.linkpath, 100):
		a.refuse(name, start, ErrAmbiguous, "the PAX linkpath is %q but the ustar link name is %q, although the linkpath fits there", p.linkpath, ustarLink)
	case p.hasLink && ustarLink != "" && unsafeName(ustarLink):
		a.refuse(name, start, ErrAmbiguous, "the ustar link name %q behind the PAX linkpath %q is unsafe, and readers that ignore PAX records use it", ustarLink, p.linkpath)
	}
	if a.v != nil {
		return
	}
	if p.hasSize {
		n, err := strconv.ParseInt(p.size, 10, 64)
		if err != nil || n < 0 {
			a.done = true // archive/tar refuses it
			return
		}
		if n != size && n <= ustarMaxSize {
			a.refuse(name, start, ErrAmbiguous, "the PAX size is %d but the ustar size field says %d: readers that ignore PAX records would read the rest of the archive differently", n, size)
			return
		}
		size = n
	}
	if typ == 0 && strings.HasSuffix(name, "/") {
		typ = '5' // archive/tar: legacy directories
	}
	if headerOnly(typ) && size != 0 {
		a.refuse(name, start, ErrAmbiguous, "a %s whose header declares %d bytes of data: archive/tar and Python's tarfile read the next header right after it, GNU tar skips the data first, so they see different entries", tarTypeName(typ), size)
		return
	}
	if !headerOnly(typ) {
		a.skip = size + (blockSize-size%blockSize)%blockSize
	}
	a.lastStart, a.lastEnd, a.lastName = start, start+blockSize, name
	a.entries++
}

// headerOnly reports whether archive/tar reads no data for the type.
func headerOnly(typ byte) bool {
	switch typ {
	case '1', '2', '3', '4', '5', '6':
		return true
	}
	return false
}

func tarTypeName(typ byte) string {
	switch typ {
	case '1':
		return "hard link"
	case '2':
		return "symlink"
	case '3':
		return "character device"
	case '4':
		return "block device"
	case '5':
		return "directory"
	case '6':
		return "FIFO"
	}
	return fmt.Sprintf("entry of type %q", typ)
}

// fitsUSTAR reports whether s is ASCII and at most n bytes: a writer has
// no reason to put it in a PAX record rather than in the ustar field.
func fitsUSTAR(s string, n int) bool {
	if len(s) > n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// unsafeName reports whether a name breaks the name rules in a way that
// could write outside the root: absolute, "..", NUL or backslash.
func unsafeName(name string) bool {
	_, v := cleanName(name)
	return v != nil && v.reason != ErrInvalidName || strings.ContainsAny(name, "\x00\\")
}

// check is called for each entry archive/tar hands to the walk: it
// returns the audit's refusal if there is one, and checks that the audit
// framed the stream as archive/tar did.
func (a *tarAudit) check(name string) *violation {
	if a.v != nil {
		return a.v
	}
	if a.lastEnd != a.pos || a.lastName != name {
		v := refusal(ErrCorrupt, "archive/tar and the audit of the tar stream disagree on where this entry is (header at offset %d, %q, read up to %d); refusing what cannot be checked", a.lastStart, a.lastName, a.pos)
		v.offset, v.hasOffset = a.lastStart, true
		return v
	}
	return nil
}
