package artdiff

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxDepth is how many archives are opened one inside another.
	maxDepth = 3
	// chunkSize is the unit in which contents are read and compared.
	chunkSize = 64 << 10
	// sniffLen is how many leading bytes are kept to recognise a format.
	sniffLen = 512
	// maxShown is how many bytes of a value a detail quotes.
	maxShown = 64
)

// Difference locates the first difference between two versions of an
// artifact.
type Difference struct {
	// Artifact is the artifact's name as given to Compare.
	Artifact string `json:"artifact"`
	// Path is the member path, outermost first: e.g.
	// ["vexl-0.3.0-linux-x86_64/wheels/vexl_plugin-0.3.0-….whl",
	// "vexl_plugin/lib/libvexl.so"] for a member of a wheel inside a
	// bundle. It is empty when the container itself differs (its member
	// order, a gzip header field, its comment, its structure). Names are
	// as stored in the archives; String quotes those that are not
	// printable.
	Path []string `json:"path,omitempty"`
	// What says what differs: "content", "missing in rebuilt", "extra in
	// rebuilt", "order", "mode", "mtime", "owner", "type", "link target",
	// "compression method", "compressed data", "header field F", "gzip
	// header field F", "archive comment", "archive structure", "compressed
	// stream", "JSON value at $.a[1].b", "JSON key order at $.a", "line 12",
	// "file type", "unsafe name", "sparse entry", "ambiguous archive" (a
	// zip that zip readers would read differently, see package zipaudit)
	// or "unreadable".
	What string `json:"what"`
	// Detail is a short human detail: the two values (truncated), the
	// sizes, the offset of the first differing byte, the ELF section, or
	// which side could not be read and why.
	Detail string `json:"detail,omitempty"`
}

// String formats d on one line as "ARTIFACT: MEMBER: ...: WHAT (DETAIL)".
func (d Difference) String() string {
	var b strings.Builder
	b.WriteString(printable(d.Artifact))
	for _, p := range d.Path {
		b.WriteString(": ")
		b.WriteString(printable(p))
	}
	b.WriteString(": ")
	b.WriteString(d.What)
	if d.Detail != "" {
		b.WriteString(" (")
		b.WriteString(d.Detail)
		b.WriteString(")")
	}
	return b.String()
}

// printable returns s, or s quoted when it is empty, not valid UTF-8 or
// holds a character that is not printable.
func printable(s string) string {
	if s == "" || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// Compare returns the first difference between original, the recorded
// version of the artifact called name, and rebuilt, its rebuilt version,
// or nil when the two files are byte for byte identical. See the package
// documentation for what is compared. A file that cannot be parsed is a
// difference ("unreadable"), not an error; the error is for I/O failures
// on the two files.
func Compare(name, original, rebuilt string) (*Difference, error) {
	return CompareContext(context.Background(), name, original, rebuilt)
}

// CompareContext is [Compare] with a context: the comparison stops, with
// the context's error, soon after ctx is done.
func CompareContext(ctx context.Context, name, original, rebuilt string) (d *Difference, err error) {
	fa, sa, err := openFile(original)
	if err != nil {
		return nil, err
	}
	defer fa.Close()
	fb, sb, err := openFile(rebuilt)
	if err != nil {
		return nil, err
	}
	defer fb.Close()
	c := &comparer{ctx: ctx, artifact: name}
	defer func() {
		// debug/elf and the decompressors are meant not to panic on bad
		// input; should one do so anyway, that is a failure to compare,
		// never a crash of the caller.
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("artdiff: comparing %s: internal error: %v", name, r)
		}
	}()
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	return c.compareBlobs(nil, 0, fileBlob(base, fa, sa), fileBlob(base, fb, sb))
}

// openFile opens a regular file and returns its size.
func openFile(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("artdiff: %s is not a regular file", name)
	}
	return f, st.Size(), nil
}

// side is one of the two versions being compared.
type side int

const (
	original side = iota
	rebuilt
)

func (s side) String() string {
	if s == original {
		return "original"
	}
	return "rebuilt"
}

// sideError is a failure to read or parse one side.
type sideError struct {
	side side
	err  error
}

func (e *sideError) Error() string { return e.side.String() + ": " + e.err.Error() }
func (e *sideError) Unwrap() error { return e.err }

// onSide tags err with the side it happened on, unless it is nil or
// already tagged.
func onSide(s side, err error) error {
	if err == nil {
		return nil
	}
	var se *sideError
	if errors.As(err, &se) {
		return err
	}
	return &sideError{side: s, err: err}
}

// ioError is a read failure of one of the two files themselves: Compare
// returns it as an error rather than a difference.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// fileReaderAt tags the read failures of a file as ioError.
type fileReaderAt struct{ f *os.File }

