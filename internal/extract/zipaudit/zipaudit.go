// Package zipaudit reads the structure of a zip archive record by record
// (the end of central directory record, the zip64 end records, every
// central directory header, every local file header and data descriptor)
// and reports each place where two conforming readers could see different
// archives.
//
// Readers disagree because a zip says most things twice. Go's archive/zip
// and Python's zipfile (pip) read the central directory at the end;
// streaming readers (Java's ZipInputStream, bsdtar reading a pipe) read the
// local headers from the start; Info-ZIP unzip and 7-Zip honour extra
// fields the others ignore; and each looks for the end record in its own
// way. An archive is unambiguous here when every view gives the same
// entries with the same names, sizes and bytes:
//
//   - the end of central directory record is the last one in the file
//     (where every reader looks), its comment reaches exactly to the end
//     of the file and holds no zip record signature, and nothing follows
//     it; it describes one disk;
//   - a zip64 end record, when its locator is present, agrees with every
//     end record field that is not a 0xFFFF or 0xFFFFFFFF marker (Python
//     uses the zip64 record whenever the locator is there, Go only when a
//     field is a marker), and ends where the locator begins;
//   - the central directory ends exactly where the (zip64) end record
//     begins, at the offset the end record gives: no bytes were prepended
//     to the archive (a self-extractor stub, or another file), which
//     readers that correct offsets and readers that do not would read
//     differently; it holds exactly as many headers as the end record
//     says, and nothing else;
//   - every local header is where its central directory header says,
//     with the same name bytes, flags and method, and the same CRC-32 and
//     sizes (or, with a data descriptor, zeros there and the same values in
//     the descriptor); a stored entry's sizes are equal;
//   - extra fields are well formed, there is at most one zip64 field per
//     header, and an Info-ZIP Unicode Path field (0x7075), which Info-ZIP
//     and 7-Zip use instead of the name, gives the same name;
//   - a name with bytes outside ASCII has the UTF-8 flag (bit 11), which
//     Python needs to decode it as UTF-8 rather than as code page 437, and
//     a name with the flag is valid UTF-8;
//   - the entries' byte ranges (local header, data, data descriptor) tile
//     the file from offset 0 to the central directory: no two overlap
//     (the "overlapping files" decompression bomb, or two names for one
//     content), and no byte between them belongs to no entry (where a
//     streaming reader would find other entries).
//
// The audit reads the central directory and the local headers, never the
// member data: its cost is one small read per entry. Memory is bounded by
// the central directory's size, as in archive/zip.
package zipaudit

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Record lengths and signatures (APPNOTE.TXT 6.3.10, section 4.3).
const (
	localLen       = 30
	centralLen     = 46
	endLen         = 22
	end64LocLen    = 20
	end64Len       = 56
	descriptorSig  = 0x08074b50
	localSig       = 0x04034b50
	centralSig     = 0x02014b50
	endSig         = 0x06054b50
	end64Sig       = 0x06064b50
	end64LocSig    = 0x07064b50
	zip64ExtraID   = 0x0001
	unicodePathID  = 0x7075
	flagEncrypted  = 0x0001
	flagDescriptor = 0x0008
	flagUTF8       = 0x0800
	methodStore    = 0
	u16max         = 0xffff
	u32max         = 0xffffffff
	// endSearch is how far from the end archive/zip looks for the end
	// record (65 KiB: the longest comment and the record itself fit).
	endSearch = 65 * 1024
	// maxProblems bounds the report; past it the audit stops.
	maxProblems = 100
)

// signatures are the record signatures a comment must not hold: a reader
// searching for one of them could take the comment for a record.
func signatures() []string {
	return []string{"PK\x01\x02", "PK\x03\x04", "PK\x05\x06", "PK\x06\x06", "PK\x06\x07", "PK\x07\x08"}
}

// Problem is one place where readers could disagree about the archive, or
// where its structure is broken.
type Problem struct {
	// Member is the central directory name of the entry concerned, or ""
	// when the problem concerns the archive as a whole.
	Member string
	// Offset is the byte offset in the archive of the record or byte range
	// at fault.
	Offset int64
	// Corrupt is true when the structure is broken (truncated, a record
	// missing its signature) rather than well formed but ambiguous.
	Corrupt bool
	// Msg says what is wrong and how other readers would read it.
	Msg string
}