func (r fileReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		// A damaged archive's offsets, not an I/O failure.
		return 0, errors.New("negative offset")
	}
	n, err := r.f.ReadAt(p, off)
	if err != nil && err != io.EOF {
		err = &ioError{err}
	}
	return n, err
}

// blob is one side of a comparison: a file or an archive member.
type blob struct {
	// name is the base name, a hint for the format.
	name string
	// size is the content's size, or -1 when unknown.
	size int64
	// open returns a new stream of the content from its start.
	open func() (io.ReadCloser, error)
	// ra gives random access when it is cheap (a file); nil otherwise.
	ra io.ReaderAt
}

func fileBlob(name string, f *os.File, size int64) blob {
	ra := fileReaderAt{f}
	return blob{
		name: name,
		size: size,
		ra:   ra,
		open: func() (io.ReadCloser, error) {
			return io.NopCloser(io.NewSectionReader(ra, 0, size)), nil
		},
	}
}

// comparer holds the state of one Compare call.
type comparer struct {
	ctx      context.Context
	artifact string
}

func (c *comparer) diff(p []string, what, detail string) *Difference {
	return &Difference{Artifact: c.artifact, Path: slices.Clip(slices.Clone(p)), What: what, Detail: detail}
}

// fatal reports whether err must be returned rather than reported as a
// difference: an I/O failure of the compared files, or cancellation.
func fatal(err error) bool {
	var ie *ioError
	return errors.As(err, &ie) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// openBoth opens a fresh stream of each side; an error is tagged with the
// side that failed (and nothing is left open). The caller closes both.
func openBoth(a, b blob) (ra, rb io.ReadCloser, err error) {
	if ra, err = a.open(); err != nil {
		return nil, nil, onSide(original, err)
	}
	if rb, err = b.open(); err != nil {
		ra.Close()
		return nil, nil, onSide(rebuilt, err)
	}
	return ra, rb, nil
}

// fail turns a read or parse failure into an "unreadable" difference at
// p, or returns it when it is fatal.
func (c *comparer) fail(p []string, err error) (*Difference, error) {
	if fatal(err) {
		return nil, err
	}
	return c.diff(p, "unreadable", err.Error()), nil
}

// failBoth reports that one or both sides could not be parsed (errA,
// errB already tagged with their side). When both fail, the offset of
// the first differing byte is added.
func (c *comparer) failBoth(p []string, errA, errB error, res scanResult) (*Difference, error) {
	for _, err := range []error{errA, errB} {
		if err != nil && fatal(err) {
			return nil, err
		}
	}
	switch {
	case errA != nil && errB != nil:
		return c.diff(p, "unreadable", fmt.Sprintf("%v; %v; first difference at byte %d", errA, errB, res.off)), nil
	case errA != nil:
		return c.diff(p, "unreadable", errA.Error()), nil
	default:
		return c.diff(p, "unreadable", errB.Error()), nil
	}
}

// compareBlobs compares two contents at member path p, depth archives
// deep, recognising their format.
func (c *comparer) compareBlobs(p []string, depth int, a, b blob) (*Difference, error) {
	res, err := c.scan(a, b)
	if err != nil {
		return c.fail(p, err)
	}
	if res.equal {
		return nil, nil
	}
	ka, kb := sniff(a.name, res.headA), sniff(b.name, res.headB)
	k, ok := unify(ka, kb)
	if !ok {
		return c.diff(p, "file type", fmt.Sprintf("original %s, rebuilt %s", ka, kb)), nil
	}
	if k.archive() && depth >= maxDepth {
		return c.diff(p, "content", fmt.Sprintf("%s; a %s nested more than %d archives deep is not opened",
			byteDetail(res.off, a.size, b.size), k, maxDepth)), nil
	}
	var d *Difference
	switch k {
	case kindZip:
		d, err = c.compareZip(p, depth, a, b, res)
	case kindGzip:
		d, err = c.compareGzip(p, depth, a, b, res)
	case kindTar:
		d, err = c.compareTar(p, depth, a, b, res)
	case kindELF:
		d, err = c.compareELF(p, a, b, res)
	case kindJSON:
		d, err = c.compareJSON(p, a, b, res)
	case kindText:
		d, err = c.compareText(p, a, b, "")
	}
	if d == nil && err == nil {
		// Binary data; or the bytes differed at first reading and not at
		// the next (a file changing while being compared).
		d = c.diff(p, "content", byteDetail(res.off, a.size, b.size))
	}
	return d, err
}

// byteDetail describes the first differing byte and, when known, the
// sizes.
func byteDetail(off, sizeA, sizeB int64) string {
	s := fmt.Sprintf("first difference at byte %d", off)
	switch {
	case sizeA < 0 || sizeB < 0:
	case sizeA == sizeB:
		s += fmt.Sprintf(" of %d", sizeA)
	default:
		s += fmt.Sprintf("; sizes %d and %d bytes", sizeA, sizeB)
	}
	return s
}

// kind is a content format.
type kind int

const (
	kindEmpty kind = iota
	kindBinary
	kindText
	kindJSON
	kindZip
	kindGzip
	kindTar
	kindELF
)

func (k kind) String() string {
	return [...]string{"empty file", "binary data", "text", "JSON document", "zip archive", "gzip stream", "tar archive", "ELF file"}[k]
}

// archive reports whether k is opened as an archive (and counts towards
// maxDepth).
func (k kind) archive() bool { return k == kindZip || k == kindGzip || k == kindTar }

// strong reports whether k is a definite format, as opposed to a guess.
func (k kind) strong() bool { return k >= kindJSON }

// sniff guesses the format of a content from its name and first bytes.
func sniff(name string, head []byte) kind {
	lower := strings.ToLower(name)
	switch {
	case len(head) == 0:
		return kindEmpty
	case len(head) >= 4 && string(head[:2]) == "PK" && (string(head[2:4]) == "\x03\x04" || string(head[2:4]) == "\x05\x06"):
		return kindZip
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return kindGzip
	case len(head) >= 4 && string(head[:4]) == "\x7fELF":
		return kindELF
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		return kindTar
	case strings.HasSuffix(lower, ".json"):
		return kindJSON
	case looksText(head):
		return kindText
	}
	return kindBinary
}

// looksText reports whether head is the start of UTF-8 text without NUL
// or unusual control characters.
func looksText(head []byte) bool {
	// A rune cut at the end of head is not a reason to refuse.
	for i := 0; i < utf8.UTFMax-1 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	if !utf8.Valid(head) {
		return false
	}
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b {
			return false
		}
	}
	return true
}