// String renders the problem as "member: at offset N: msg".
func (p Problem) String() string {
	if p.Member == "" {
		return fmt.Sprintf("at offset %d: %s", p.Offset, p.Msg)
	}
	return fmt.Sprintf("%q: at offset %d: %s", p.Member, p.Offset, p.Msg)
}

// Entry is one central directory header, as read.
type Entry struct {
	// Name is the name as stored in the central directory (raw bytes).
	Name string
	// CentralOffset is the offset of the entry's central directory header.
	CentralOffset int64
	// HeaderOffset is the offset of the entry's local header, as the
	// central directory gives it.
	HeaderOffset int64
	// DataOffset is the offset of the entry's data, after the local header
	// (-1 when the local header could not be read).
	DataOffset int64
	// End is the offset just past the entry's data and data descriptor
	// (-1 when unknown).
	End int64
	// Method, Flags, CRC32, CompressedSize and UncompressedSize are the
	// central directory's values (zip64 values where present).
	Method, Flags                    uint16
	CRC32                            uint32
	CompressedSize, UncompressedSize uint64
}

// Report is the outcome of an audit.
type Report struct {
	// Entries are the central directory headers in directory order, as far
	// as they could be read.
	Entries []Entry
	// Comment is the archive comment (from the end record).
	Comment string
	// Problems lists what was found, in the order of the archive's
	// records; at most 100, and the audit stops there.
	Problems []Problem
	// Truncated is true when the audit stopped at the 100th problem.
	Truncated bool
	// TooMany is set by [AuditLimit] when the archive holds more entries
	// than its limit: its end record says so (Declared is what it says),
	// or its central directory holds more headers. The audit stopped
	// there, Entries is partial and the archive was not checked further.
	TooMany  bool
	Declared uint64
}

// Err returns nil when the report has no problem, else an error naming
// the first one and counting the others.
func (r *Report) Err() error {
	switch n := len(r.Problems); {
	case n == 0:
		return nil
	case n == 1:
		return errors.New(r.Problems[0].String())
	default:
		return fmt.Errorf("%s (and %d more problems)", r.Problems[0], n-1)
	}
}

// auditor holds one audit in progress.
type auditor struct {
	r    io.ReaderAt
	size int64
	rep  *Report
	// max bounds the entries read (0: no bound).
	max uint64
	// ioErr is the first read error other than reading past the end.
	ioErr error
}

// errStop ends an audit that has reported enough.
var errStop = errors.New("too many problems")

// Audit reads the structure of the zip archive of size bytes in r and
// reports every ambiguity (see the package documentation). It returns an
// error only when r fails to read; everything wrong with the bytes is a
// [Problem] in the report.
func Audit(r io.ReaderAt, size int64) (*Report, error) {
	return AuditLimit(r, size, 0)
}

// AuditLimit is [Audit] for an archive that may hold at most maxEntries
// entries (0: any number): one that holds more is reported TooMany as soon
// as its end record announces them, or its central directory reaches one
// more, without reading the rest, so that an archive of a million entries
// costs nothing to refuse.
func AuditLimit(r io.ReaderAt, size int64, maxEntries uint64) (*Report, error) {
	a := &auditor{r: r, size: size, rep: &Report{}, max: maxEntries}
	err := a.run()
	if a.ioErr != nil {
		return nil, a.ioErr
	}
	if err != nil && !errors.Is(err, errStop) && !errors.Is(err, errTooMany) {
		return nil, err
	}
	return a.rep, nil
}

// errTooMany ends an audit of an archive with more entries than allowed.
var errTooMany = errors.New("too many entries")

// add records a problem; it returns errStop once there are enough.
func (a *auditor) add(member string, off int64, corrupt bool, format string, args ...any) error {
	if len(a.rep.Problems) >= maxProblems {
		a.rep.Truncated = true
		return errStop
	}
	a.rep.Problems = append(a.rep.Problems, Problem{Member: member, Offset: off, Corrupt: corrupt, Msg: fmt.Sprintf(format, args...)})
	return nil
}

// read reads exactly len(p) bytes at off. It reports false when the bytes
// are not all there (past the end of the archive); a read error is kept in
// a.ioErr.
func (a *auditor) read(p []byte, off int64) bool {
	if off < 0 || off > a.size || int64(len(p)) > a.size-off {
		return false
	}
	n, err := a.r.ReadAt(p, off)
	if n == len(p) {
		return true
	}
	if err != nil && !errors.Is(err, io.EOF) && a.ioErr == nil {
		a.ioErr = err
	}
	return false
}

// end is the end of central directory information the audit uses.
type end struct {
	off               int64 // offset of the end record (or zip64 end record)
	entries           uint64
	cdSize, cdOff     uint64
	diskNbr, cdDisk   uint32
	entriesOnThisDisk uint64
}

func (a *auditor) run() error {
	e, err := a.findEnd()
	if err != nil || e == nil {
		return err
	}
	a.rep.Declared = e.entries
	if a.max > 0 && e.entries > a.max {
		a.rep.TooMany = true
		return errTooMany
	}
	// The central directory must end where the end record begins, at the
	// offset the end record gives.
	if e.cdOff > uint64(a.size) || e.cdSize > uint64(a.size) || e.cdOff+e.cdSize > uint64(a.size) {
		return a.add("", e.off, true, "the end record puts the central directory (%d bytes at offset %d) outside the %d-byte archive; the archive is truncated or corrupt", e.cdSize, e.cdOff, a.size)
	}
	cdOff, cdSize := int64(e.cdOff), int64(e.cdSize)
	if end := cdOff + cdSize; end != e.off {
		if end > e.off {
			return a.add("", e.off, true, "the central directory (%d bytes at offset %d) runs into the end record at offset %d; the archive is corrupt", cdSize, cdOff, e.off)
		}
		// Go and Python take the difference for prepended data and shift
		// every offset by it; a central directory header where the shift
		// puts it says that is what happened.
		shift := e.off - end
		sig := make([]byte, 4)
		if cdSize > 0 && a.read(sig, cdOff+shift) && binary.LittleEndian.Uint32(sig) == centralSig {
			return a.add("", 0, false, "the central directory is %d bytes after the offset the end record gives: data was prepended to the archive (a self-extractor stub, or another file); Go and Python shift every offset to compensate, other readers do not, and they read different entries: repack the archive without the prefix", shift)
		}
		return a.add("", end, false, "%d bytes between the central directory and the end record belong to neither; readers that scan for records would find whatever they hold", shift)
	}
	entries, err := a.readCentral(cdOff, cdSize, e.entries)
	if err != nil {
		return err
	}
	return a.checkLocal(entries, cdOff)
}