// unify picks the format in which two contents are compared; ok is false
// when they are of two different definite formats.
func unify(ka, kb kind) (k kind, ok bool) {
	switch {
	case ka == kb:
		return ka, true
	case ka.strong() && kb.strong():
		return 0, false
	case ka.strong():
		return ka, true
	case kb.strong():
		return kb, true
	case ka == kindEmpty:
		return kb, true
	case kb == kindEmpty:
		return ka, true
	}
	return kindBinary, true
}

// unsafeName says why an archive member name is unsafe to extract, or
// returns "".
func unsafeName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case len(name) > 4096:
		return "name longer than 4096 bytes"
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	case strings.ContainsRune(name, 0):
		return "NUL byte in name"
	case strings.ContainsRune(name, '\\'):
		return "backslash in name"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z'):
		return "Windows drive letter"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return "control character in name"
		}
	}
	for el := range strings.SplitSeq(name, "/") {
		if el == ".." {
			return `".." element in name`
		}
	}
	return ""
}

// shown quotes at most maxShown bytes of s for a detail.
func shown(s string) string {
	if len(s) <= maxShown {
		return strconv.Quote(s)
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

// entryMismatch reports the first difference between two member lists
// that differ at entry i (0-based): restA and restB are the names from
// there on. A name missing on one side is reported as missing or extra;
// the same names in another order as "order".
func (c *comparer) entryMismatch(p []string, i int, restA, restB []string) *Difference {
	countA, countB := map[string]int{}, map[string]int{}
	for _, n := range restA {
		countA[n]++
	}
	for _, n := range restB {
		countB[n]++
	}
	totals := fmt.Sprintf("entry %d; %d entries in the original, %d in the rebuilt", i+1, i+len(restA), i+len(restB))
	withSafety := func(name, detail string) string {
		if why := unsafeName(name); why != "" {
			return detail + "; unsafe name: " + why
		}
		return detail
	}
	if len(restA) > 0 && countB[restA[0]] < countA[restA[0]] {
		return c.diff(append(slices.Clone(p), restA[0]), "missing in rebuilt", withSafety(restA[0], totals))
	}
	if len(restB) > 0 && countA[restB[0]] < countB[restB[0]] {
		return c.diff(append(slices.Clone(p), restB[0]), "extra in rebuilt", withSafety(restB[0], totals))
	}
	return c.diff(p, "order", fmt.Sprintf("entry %d: original %s, rebuilt %s", i+1, shown(restA[0]), shown(restB[0])))
}

// memberPath returns p with name appended, in a new slice.
func memberPath(p []string, name string) []string {
	return append(slices.Clone(p), name)
}