// findEnd locates and checks the end of central directory record (and the
// zip64 records), the way archive/zip and zipfile do.
func (a *auditor) findEnd() (*end, error) {
	if a.size < endLen {
		return nil, a.add("", 0, true, "%d bytes is too short to be a zip archive (no end of central directory record)", a.size)
	}
	n := min(a.size, endSearch)
	tail := make([]byte, n)
	if !a.read(tail, a.size-n) {
		return nil, a.add("", a.size-n, true, "cannot read the end of the archive")
	}
	i := bytes.LastIndex(tail[:len(tail)-endLen+4], []byte("PK\x05\x06"))
	if i < 0 {
		return nil, a.add("", 0, true, "no end of central directory record: not a zip archive, or truncated")
	}
	rec := tail[i:]
	off := a.size - n + int64(i)
	commentLen := int(binary.LittleEndian.Uint16(rec[20:]))
	switch rest := len(rec) - endLen; {
	case commentLen > rest:
		return nil, a.add("", off, true, "the end record's comment (%d bytes) runs past the end of the archive (%d bytes left): truncated, or the record is a decoy", commentLen, rest)
	case commentLen < rest:
		if err := a.add("", off+endLen+int64(commentLen), false, "%d bytes follow the end of central directory record and its comment; readers that search for the record from the end could take another one there, and some tools hide a second archive there: remove them", rest-commentLen); err != nil {
			return nil, err
		}
	}
	comment := rec[endLen : endLen+commentLen]
	a.rep.Comment = string(comment)
	for _, sig := range signatures() {
		if j := bytes.Index(comment, []byte(sig)); j >= 0 {
			if err := a.add("", off+endLen+int64(j), false, "the archive comment holds a zip record signature (%q); a reader that searches for records could take the comment for part of the archive: remove the comment", sig); err != nil {
				return nil, err
			}
			break
		}
	}
	le := binary.LittleEndian
	e := &end{
		off:               off,
		diskNbr:           uint32(le.Uint16(rec[4:])),
		cdDisk:            uint32(le.Uint16(rec[6:])),
		entriesOnThisDisk: uint64(le.Uint16(rec[8:])),
		entries:           uint64(le.Uint16(rec[10:])),
		cdSize:            uint64(le.Uint32(rec[12:])),
		cdOff:             uint64(le.Uint32(rec[16:])),
	}
	if err := a.zip64End(e); err != nil {
		return nil, err
	}
	if e.diskNbr != 0 || e.cdDisk != 0 || e.entriesOnThisDisk != e.entries {
		if err := a.add("", e.off, false, "the end record describes a multi-disk (split) archive; readers that ignore disk numbers and readers that refuse them differ: join the parts into one archive"); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// zip64End reads the zip64 end records when their locator precedes the
// end record, and checks that they agree with it.
func (a *auditor) zip64End(e *end) error {
	if e.off < end64LocLen {
		return nil
	}
	loc := make([]byte, end64LocLen)
	if !a.read(loc, e.off-end64LocLen) {
		return nil
	}
	le := binary.LittleEndian
	if le.Uint32(loc) != end64LocSig {
		return nil
	}
	locOff := e.off - end64LocLen
	if le.Uint32(loc[4:]) != 0 || le.Uint32(loc[16:]) != 1 {
		return a.add("", locOff, false, "the zip64 end locator describes a multi-disk archive; Go ignores such a locator and Python refuses it: join the parts into one archive")
	}
	off := le.Uint64(loc[8:])
	rec := make([]byte, end64Len)
	if off > uint64(locOff) || !a.read(rec, int64(off)) || le.Uint32(rec) != end64Sig {
		return a.add("", locOff, true, "the zip64 end locator points at offset %d, where there is no zip64 end record; the archive is corrupt", off)
	}
	if recLen := le.Uint64(rec[4:]); recLen < end64Len-12 || recLen > uint64(locOff)-off || off+12+recLen != uint64(locOff) {
		return a.add("", int64(off), false, "the zip64 end record (declaring %d bytes) does not end where its locator begins (offset %d); the bytes between belong to nothing", le.Uint64(rec[4:]), locOff)
	}
	z := end{
		off:               int64(off),
		diskNbr:           le.Uint32(rec[16:]),
		cdDisk:            le.Uint32(rec[20:]),
		entriesOnThisDisk: le.Uint64(rec[24:]),
		entries:           le.Uint64(rec[32:]),
		cdSize:            le.Uint64(rec[40:]),
		cdOff:             le.Uint64(rec[48:]),
	}
	// Every end record field that is not a marker must agree: Python reads
	// the zip64 record whenever the locator is there, Go only when a field
	// of the end record is a marker.
	type field struct {
		name     string
		v32, v64 uint64
		marker   uint64
	}
	for _, f := range []field{
		{"number of entries", e.entries, z.entries, u16max},
		{"entries on this disk", e.entriesOnThisDisk, z.entriesOnThisDisk, u16max},
		{"central directory size", e.cdSize, z.cdSize, u32max},
		{"central directory offset", e.cdOff, z.cdOff, u32max},
	} {
		if f.v32 != f.marker && f.v32 != f.v64 {
			return a.add("", e.off, false, "the end record's %s is %d but the zip64 end record's is %d; Python uses the zip64 value, Go the other: the archive reads differently", f.name, f.v32, f.v64)
		}
	}
	z.diskNbr = max(z.diskNbr, e.diskNbr)
	z.cdDisk = max(z.cdDisk, e.cdDisk)
	*e = z
	return nil
}

// readCentral reads the central directory headers.
func (a *auditor) readCentral(cdOff, cdSize int64, want uint64) ([]Entry, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(&ioErrReader{a: a}, cdOff, cdSize), 64<<10)
	pos := cdOff
	var entries []Entry
	hdr := make([]byte, centralLen)
	for pos < cdOff+cdSize {
		if a.max > 0 && uint64(len(entries)) >= a.max {
			a.rep.TooMany = true
			return entries, errTooMany
		}
		if _, err := io.ReadFull(br, hdr); err != nil {
			return entries, a.add("", pos, true, "the central directory ends inside a header (%d bytes left); the archive is truncated or corrupt", cdOff+cdSize-pos)
		}
		le := binary.LittleEndian
		if le.Uint32(hdr) != centralSig {
			return entries, a.add("", pos, true, "central directory header %d has no signature; the archive is corrupt", len(entries)+1)
		}
		nameLen, extraLen, commentLen := int(le.Uint16(hdr[28:])), int(le.Uint16(hdr[30:])), int(le.Uint16(hdr[32:]))
		varLen := nameLen + extraLen + commentLen
		if int64(varLen) > cdOff+cdSize-pos-centralLen {
			return entries, a.add("", pos, true, "central directory header %d runs past the end of the central directory; the archive is corrupt", len(entries)+1)
		}
		vb := make([]byte, varLen)
		if _, err := io.ReadFull(br, vb); err != nil {
			return entries, a.add("", pos, true, "cannot read central directory header %d", len(entries)+1)
		}
		name, extra := string(vb[:nameLen]), vb[nameLen:nameLen+extraLen]
		e := Entry{
			CentralOffset:    pos,
			Name:             name,
			Flags:            le.Uint16(hdr[8:]),
			Method:           le.Uint16(hdr[10:]),
			CRC32:            le.Uint32(hdr[16:]),
			CompressedSize:   uint64(le.Uint32(hdr[20:])),
			UncompressedSize: uint64(le.Uint32(hdr[24:])),
			HeaderOffset:     int64(le.Uint32(hdr[42:])),
			DataOffset:       -1,
			End:              -1,
		}
		disk := uint32(le.Uint16(hdr[34:]))
		ex, msg := parseExtra(extra, &zip64Need{
			usize: e.UncompressedSize == u32max, csize: e.CompressedSize == u32max,
			offset: e.HeaderOffset == u32max, disk: disk == u16max,
		})
		if msg != "" {
			if err := a.add(name, pos, false, "central directory header: %s", msg); err != nil {
				return entries, err
			}
		}
		if ex.hasUSize {
			e.UncompressedSize = ex.usize
		}
		if ex.hasCSize {
			e.CompressedSize = ex.csize
		}
		if ex.hasOffset {
			if ex.offset > uint64(a.size) {
				e.HeaderOffset = a.size // past everything: reported below
			} else {
				e.HeaderOffset = int64(ex.offset)
			}
		}
		if ex.hasDisk {
			disk = ex.disk
		}
		if disk != 0 {
			if err := a.add(name, pos, false, "the entry is on disk %d of a multi-disk archive; join the parts into one archive", disk); err != nil {
				return entries, err
			}
		}
		if err := a.checkName(name, e.Flags, pos, "central directory header", ex.unicodePath); err != nil {
			return entries, err
		}
		if e.Method == methodStore && e.CompressedSize != e.UncompressedSize && e.Flags&flagEncrypted == 0 {
			if err := a.add(name, pos, false, "the entry is stored (not compressed) but declares %d bytes stored and %d extracted; readers take one or the other", e.CompressedSize, e.UncompressedSize); err != nil {
				return entries, err
			}
		}
		entries = append(entries, e)
		a.rep.Entries = entries
		pos += int64(centralLen + varLen)
	}
	if uint64(len(entries)) != want {
		return entries, a.add("", cdOff, false, "the end record announces %d entries but the central directory holds %d; readers that count and readers that read to the end differ", want, len(entries))
	}
	return entries, nil
}

// checkName checks the UTF-8 flag and an Info-ZIP Unicode Path field
// against the name.
func (a *auditor) checkName(name string, flags uint16, off int64, where string, unicodePath *string) error {
	if flags&flagUTF8 != 0 && !utf8.ValidString(name) {
		if err := a.add(name, off, false, "%s: the name is flagged UTF-8 but is not valid UTF-8; Python refuses it, Go keeps the bytes", where); err != nil {
			return err
		}
	}
	if flags&flagUTF8 == 0 && !isASCII(name) {
		cp437, _ := charmap.CodePage437.NewDecoder().String(name)
		if err := a.add(name, off, false, "%s: the name has non-ASCII bytes but not the UTF-8 flag (bit 11); Python's zipfile (pip) decodes it as code page 437, giving %s, while Go and Info-ZIP keep the bytes: rebuild the archive with UTF-8 names flagged", where, strconv.Quote(cp437)); err != nil {
			return err
		}
	}
	if unicodePath != nil && *unicodePath != name {
		if err := a.add(name, off, false, "%s: an Info-ZIP Unicode Path extra field names the entry %q; Info-ZIP unzip and 7-Zip extract it under that name, Go and Python under the header's: remove the field", where, *unicodePath); err != nil {
			return err
		}
	}
	return nil
}

// zip64Need says which values a zip64 extra field must supply: those whose
// header field is the 0xFFFFFFFF (or 0xFFFF) marker, in this order.
type zip64Need struct{ usize, csize, offset, disk bool }

// extraInfo is what the audit takes from the extra fields.
type extraInfo struct {
	usize, csize, offset          uint64
	disk                          uint32
	hasUSize, hasCSize, hasOffset bool
	hasDisk, hasZip64             bool
	unicodePath                   *string
}

// parseExtra reads extra fields. It returns a message when they are
// malformed (a field running past the end, a repeated zip64 field, a zip64
// field missing a value its header needs).
func parseExtra(b []byte, need *zip64Need) (extraInfo, string) {
	var ex extraInfo
	le := binary.LittleEndian
	for len(b) >= 4 {
		id, n := le.Uint16(b), int(le.Uint16(b[2:]))
		if n > len(b)-4 {
			return ex, fmt.Sprintf("extra field 0x%04x declares %d bytes but %d remain; Python refuses the field, Go ignores it", id, n, len(b)-4)
		}
		data := b[4 : 4+n]
		b = b[4+n:]
		switch id {
		case zip64ExtraID:
			if ex.hasZip64 {
				return ex, "two zip64 extra fields; readers take one or the other"
			}
			ex.hasZip64 = true
			take := func(want bool, size int) (uint64, bool, bool) {
				if !want {
					return 0, false, true
				}
				if len(data) < size {
					return 0, false, false
				}
				var v uint64
				if size == 8 {
					v = le.Uint64(data)
				} else {
					v = uint64(le.Uint32(data))
				}
				data = data[size:]
				return v, true, true
			}
			var ok bool
			if ex.usize, ex.hasUSize, ok = take(need.usize, 8); !ok {
				return ex, "the zip64 extra field lacks the uncompressed size its header defers to it"
			}
			if ex.csize, ex.hasCSize, ok = take(need.csize, 8); !ok {
				return ex, "the zip64 extra field lacks the compressed size its header defers to it"
			}
			if ex.offset, ex.hasOffset, ok = take(need.offset, 8); !ok {
				return ex, "the zip64 extra field lacks the local header offset its header defers to it"
			}
			var d uint64
			if d, ex.hasDisk, ok = take(need.disk, 4); !ok {
				return ex, "the zip64 extra field lacks the disk number its header defers to it"
			}
			ex.disk = uint32(d)
		case unicodePathID:
			// Version 1, CRC-32 of the header name, then the UTF-8 name.
			if len(data) < 5 || data[0] != 1 {
				return ex, "a malformed Info-ZIP Unicode Path extra field"
			}
			p := string(data[5:])
			ex.unicodePath = &p
		}
	}
	for _, c := range b {
		if c != 0 {
			return ex, fmt.Sprintf("%d stray bytes after the last extra field", len(b))
		}
	}
	return ex, ""
}

// checkLocal reads each entry's local header and data descriptor, compares
// them with the central directory, and checks that the entries tile the
// archive up to the central directory.
func (a *auditor) checkLocal(entries []Entry, cdOff int64) error {
	le := binary.LittleEndian
	hdr := make([]byte, localLen)
	var spans []span
	for i := range entries {
		e := &entries[i]
		off := e.HeaderOffset
		if off >= cdOff || !a.read(hdr, off) || le.Uint32(hdr) != localSig {
			if err := a.add(e.Name, e.CentralOffset, true, "the central directory header puts the local header at offset %d, where there is none; the archive is corrupt", off); err != nil {
				return err
			}
			continue
		}
		flags, method := le.Uint16(hdr[6:]), le.Uint16(hdr[8:])
		crc, csize, usize := le.Uint32(hdr[14:]), uint64(le.Uint32(hdr[18:])), uint64(le.Uint32(hdr[22:]))
		nameLen, extraLen := int(le.Uint16(hdr[26:])), int(le.Uint16(hdr[28:]))
		vb := make([]byte, nameLen+extraLen)
		if !a.read(vb, off+localLen) {
			if err := a.add(e.Name, off, true, "the local header runs past the end of the archive"); err != nil {
				return err
			}
			continue
		}
		name := string(vb[:nameLen])
		if name != e.Name {
			if err := a.add(e.Name, off, false, "the local header names the entry %q; streaming readers use that name, Go and Python the central directory's", name); err != nil {
				return err
			}
		}
		if flags != e.Flags {
			if err := a.add(e.Name, off, false, "the local header's flags are 0x%04x, the central directory's 0x%04x; readers that use one or the other differ (on encryption, data descriptors or name encoding)", flags, e.Flags); err != nil {
				return err
			}
		}
		if method != e.Method {
			if err := a.add(e.Name, off, false, "the local header's compression method is %d, the central directory's %d", method, e.Method); err != nil {
				return err
			}
		}
		ex, msg := parseExtra(vb[nameLen:], &zip64Need{usize: usize == u32max, csize: csize == u32max})
		if msg != "" {
			if err := a.add(e.Name, off, false, "local header: %s", msg); err != nil {
				return err
			}
		}
		if ex.hasUSize {
			usize = ex.usize
		}
		if ex.hasCSize {
			csize = ex.csize
		}
		if name != e.Name || flags != e.Flags {
			if err := a.checkName(name, flags, off, "local header", ex.unicodePath); err != nil {
				return err
			}
		} else if ex.unicodePath != nil && *ex.unicodePath != name {
			if err := a.add(e.Name, off, false, "local header: an Info-ZIP Unicode Path extra field names the entry %q; Info-ZIP unzip and 7-Zip extract it under that name, Go and Python under the header's: remove the field", *ex.unicodePath); err != nil {
				return err
			}
		}
		// The local CRC-32 and sizes: equal to the central directory's or,
		// with a data descriptor, zero (the values follow the data). A size
		// left at the zip64 marker without a zip64 field (archive/zip's raw
		// writer does this) says nothing and is not compared.
		desc := flags&flagDescriptor != 0
		agree := func(local, central uint64, marker bool) bool {
			return local == central || (desc && local == 0) || (marker && !ex.hasZip64 && local == u32max)
		}
		if !agree(uint64(crc), uint64(e.CRC32), false) || !agree(csize, e.CompressedSize, true) || !agree(usize, e.UncompressedSize, true) {
			if err := a.add(e.Name, off, false, "the local header says CRC-32 %08x, %d bytes compressed, %d extracted; the central directory says %08x, %d, %d; streaming readers use the first, Go and Python the second", crc, csize, usize, e.CRC32, e.CompressedSize, e.UncompressedSize); err != nil {
				return err
			}
		}
		e.DataOffset = off + localLen + int64(nameLen+extraLen)
		if e.DataOffset > cdOff || e.CompressedSize > uint64(cdOff-e.DataOffset) {
			if err := a.add(e.Name, off, true, "the entry's %d bytes of data run past the start of the central directory (offset %d); the archive is corrupt", e.CompressedSize, cdOff); err != nil {
				return err
			}
			continue
		}
		end := e.DataOffset + int64(e.CompressedSize)
		if desc {
			n, msg := a.descriptor(e, end, cdOff, ex.hasZip64)
			if msg != "" {
				if err := a.add(e.Name, end, false, "%s", msg); err != nil {
					return err
				}
			}
			end += n
		}
		e.End = end
		spans = append(spans, span{start: off, end: end, name: e.Name})
	}
	a.rep.Entries = entries
	return a.checkTiling(spans, cdOff)
}

// descriptor reads the data descriptor at off and checks it against the
// central directory; it returns the descriptor's length. The signature is
// optional and the sizes are 4 or 8 bytes (8 for zip64 entries, though
// writers differ), so each layout is tried in turn.
func (a *auditor) descriptor(e *Entry, off, limit int64, zip64 bool) (int64, string) {
	buf := make([]byte, min(24, max(limit-off, 0)))
	if !a.read(buf, off) {
		return 0, "the data descriptor is missing: the entry's data runs into the central directory"
	}
	le := binary.LittleEndian
	layouts := []struct {
		sig  bool
		wide bool
	}{{true, zip64}, {true, !zip64}, {false, zip64}, {false, !zip64}}
	for _, l := range layouts {
		p := buf
		n := int64(0)
		if l.sig {
			if len(p) < 4 || le.Uint32(p) != descriptorSig {
				continue
			}
			p, n = p[4:], 4
		}
		w := 4
		if l.wide {
			w = 8
		}
		if len(p) < 4+2*w {
			continue
		}
		crc := le.Uint32(p)
		var cs, us uint64
		if l.wide {
			cs, us = le.Uint64(p[4:]), le.Uint64(p[12:])
		} else {
			cs, us = uint64(le.Uint32(p[4:])), uint64(le.Uint32(p[8:]))
		}
		if crc == e.CRC32 && cs == e.CompressedSize && us == e.UncompressedSize {
			return n + 4 + 2*int64(w), ""
		}
	}
	// Report what the most likely layout says, and skip its length.
	p, n := buf, int64(12)
	if zip64 {
		n = 20
	}
	if len(p) >= 4 && le.Uint32(p) == descriptorSig {
		p, n = p[4:], n+4
	}
	if len(p) < 12 {
		return 0, "the data descriptor is truncated: the entry's data runs into the central directory"
	}
	return min(n, int64(len(buf))), fmt.Sprintf("the data descriptor says CRC-32 %08x, %d bytes compressed, %d extracted; the central directory says %08x, %d, %d; streaming readers use the first, Go and Python the second",
		le.Uint32(p), le.Uint32(p[4:]), le.Uint32(p[8:]), e.CRC32, e.CompressedSize, e.UncompressedSize)
}

// span is the byte range of one entry: local header, data, descriptor.
type span struct {
	start, end int64
	name       string
}

// checkTiling checks that the entries' byte ranges cover [0, cdOff)
// exactly, without overlap or gap.
func (a *auditor) checkTiling(spans []span, cdOff int64) error {
	sorted := make([]span, len(spans))
	copy(sorted, spans)
	sortSpans(sorted)
	pos := int64(0)
	prev := ""
	for _, s := range sorted {
		switch {
		case s.start < pos:
			if err := a.add(s.name, s.start, false, "the entry's bytes (offsets %d to %d) overlap those of %q, which end at %d: two entries share data (the overlapping-files decompression bomb, or two names for one content); readers that check and readers that do not differ", s.start, s.end, prev, pos); err != nil {
				return err
			}
		case s.start > pos && pos == 0:
			if err := a.add("", 0, false, "%d bytes before the first entry belong to no entry (prepended data, such as a self-extractor stub); streaming readers find nothing there or something else, Go and Python skip it: repack the archive without them", s.start); err != nil {
				return err
			}
		case s.start > pos:
			if err := a.add(s.name, pos, false, "%d bytes between %q and this entry belong to no entry; a streaming reader would read them as it finds them (possibly as other entries): repack the archive", s.start-pos, prev); err != nil {
				return err
			}
		}
		if s.end > pos {
			pos, prev = s.end, s.name
		}
	}
	if pos < cdOff && len(sorted) > 0 {
		return a.add("", pos, false, "%d bytes between the last entry %q and the central directory belong to no entry; a streaming reader would read them as more entries: repack the archive", cdOff-pos, prev)
	}
	if len(sorted) == 0 && cdOff > 0 {
		return a.add("", 0, false, "%d bytes before the central directory of an archive without entries belong to nothing: repack the archive", cdOff)
	}
	return nil
}

// sortSpans sorts by start offset, keeping directory order for equal
// starts, so that the report does not depend on the sort.
func sortSpans(s []span) {
	slices.SortStableFunc(s, func(x, y span) int { return cmp.Compare(x.start, y.start) })
}

// ioErrReader adapts the auditor's reads for a SectionReader.
type ioErrReader struct{ a *auditor }

func (r *ioErrReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := r.a.r.ReadAt(p, off)
	if err != nil && !errors.Is(err, io.EOF) && r.a.ioErr == nil {
		r.a.ioErr = err
	}
	return n, err
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
