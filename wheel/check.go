package wheel

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/extract/namefold"
	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/fsmode"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/spdxexpr"
)

// The checks [Check] runs, in the order [Report.Checks] lists them. Each
// [Finding] names one of them.
const (
	// CheckFilename: the file's base name parses as a wheel file name
	// ([ParseFilename]) and is in canonical form (name escaped and
	// normalised, version normalised).
	CheckFilename = "filename"
	// CheckZip: every member can be decompressed and its CRC-32 matches;
	// no member is encrypted; and the archive reads the same to every zip
	// reader (internal/extract/zipaudit): each local header and data
	// descriptor agrees with the central directory (name, flags, method,
	// CRC-32, sizes), the members' bytes neither overlap nor leave gaps,
	// nothing precedes the first member or follows the end record, there
	// is no archive comment, a non-ASCII name has the UTF-8 flag, and no
	// Info-ZIP Unicode Path field renames a member.
	CheckZip = "zip"
	// CheckUnsafePath: no member name is empty, absolute ("/x", "C:x"),
	// has a ".." element, a backslash, a NUL, an empty or "." element, or
	// is not UTF-8 (the rules of internal/extract, which the wheel spec's
	// UTF-8 names add to).
	CheckUnsafePath = "unsafe-path"
	// CheckSymlink: no member is a symbolic link (its zip external
	// attributes say so); wheels cannot carry links portably and
	// installers write them as regular files or refuse them.
	CheckSymlink = "symlink"
	// CheckSpecialFile: no member is a device, FIFO, socket or other
	// irregular file.
	CheckSpecialFile = "special-file"
	// CheckDuplicate: no two members have the same name, no name is both
	// a file and a folder ("a" and "a/b"), and no two member or folder
	// names are one name under Unicode normalisation (NFC: "é" as one code
	// point or as "e" and a combining accent), which macOS file systems
	// store as one file.
	CheckDuplicate = "duplicate"
	// CheckCaseCollision: no two members or folders have names that differ
	// only in case (compared with Unicode canonical caseless matching, see
	// internal/extract/namefold); they overwrite each other on the
	// case-insensitive file systems of macOS and Windows.
	CheckCaseCollision = "case-collision"
	// CheckDistInfo: exactly one .dist-info folder at the top, named for
	// the file name's distribution and version (compared normalised), with
	// no subfolders but the reserved "licenses" and "sboms".
	CheckDistInfo = "dist-info"
	// CheckData: at most one .data folder, named like the .dist-info
	// folder, holding only the schemes purelib, platlib, headers, scripts
	// and data.
	CheckData = "data"
	// CheckBomb: no member's declared size is absurd against its
	// compressed size or the archive's (decompression bomb); members past
	// the limits are not decompressed.
	CheckBomb = "bomb"
	// CheckRecord: .dist-info/RECORD is present and is CSV rows of path,
	// hash ("sha256=", "sha384=" or "sha512=" and urlsafe base64 without
	// padding, of the algorithm's length) and decimal size; RECORD's own
	// row has an empty hash and size. Lines end in "\n" or "\r\n" only:
	// pip splits RECORD with Python's str.splitlines, which also breaks
	// lines at a bare "\r", "\v", "\f", "\x1c" to "\x1e", U+0085,
	// U+2028 and U+2029, so RECORD must hold none of them.
	CheckRecord = "record"
	// CheckRecordDuplicate: no path has two RECORD rows.
	CheckRecordDuplicate = "record-duplicate"
	// CheckUnlisted: every member but RECORD, RECORD.jws, RECORD.p7s and
	// folder entries has a RECORD row.
	CheckUnlisted = "unlisted"
	// CheckMissing: every RECORD row names a member of the archive.
	CheckMissing = "missing"
	// CheckRecordHash: every member's bytes hash to its RECORD row's hash,
	// and the row has one.
	CheckRecordHash = "record-hash"
	// CheckRecordSize: every member's size is its RECORD row's size, and
	// the row has one.
	CheckRecordSize = "record-size"
	// CheckWheelFile: .dist-info/WHEEL is present and parses, with one
	// Wheel-Version of major version 1, one Root-Is-Purelib of "true" or
	// "false", and a Build equal to the file name's build tag.
	CheckWheelFile = "wheel-file"
	// CheckTagMismatch: WHEEL's Tag lines are, as a set, the tags the file
	// name expands to.
	CheckTagMismatch = "tag-mismatch"
	// CheckMetadata: .dist-info/METADATA is present and parses, with a
	// known Metadata-Version, a valid Name and Version, single-use fields
	// used once, and valid Requires-Python, Provides-Extra,
	// Description-Content-Type, Dynamic and license fields.
	CheckMetadata = "metadata"
	// CheckNameMismatch: METADATA's Name normalises (PEP 503) to the file
	// name's distribution.
	CheckNameMismatch = "name-mismatch"
	// CheckVersionMismatch: METADATA's Version, normalised (PEP 440), is
	// the file name's version, normalised.
	CheckVersionMismatch = "version-mismatch"
	// CheckLicenseFile: for Metadata-Version 2.4 and later, every
	// License-File is a relative "/"-separated path without ".." naming a
	// member under .dist-info/licenses/ (PEP 639).
	CheckLicenseFile = "license-file"
	// CheckEntryPoints: .dist-info/entry_points.txt, when present, is
	// UTF-8 without a bare carriage return: Python reads it with universal
	// newlines, which end a line at "\r", while other readers do not.
	CheckEntryPoints = "entry-points"
)

// checkIDOrder lists the check ids in report order.
func checkIDOrder() []string {
	return []string{
		CheckFilename, CheckZip, CheckUnsafePath, CheckSymlink, CheckSpecialFile,
		CheckDuplicate, CheckCaseCollision, CheckDistInfo, CheckData, CheckBomb,
		CheckRecord, CheckRecordDuplicate, CheckUnlisted, CheckMissing,
		CheckRecordHash, CheckRecordSize, CheckWheelFile, CheckTagMismatch,
		CheckMetadata, CheckNameMismatch, CheckVersionMismatch, CheckLicenseFile,
		CheckEntryPoints,
	}
}

// Limits on what a check decompresses; the same defaults as
// internal/extract.
const (
	// CheckMaxMemberBytes bounds one member's declared size.
	CheckMaxMemberBytes = 4 << 30
	// CheckMaxTotalBytes bounds the declared sizes of all members.
	CheckMaxTotalBytes = 16 << 30
	// CheckMaxRatio bounds declared size against compressed size, for
	// each member and for the archive, beyond CheckRatioAllowance.
	CheckMaxRatio = 100
	// CheckRatioAllowance is the number of bytes allowed beyond
	// CheckMaxRatio times the compressed bytes, so that small, very
	// compressible wheels pass.
	CheckRatioAllowance = 64 << 20
	// checkMaxTextBytes bounds RECORD, WHEEL and METADATA, which are read
	// into memory.
	checkMaxTextBytes = 64 << 20
)

// Finding is one failed check: Check is one of the Check* constants, File
// the wheel's file name (the base name of [Report.File]), Member the
// member path when the finding is about one, and Msg what is wrong and
// what it means or what to do. [Describe] renders it as [Report.Err]
// lists it.
type Finding = finding.Finding

// Describe renders f as "check: member: msg", the member quoted (so that
// control characters in it cannot garble a terminal) and left out when
// there is none; the wheel is not named.
func Describe(f Finding) string {
	if f.Member == "" {
		return f.Check + ": " + f.Msg
	}
	return fmt.Sprintf("%s: %q: %s", f.Check, f.Member, f.Msg)
}

// Report is the outcome of checking one wheel: every check that ran, and
// the findings. A check that could not run (WHEEL's tags when there is no
// WHEEL, anything about the file name when it does not parse) is not in
// Checks; the finding that stopped it is.
type Report struct {
	File     string    // the name given to [CheckReader], or the path given to [Check]
	Name     Filename  // the parsed file name; zero when it does not parse
	Metadata *Metadata // parsed METADATA when readable, else nil
	Checks   []string  // the checks that ran, in order (see the Check* constants)
	Findings []Finding // in the order of Checks, then of the archive
}

// Outcome returns the checks and findings as a [finding.Report] whose
// Subject is File (sharing Checks and Findings with r).
func (r *Report) Outcome() *finding.Report {
	return &finding.Report{Subject: r.File, Checks: r.Checks, Findings: r.Findings}
}

// Err returns nil when the report has no finding, else an error naming
// the wheel and listing every finding as [Describe] renders it, one per
// line.
func (r *Report) Err() error {
	if len(r.Findings) == 0 {
		return nil
	}
	return &wheelCheckError{file: r.File, findings: slices.Clone(r.Findings)}
}

// wheelCheckError is the error Report.Err returns.
type wheelCheckError struct {
	file     string
	findings []Finding
}

func (e *wheelCheckError) Error() string {
	var b strings.Builder
	if len(e.findings) == 1 {
		fmt.Fprintf(&b, "wheel %s: %s", e.file, Describe(e.findings[0]))
		return b.String()
	}
	fmt.Fprintf(&b, "wheel %s: %d problems:", e.file, len(e.findings))
	for _, f := range e.findings {
		b.WriteString("\n\t")
		b.WriteString(Describe(f))
	}
	return b.String()
}

// Check checks the wheel at path; see [CheckReader].
func Check(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("check wheel: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("check wheel: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("check wheel %s: not a regular file", path)
	}
	return CheckReader(path, f, st.Size())
}

// CheckReader checks the wheel of size bytes read from r; name is its file
// name (a path is fine: the file name check uses its base name). It
// returns an error only when r cannot be read or is not a zip archive at
// all; everything wrong with the content is a [Finding] in the report,
// and every check runs that can (one problem does not hide the others).
//
// Each member is decompressed and hashed once, streaming, with the
// algorithm its RECORD row names; memory stays bounded except for the zip
// central directory and RECORD, WHEEL and METADATA, which are read whole
// (up to 64 MiB each). Declared sizes are checked against the limits
// (CheckMaxMemberBytes, CheckMaxTotalBytes, CheckMaxRatio) before anything
// is decompressed, and no member is read past its declared size.
func CheckReader(name string, r io.ReaderAt, size int64) (*Report, error) {
	if r == nil {
		return nil, fmt.Errorf("check wheel %s: nil reader", name)
	}
	if size < 0 {
		return nil, fmt.Errorf("check wheel %s: negative size %d", name, size)
	}
	src := &ioErrReaderAt{r: r}
	c := &wheelChecker{
		rep:  &Report{File: name},
		file: filepath.Base(name),
		ran:  map[string]bool{},
		src:  src,
		size: size,
	}
	c.checkFilename(filepath.Base(name))
	zr, err := zip.NewReader(src, size)
	if zr != nil {
		c.inflaters.register(zr)
	}
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		if src.err != nil {
			return nil, fmt.Errorf("check wheel %s: %w", name, src.err)
		}
		return nil, fmt.Errorf("check wheel %s: not a readable zip archive: %w", name, err)
	}
	if err := c.checkStructure(); err != nil {
		return nil, fmt.Errorf("check wheel %s: %w", name, err)
	}
	if err := c.run(zr); err != nil {
		return nil, fmt.Errorf("check wheel %s: %w", name, err)
	}
	c.finish()
	return c.rep, nil
}

// checkStructure audits the zip structure (local headers, data
// descriptors, byte ranges, end record) for what zip readers would read
// differently; each problem is a CheckZip finding.
func (c *wheelChecker) checkStructure() error {
	c.mark(CheckZip)
	rep, err := zipaudit.Audit(c.src, c.size)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		c.add(CheckZip, p.Member, "at offset %d: %s; zip readers (pip's zipfile, Go, streaming readers) would not agree on what the wheel holds: rebuild it with a standard tool", p.Offset, p.Msg)
	}
	if rep.Truncated {
		c.add(CheckZip, "", "more problems with the zip structure than are listed; rebuild the wheel")
	}
	if rep.Comment != "" {
		c.add(CheckZip, "", "the archive has a comment (%d bytes, %s); wheel writers write none, and a comment is where a second archive's records can hide: rebuild the wheel without it", len(rep.Comment), strconv.Quote(clip(rep.Comment, 40)))
	}
	return nil
}

// clip shortens s to at most n bytes (at a rune boundary) for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// ioErrReaderAt remembers the first error other than io.EOF of the reader
// it wraps, to tell I/O failures from corrupt content.
type ioErrReaderAt struct {
	r   io.ReaderAt
	mu  sync.Mutex // members are read in parallel
	err error
}

func (t *ioErrReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := t.r.ReadAt(p, off)
	if err != nil && err != io.EOF {
		t.mu.Lock()
		if t.err == nil {
			t.err = err
		}
		t.mu.Unlock()
	}
	return n, err
}

func (t *ioErrReaderAt) firstErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// wheelChecker holds the state of one check.
type wheelChecker struct {
	rep  *Report
	file string // the wheel's file name, each finding's File
	ran  map[string]bool
	src  *ioErrReaderAt
	size int64
	fnOK bool // rep.Name is valid

	inflaters inflaters // the zip reader's deflate readers

	files   []*zip.File
	names   map[string]int // member name -> count
	skip    map[*zip.File]bool
	distDir string // the .dist-info folder used, "" when there is none

	recordOK bool // RECORD present and read; rows is meaningful
	rows     map[string]*recordRowCheck
	rowOrder []string // paths in RECORD order

	wheelData, metadataData, entryPointsData []byte
	wheelRead, metadataRead, entryPointsRead bool
	buf                                      []byte
}

// recordRowCheck is a RECORD row as the wheelChecker uses it.
type recordRowCheck struct {
	algo    string
	digest  []byte // nil when absent or invalid
	hash    string // as written
	sizeRaw string // as written
	size    int64  // -1 when absent or invalid
	line    int
	dup     bool // a duplicate row was reported
}

// mark records that the checks ran.
func (c *wheelChecker) mark(ids ...string) {
	for _, id := range ids {
		c.ran[id] = true
	}
}

// add records a finding; its check counts as run.
func (c *wheelChecker) add(id, member, format string, args ...any) {
	c.ran[id] = true
	c.rep.Findings = append(c.rep.Findings, Finding{Check: id, File: c.file, Member: member, Msg: fmt.Sprintf(format, args...)})
}

// finish orders Checks and Findings.
func (c *wheelChecker) finish() {
	rank := map[string]int{}
	for i, id := range checkIDOrder() {
		rank[id] = i
		if c.ran[id] {
			c.rep.Checks = append(c.rep.Checks, id)
		}
	}
	slices.SortStableFunc(c.rep.Findings, func(a, b Finding) int { return rank[a.Check] - rank[b.Check] })
}

func (c *wheelChecker) checkFilename(base string) {
	c.mark(CheckFilename)
	fn, err := ParseFilename(base)
	if err != nil {
		c.add(CheckFilename, "", "%v; a wheel must be named NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl or installers refuse it", err)
		return
	}
	c.rep.Name, c.fnOK = fn, true
	canon, err := NewFilename(fn.Distribution, fn.Version, fn.Python, fn.ABI, fn.Platform)
	if err != nil {
		return // ParseFilename validated both; cannot happen
	}
	canon.Build = fn.Build
	if canon.String() != base {
		c.add(CheckFilename, "", "file name %q is not in canonical form: want %q (name lower-cased with runs of \"-_.\" as \"_\", version normalised); the specification requires writers to use it, and tools that compare names literally may not find the wheel", base, canon.String())
	}
}

func (c *wheelChecker) run(zr *zip.Reader) error {
	c.files = zr.File
	c.names = make(map[string]int, len(c.files))
	c.skip = map[*zip.File]bool{}
	c.buf = make([]byte, 64<<10)
	for _, f := range c.files {
		c.names[f.Name]++
	}
	c.checkNames()
	c.checkLayout()
	c.checkSizes()
	if err := c.checkRecord(); err != nil {
		return err
	}
	if err := c.checkMembers(); err != nil {
		return err
	}
	c.checkWheelFile()
	c.checkMetadata()
	c.checkEntryPoints()
	return nil
}

// checkEntryPoints checks .dist-info/entry_points.txt when there is one.
func (c *wheelChecker) checkEntryPoints() {
	if c.distDir == "" {
		return
	}
	c.mark(CheckEntryPoints)
	path := c.distDir + "/entry_points.txt"
	switch {
	case c.firstMember(path) == nil:
		return
	case !c.entryPointsRead:
		c.add(CheckEntryPoints, path, "entry_points.txt could not be read (see the %s or %s finding); its content is not checked", CheckZip, CheckBomb)
		return
	case c.entryPointsData == nil:
		c.add(CheckEntryPoints, path, "entry_points.txt is larger than %d bytes; its content is not checked", checkMaxTextBytes)
		return
	case !utf8.Valid(c.entryPointsData):
		c.add(CheckEntryPoints, path, "entry_points.txt is not valid UTF-8; installers read it as UTF-8 and may refuse it or read other names")
		return
	}
	c.checkLineBreaks(CheckEntryPoints, path, c.entryPointsData, false)
}

// isDirEntry reports whether a member is a folder entry.
func (c *wheelChecker) isDirEntry(f *zip.File) bool { return strings.HasSuffix(f.Name, "/") }

// unsafeReason says why a member name is unsafe, or "".
func (c *wheelChecker) unsafeReason(name string) string {
	switch {
	case name == "":
		return "the member name is empty"
	case !utf8.ValidString(name):
		return "the name is not valid UTF-8, which the wheel format requires"
	case strings.IndexByte(name, 0) >= 0:
		return "the name contains a NUL byte"
	case strings.IndexByte(name, '\\') >= 0:
		return `the name contains a backslash, a path separator on Windows`
	case name[0] == '/':
		return "the name is an absolute path; an installer could write outside its target"
	case len(name) >= 2 && name[1] == ':' && (name[0] >= 'A' && name[0] <= 'Z' || name[0] >= 'a' && name[0] <= 'z'):
		return "the name starts with a drive letter, an absolute path on Windows; an installer could write outside its target"
	}
	for _, el := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch el {
		case "..":
			return `the name has a ".." element (directory traversal); an installer could write outside its target`
		case "", ".":
			return `the name has an empty or "." element, so it does not match its RECORD path on every tool`
		}
	}
	return ""
}

// collisions finds member and folder names that are one name under
// Unicode normalisation (a CheckDuplicate finding) or that differ only in
// case (a CheckCaseCollision finding), reporting each such name once.
type collisions struct {
	c        *wheelChecker
	nfc      map[string]string // NFC form -> first spelling
	fold     map[string]string // folded form -> first spelling
	reported map[string]bool
}

// see registers path p (a member name without a trailing "/", or a folder
// name); shown is how findings name it.
func (k *collisions) see(p, shown string) {
	n := namefold.NFC(p)
	if prev, ok := k.nfc[n]; ok && prev != p {
		if !k.reported[p] {
			k.reported[p] = true
			k.c.add(CheckDuplicate, shown, "the name is %q under Unicode normalisation (NFC), spelled with other code points; macOS file systems keep one file for both, and tools that compare bytes see two: rename one", prev)
		}
		return
	} else if !ok {
		k.nfc[n] = p
	}
	f := namefold.Fold(p)
	if prev, ok := k.fold[f]; ok && prev != p {
		if !k.reported[p] {
			k.reported[p] = true
			k.c.add(CheckCaseCollision, shown, "the name differs from %q only in case; on macOS and Windows one overwrites the other: rename one", prev)
		}
	} else if !ok {
		k.fold[f] = p
	}
}

func (c *wheelChecker) checkNames() {
	c.mark(CheckUnsafePath, CheckSymlink, CheckSpecialFile, CheckDuplicate, CheckCaseCollision, CheckZip)
	reported := map[string]bool{}
	coll := &collisions{c: c, nfc: map[string]string{}, fold: map[string]string{}, reported: map[string]bool{}}
	dirs := map[string]bool{} // folders implied by names, without trailing "/"
	for _, f := range c.files {
		name := f.Name
		if why := c.unsafeReason(name); why != "" {
			c.add(CheckUnsafePath, name, "%s: rebuild the wheel with clean relative \"/\"-separated names", why)
		}
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			c.add(CheckSymlink, name, "the member is a symbolic link; wheels cannot carry links portably (pip writes the link target as a file, other installers refuse it): ship the target file instead")
		case mode&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0:
			c.add(CheckSpecialFile, name, "the member is a %s, not a regular file; a wheel holds regular files only", fsmode.Name(mode))
		}
		if f.Flags&0x1 != 0 {
			c.add(CheckZip, name, "the member is encrypted; installers cannot read it and its hash is not checked")
			c.skip[f] = true
		}
		if c.names[name] > 1 && !reported[name] {
			reported[name] = true
			c.add(CheckDuplicate, name, "%d members have this name; which one an installer writes depends on the tool (the zip central directory is ambiguous): keep one", c.names[name])
		}
		parts := strings.Split(name, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/")
			if !dirs[d] {
				dirs[d] = true
				coll.see(d, d+"/")
			}
		}
		if p := strings.TrimSuffix(name, "/"); p != "" && !(c.isDirEntry(f) && dirs[p]) {
			coll.see(p, name)
		}
	}
	for _, f := range c.files {
		if !c.isDirEntry(f) && dirs[f.Name] && !reported["dir:"+f.Name] {
			reported["dir:"+f.Name] = true
			c.add(CheckDuplicate, f.Name, "the name is a file and also a folder of other members; it cannot be extracted: rename one")
		}
	}
}

// matchesName reports whether dir ("NAME-VERSION" + suffix) names the
// file name's distribution and version after normalisation.
func (c *wheelChecker) matchesName(dir, suffix string) bool {
	base := strings.TrimSuffix(dir, suffix)
	i := strings.LastIndexByte(base, '-')
	if i < 0 {
		return false
	}
	return pyname.Normalize(base[:i]) == pyname.Normalize(c.rep.Name.Distribution) &&
		c.normVersion(base[i+1:]) == c.normVersion(c.rep.Name.Version)
}

// normVersion normalises a PEP 440 version; an invalid one is returned as
// is (it then matches nothing valid).
func (c *wheelChecker) normVersion(v string) string {
	pv, err := pep440.Parse(v)
	if err != nil {
		return "invalid:" + v
	}
	return pv.String()
}

func (c *wheelChecker) checkLayout() {
	c.mark(CheckDistInfo)
	tops := map[string]bool{}
	for _, f := range c.files {
		if top, _, ok := strings.Cut(f.Name, "/"); ok && top != "" {
			tops[top] = true
		}
	}
	var infos, datas []string
	for top := range tops {
		switch {
		case strings.HasSuffix(top, ".dist-info"):
			infos = append(infos, top)
		case strings.HasSuffix(top, ".data"):
			datas = append(datas, top)
		}
	}
	slices.Sort(infos)
	slices.Sort(datas)
	want := "NAME-VERSION.dist-info"
	if c.fnOK {
		want = c.rep.Name.DistInfo()
	}
	switch len(infos) {
	case 0:
		c.add(CheckDistInfo, want+"/", "the archive has no .dist-info folder at its top; every wheel has exactly one (with WHEEL, METADATA and RECORD): this is not an installable wheel")
		return
	case 1:
		c.distDir = infos[0]
	default:
		c.add(CheckDistInfo, "", "the archive has %d .dist-info folders (%s); a wheel has exactly one, and installers refuse more", len(infos), c.quoteList(infos))
		c.distDir = infos[0]
		if c.fnOK {
			for _, d := range infos {
				if c.matchesName(d, ".dist-info") {
					c.distDir = d
					break
				}
			}
		}
	}
	if c.fnOK && !c.matchesName(c.distDir, ".dist-info") {
		c.add(CheckDistInfo, c.distDir+"/", "the .dist-info folder does not match the file name: want %q; installers refuse a wheel whose metadata folder names another project or version", want)
	}
	subdirs := map[string]bool{}
	for _, f := range c.files {
		rest, ok := strings.CutPrefix(f.Name, c.distDir+"/")
		if !ok {
			continue
		}
		if sub, _, ok := strings.Cut(rest, "/"); ok && sub != "licenses" && sub != "sboms" && !subdirs[sub] {
			subdirs[sub] = true
			c.add(CheckDistInfo, c.distDir+"/"+sub+"/", "subfolders of .dist-info are reserved for future use, except licenses/ and sboms/: move these files")
		}
	}

	c.mark(CheckData)
	if len(datas) > 1 {
		c.add(CheckData, "", "the archive has %d .data folders (%s); a wheel has at most one", len(datas), c.quoteList(datas))
	}
	wantData := strings.TrimSuffix(c.distDir, ".dist-info") + ".data"
	for _, d := range datas {
		if c.fnOK && !c.matchesName(d, ".data") {
			c.add(CheckData, d+"/", "the .data folder does not match the file name: want %q; installers would install its files as package files", c.rep.Name.Data())
		} else if !c.fnOK && d != wantData {
			c.add(CheckData, d+"/", "the .data folder does not match the .dist-info folder %q", c.distDir)
		}
		badScheme := map[string]bool{}
		for _, f := range c.files {
			rest, ok := strings.CutPrefix(f.Name, d+"/")
			if !ok || rest == "" {
				continue
			}
			scheme, _, inSub := strings.Cut(rest, "/")
			if !inSub {
				c.add(CheckData, f.Name, "a file directly in the .data folder belongs to no install scheme; put it under purelib/, platlib/, headers/, scripts/ or data/")
				continue
			}
			switch scheme {
			case "purelib", "platlib", "headers", "scripts", "data":
			default:
				if !badScheme[scheme] {
					badScheme[scheme] = true
					c.add(CheckData, d+"/"+scheme+"/", "%q is not an install scheme; the known ones are purelib, platlib, headers, scripts and data, and installers refuse others", scheme)
				}
			}
		}
	}
}

// checkSizes finds decompression bombs from the declared sizes, and marks
// the members that will not be decompressed.
func (c *wheelChecker) checkSizes() {
	c.mark(CheckBomb)
	budget := uint64(CheckMaxTotalBytes)
	if b := float64(c.size)*CheckMaxRatio + CheckRatioAllowance; b < float64(budget) {
		budget = uint64(b)
	}
	var total uint64
	over := false
	for _, f := range c.files {
		if c.isDirEntry(f) {
			continue
		}
		u, z := f.UncompressedSize64, f.CompressedSize64
		limit := float64(z)*CheckMaxRatio + CheckRatioAllowance
		switch {
		case u > CheckMaxMemberBytes:
			c.add(CheckBomb, f.Name, "the member declares %d bytes, more than the %d a member may have; not decompressed, so its hash is not checked", u, uint64(CheckMaxMemberBytes))
			c.skip[f] = true
			continue
		case float64(u) > limit:
			c.add(CheckBomb, f.Name, "the member declares %d bytes from %d compressed (ratio above %d): a decompression bomb, or a lying header; not decompressed, so its hash is not checked", u, z, CheckMaxRatio)
			c.skip[f] = true
			continue
		}
		if over {
			c.skip[f] = true
			continue
		}
		if total+u > budget {
			over = true
			c.skip[f] = true
			c.add(CheckBomb, f.Name, "the members up to this one declare more than %d bytes in all, for a %d-byte archive (a decompression bomb); this member and those after it are not decompressed, so their hashes are not checked", budget, c.size)
			continue
		}
		total += u
	}
}

// readMember decompresses f once, writing its bytes to h (when not nil)
// and keeping up to keepMax bytes when keep is not nil. It returns the
// number of bytes read and whether more than keepMax were offered.
func readMember(f *zip.File, h hash.Hash, keep *bytes.Buffer, keepMax int, buf []byte) (int64, bool, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, false, err
	}
	defer rc.Close()
	var ws []io.Writer
	if h != nil {
		ws = append(ws, h)
	}
	kw := &checkCappedBuffer{buf: keep, max: keepMax}
	if keep != nil {
		ws = append(ws, kw)
	}
	w := io.Discard
	if len(ws) > 0 {
		w = io.MultiWriter(ws...)
	}
	limit := int64(math.MaxInt64)
	if f.UncompressedSize64 < math.MaxInt64 {
		limit = int64(f.UncompressedSize64) + 1
	}
	n, err := io.CopyBuffer(w, io.LimitReader(rc, limit), buf)
	return n, kw.over, err
}

// checkCappedBuffer keeps the first max bytes written to it.
type checkCappedBuffer struct {
	buf  *bytes.Buffer
	max  int
	over bool
}

func (b *checkCappedBuffer) Write(p []byte) (int, error) {
	room := b.max - b.buf.Len()
	if len(p) > room {
		b.over = true
		b.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	b.buf.Write(p)
	return len(p), nil
}

// readErr turns a member read error into a finding, or returns it when
// the reader itself failed.
func (c *wheelChecker) readErr(f *zip.File, err error) error {
	if e := c.src.firstErr(); e != nil {
		return fmt.Errorf("read member %q: %w", f.Name, e)
	}
	c.add(CheckZip, f.Name, "the member cannot be decompressed: %v; the archive is corrupt (obtain or build it again), and its hash is not checked", err)
	return nil
}

// firstMember returns the first member named name, or nil.
func (c *wheelChecker) firstMember(name string) *zip.File {
	for _, f := range c.files {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func (c *wheelChecker) checkRecord() error {
	if c.distDir == "" {
		return nil
	}
	c.mark(CheckRecord)
	path := c.distDir + "/RECORD"
	f := c.firstMember(path)
	if f == nil {
		c.add(CheckRecord, path, "RECORD is missing; installers refuse a wheel without it (it lists every file with its hash)")
		return nil
	}
	unread := func() {
		c.add(CheckRecord, path, "RECORD could not be read (see the %s or %s finding); no member's hash is checked", CheckZip, CheckBomb)
	}
	if c.skip[f] {
		unread()
		return nil
	}
	var data bytes.Buffer
	_, over, err := readMember(f, nil, &data, checkMaxTextBytes, c.buf)
	if err != nil {
		if err := c.readErr(f, err); err != nil {
			return err
		}
		unread()
		return nil
	}
	if over {
		c.add(CheckRecord, path, "RECORD is larger than %d bytes; not checked", checkMaxTextBytes)
		return nil
	}
	c.checkLineBreaks(CheckRecord, path, data.Bytes(), true)
	c.recordOK = true
	c.mark(CheckRecordDuplicate, CheckUnlisted, CheckMissing, CheckRecordHash, CheckRecordSize)
	c.rows = map[string]*recordRowCheck{}
	cr := csv.NewReader(&data)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	for errs := 0; errs < 100; {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				c.add(CheckRecord, path, "%v; RECORD must be CSV rows of path,hash,size", err)
				break
			}
			c.add(CheckRecord, path, "line %d: %v; RECORD must be CSV rows of path,hash,size", pe.Line, pe.Err)
			errs++
			continue
		}
		line, _ := cr.FieldPos(0) // valid: err is nil and rec has a field
		if len(rec) != 3 {
			c.add(CheckRecord, path, "line %d: %d fields, want path,hash,size", line, len(rec))
			errs++
			continue
		}
		c.addRecordRow(path, line, rec[0], rec[1], rec[2])
	}
	return nil
}

// checkLineBreaks adds a finding under id for the first character in data
// that Python would take for a line break and Go would not: a "\r" not
// followed by "\n" (universal newlines, the e-mail parser) and, with
// splitlines, the other separators of str.splitlines, with which pip
// splits RECORD.
func (c *wheelChecker) checkLineBreaks(id, member string, data []byte, splitlines bool) {
	line := 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		what := ""
		switch {
		case r == '\n':
			line++
		case r == '\r' && (i+1 >= len(data) || data[i+1] != '\n'):
			what = `a carriage return ("\r") not followed by a line feed`
		case splitlines && (r == '\v' || r == '\f' || r == 0x1c || r == 0x1d || r == 0x1e || r == 0x85 || r == 0x2028 || r == 0x2029):
			what = fmt.Sprintf("the line separator %U", r)
		}
		if what != "" {
			c.add(id, member, "line %d (byte %d) has %s; Python ends the line there and Go does not, so the two would read different %s: use \\n line ends only", line, i, what, member[strings.LastIndexByte(member, '/')+1:])
			return
		}
		i += size
	}
}

// addRecordRow checks one RECORD row and remembers it.
func (c *wheelChecker) addRecordRow(recordPath string, line int, p, h, size string) {
	if p == "" {
		c.add(CheckRecord, recordPath, "line %d: empty path", line)
		return
	}
	if prev, dup := c.rows[p]; dup {
		if !prev.dup {
			prev.dup = true
			c.add(CheckRecordDuplicate, p, "RECORD lists the path twice (lines %d and %d); installers keep one row and may check the wrong hash: list it once", prev.line, line)
		}
		return
	}
	row := &recordRowCheck{hash: h, sizeRaw: size, size: -1, line: line}
	c.rows[p] = row
	c.rowOrder = append(c.rowOrder, p)
	self := p == recordPath
	if self {
		if h != "" || size != "" {
			c.add(CheckRecord, recordPath, "line %d: RECORD's own row must have an empty hash and size (it cannot hash itself), not %q,%q", line, h, size)
		}
		return
	}
	if h != "" {
		algo, digest, ok := strings.Cut(h, "=")
		var want int
		switch algo {
		case "sha256":
			want = sha256.Size
		case "sha384":
			want = sha512.Size384
		case "sha512":
			want = sha512.Size
		}
		switch {
		case !ok:
			c.add(CheckRecord, p, "line %d: hash %q is not ALGORITHM=DIGEST", line, h)
		case algo == "md5" || algo == "sha1":
			c.add(CheckRecord, p, "line %d: hash algorithm %s is too weak; the wheel format requires sha256 or better", line, algo)
		case want == 0:
			c.add(CheckRecord, p, "line %d: hash algorithm %q is not one of sha256, sha384, sha512", line, algo)
		default:
			d, err := base64.RawURLEncoding.Strict().DecodeString(digest)
			switch {
			case err != nil:
				c.add(CheckRecord, p, "line %d: digest %q is not urlsafe base64 without padding", line, digest)
			case len(d) != want:
				c.add(CheckRecord, p, "line %d: %s digest has %d bytes, want %d", line, algo, len(d), want)
			default:
				row.algo, row.digest = algo, d
			}
		}
	}
	if size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 0 || (len(size) > 1 && size[0] == '0') || size[0] == '+' {
			c.add(CheckRecord, p, "line %d: size %q is not a decimal number of bytes", line, size)
		} else {
			row.size = n
		}
	}
}

// isSignature reports whether name is RECORD.jws or RECORD.p7s of the
// .dist-info folder, which RECORD does not list.
func (c *wheelChecker) isSignature(name string) bool {
	return c.distDir != "" && (name == c.distDir+"/RECORD.jws" || name == c.distDir+"/RECORD.p7s")
}

// newRecordHash returns the hash for a RECORD algorithm.
func (c *wheelChecker) newRecordHash(algo string) hash.Hash {
	switch algo {
	case "sha256":
		return sha256.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	}
	return nil
}

func (c *wheelChecker) checkMembers() error {
	recordPath := c.distDir + "/RECORD"
	wheelPath, metadataPath, epPath := c.distDir+"/WHEEL", c.distDir+"/METADATA", c.distDir+"/entry_points.txt"
	seen := map[string]bool{}
	// First, in member order, what each member needs; then the reads
	// (decompress and hash) on all cores; then the findings, in member
	// order again, so the report does not depend on scheduling.
	type job struct {
		f                           *zip.File
		row                         *recordRowCheck
		h                           hash.Hash
		keep                        *bytes.Buffer
		wantWheel, wantMeta, wantEP bool
		n                           int64
		over                        bool
		err                         error
	}
	var jobs []*job
	for _, f := range c.files {
		if c.isDirEntry(f) || (c.distDir != "" && f.Name == recordPath) {
			continue
		}
		first := !seen[f.Name]
		seen[f.Name] = true
		var row *recordRowCheck
		if c.recordOK && !c.isSignature(f.Name) {
			row = c.rows[f.Name]
			switch {
			case row == nil && first:
				c.add(CheckUnlisted, f.Name, "the member has no RECORD row; installers refuse a wheel with unlisted files: rebuild the wheel (or add the row)")
			case row != nil && first:
				if row.hash == "" {
					c.add(CheckRecordHash, f.Name, "the RECORD row has no hash; every member but RECORD must have one (sha256 or better)")
				}
				if row.sizeRaw == "" {
					c.add(CheckRecordSize, f.Name, "the RECORD row has no size; every member but RECORD must have one")
				}
			}
		}
		if c.skip[f] {
			continue
		}
		j := &job{f: f, row: row}
		if row != nil && row.digest != nil {
			j.h = c.newRecordHash(row.algo)
		}
		if c.distDir != "" {
			j.wantWheel = f.Name == wheelPath && !c.wheelRead
			j.wantMeta = f.Name == metadataPath && !c.metadataRead
			if j.wantWheel {
				c.wheelRead = true // the first such member is the one read
			}
			if j.wantMeta {
				c.metadataRead = true
			}
			j.wantEP = f.Name == epPath && !c.entryPointsRead
			if j.wantEP {
				c.entryPointsRead = true
			}
		}
		if j.wantWheel || j.wantMeta || j.wantEP {
			j.keep = &bytes.Buffer{}
		}
		jobs = append(jobs, j)
	}
	c.wheelRead, c.metadataRead, c.entryPointsRead = false, false, false
	next := make(chan *job)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), max(len(jobs), 1)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for j := range next {
				j.n, j.over, j.err = readMember(j.f, j.h, j.keep, checkMaxTextBytes, buf)
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	for _, j := range jobs {
		f, row, h := j.f, j.row, j.h
		if j.err != nil {
			if err := c.readErr(f, j.err); err != nil {
				return err
			}
			continue
		}
		switch {
		case j.wantWheel:
			c.wheelRead = true
			if !j.over {
				c.wheelData = j.keep.Bytes()
			}
		case j.wantMeta:
			c.metadataRead = true
			if !j.over {
				c.metadataData = j.keep.Bytes()
			}
		case j.wantEP:
			c.entryPointsRead = true
			if !j.over {
				c.entryPointsData = j.keep.Bytes()
			}
		}
		if row == nil {
			continue
		}
		if h != nil {
			if got := h.Sum(nil); !bytes.Equal(got, row.digest) {
				c.add(CheckRecordHash, f.Name, "RECORD says %s but the member hashes to %s=%s: the member changed after RECORD was written (or RECORD is stale); installers refuse it: rebuild the wheel",
					row.hash, row.algo, base64.RawURLEncoding.EncodeToString(got))
			}
		}
		if row.size >= 0 && row.size != j.n {
			c.add(CheckRecordSize, f.Name, "RECORD says %d bytes but the member has %d; installers refuse it: rebuild the wheel", row.size, j.n)
		}
	}
	if !c.recordOK {
		return nil
	}
	for _, p := range c.rowOrder {
		if c.names[p] == 0 {
			c.add(CheckMissing, p, "RECORD lists this path but the archive has no such member; the wheel is incomplete or RECORD is stale: rebuild the wheel")
		}
	}
	return nil
}

// textMember returns the content of a .dist-info member read while
// hashing, adding a finding under id when it is absent or unreadable.
func (c *wheelChecker) textMember(id, name string, read bool, data []byte) ([]byte, bool) {
	path := c.distDir + "/" + name
	switch f := c.firstMember(path); {
	case f == nil:
		c.add(id, path, "%s is missing; every wheel has one and installers refuse a wheel without it", name)
		return nil, false
	case !read:
		c.add(id, path, "%s could not be read (see the %s or %s finding); its content is not checked", name, CheckZip, CheckBomb)
		return nil, false
	case data == nil:
		c.add(id, path, "%s is larger than %d bytes; its content is not checked", name, checkMaxTextBytes)
		return nil, false
	}
	return data, true
}

func (c *wheelChecker) checkWheelFile() {
	if c.distDir == "" {
		return
	}
	c.mark(CheckWheelFile)
	path := c.distDir + "/WHEEL"
	data, ok := c.textMember(CheckWheelFile, "WHEEL", c.wheelRead, c.wheelData)
	if !ok {
		return
	}
	w, err := ParseMetadata(data)
	if err != nil {
		c.add(CheckWheelFile, path, "%v; WHEEL has the e-mail header format (\"Wheel-Version: 1.0\" lines)", err)
		return
	}
	one := func(field string) (string, bool) {
		vs := w.Values(field)
		switch len(vs) {
		case 0:
			c.add(CheckWheelFile, path, "no %s field; it is required", field)
			return "", false
		case 1:
			return vs[0], true
		}
		c.add(CheckWheelFile, path, "%d %s fields; want exactly one", len(vs), field)
		return "", false
	}
	if v, ok := one("Wheel-Version"); ok {
		major, minor, ok := strings.Cut(v, ".")
		switch {
		case !ok || !c.isDecimal(major) || !c.isDecimal(minor):
			c.add(CheckWheelFile, path, "Wheel-Version %q is not MAJOR.MINOR; write \"1.0\"", v)
		case strings.TrimLeft(major, "0") != "1":
			c.add(CheckWheelFile, path, "Wheel-Version %s is incompatible: installers implement major version 1 and must refuse any other; write \"1.0\"", v)
		}
	}
	if v, ok := one("Root-Is-Purelib"); ok && v != "true" && v != "false" {
		c.add(CheckWheelFile, path, "Root-Is-Purelib is %q; want \"true\" or \"false\" (installers differ on other spellings)", v)
	}
	builds := w.Values("Build")
	switch {
	case len(builds) > 1:
		c.add(CheckWheelFile, path, "%d Build fields; want at most one", len(builds))
	case !c.fnOK:
	case len(builds) == 1 && builds[0] != c.rep.Name.Build:
		if c.rep.Name.Build == "" {
			c.add(CheckWheelFile, path, "Build is %q but the file name has no build tag; drop the field or add the tag", builds[0])
		} else {
			c.add(CheckWheelFile, path, "Build is %q but the file name's build tag is %q", builds[0], c.rep.Name.Build)
		}
	case len(builds) == 0 && c.rep.Name.Build != "":
		c.add(CheckWheelFile, path, "no Build field, but the file name has build tag %q; write \"Build: %s\"", c.rep.Name.Build, c.rep.Name.Build)
	}
	if !c.fnOK {
		return
	}
	c.mark(CheckTagMismatch)
	want := map[string]bool{}
	for _, t := range c.rep.Name.Tags() {
		want[t] = true
	}
	got := map[string]bool{}
	for _, t := range w.Values("Tag") {
		got[t] = true
	}
	var missing, extra []string
	for t := range want {
		if !got[t] {
			missing = append(missing, t)
		}
	}
	for t := range got {
		if !want[t] {
			extra = append(extra, t)
		}
	}
	if len(missing)+len(extra) > 0 {
		slices.Sort(missing)
		slices.Sort(extra)
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, "the file name's "+c.quoteList(missing)+" not in WHEEL")
		}
		if len(extra) > 0 {
			parts = append(parts, "WHEEL's "+c.quoteList(extra)+" not in the file name")
		}
		c.add(CheckTagMismatch, path, "WHEEL's Tag lines are not the tags the file name expands to (%s); installers select wheels by file name and trust WHEEL after: rebuild the wheel", strings.Join(parts, "; "))
	}
}

// quoteList renders names quoted (so that control characters in them
// cannot garble a terminal) and comma-separated.
func (c *wheelChecker) quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// isDecimal reports whether s is a non-empty string of ASCII digits.
func (c *wheelChecker) isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// knownMetadataVersion reports whether mv (major*100+minor) is a known
// core metadata version.
func (c *wheelChecker) knownMetadataVersion(mv int) bool {
	switch mv {
	case 100, 101, 102, 201, 202, 203, 204, 205:
		return true
	}
	return false
}

// parseMetadataVersion parses "MAJOR.MINOR" as major*100+minor.
func (c *wheelChecker) parseMetadataVersion(v string) (int, bool) {
	major, minor, ok := strings.Cut(v, ".")
	if !ok || !c.isDecimal(major) || !c.isDecimal(minor) || len(major) > 3 || len(minor) > 2 {
		return 0, false
	}
	a, _ := strconv.Atoi(major)
	b, _ := strconv.Atoi(minor)
	return a*100 + b, true
}

// isSingleUseField reports whether a core metadata field may appear only
// once.
func (c *wheelChecker) isSingleUseField(name string) bool {
	switch strings.ToLower(name) {
	case "metadata-version", "name", "version", "summary", "description",
		"description-content-type", "keywords", "home-page", "download-url",
		"author", "author-email", "maintainer", "maintainer-email", "license",
		"license-expression", "requires-python":
		return true
	}
	return false
}

func (c *wheelChecker) checkMetadata() {
	if c.distDir == "" {
		return
	}
	c.mark(CheckMetadata)
	path := c.distDir + "/METADATA"
	data, ok := c.textMember(CheckMetadata, "METADATA", c.metadataRead, c.metadataData)
	if !ok {
		return
	}
	m, err := ParseMetadata(data)
	if err != nil {
		c.add(CheckMetadata, path, "%v; METADATA has the e-mail header format (\"Name: value\" lines, then the description)", err)
		return
	}
	c.rep.Metadata = m
	bad := func(format string, args ...any) { c.add(CheckMetadata, path, format, args...) }

	counts := map[string]int{}
	var order []string
	for _, f := range m.Fields {
		k := strings.ToLower(f[0])
		if counts[k] == 0 {
			order = append(order, f[0])
		}
		counts[k]++
	}
	for _, name := range order {
		if n := counts[strings.ToLower(name)]; n > 1 && c.isSingleUseField(name) {
			bad("%d %s fields; it may appear once", n, name)
		}
	}
	if counts["description"] > 0 && m.Description != m.Values("Description")[0] {
		bad("the description is both in a Description field and in the body; keep one (the body)")
	}

	mv := 0
	switch vs := m.Values("Metadata-Version"); {
	case len(vs) == 0:
		bad("no Metadata-Version field; it is required")
	default:
		v, ok := c.parseMetadataVersion(vs[0])
		switch {
		case !ok:
			bad("Metadata-Version %q is not MAJOR.MINOR", vs[0])
		case v/100 > 2:
			bad("Metadata-Version %s has a major version above 2; tools must refuse it", vs[0])
		case !c.knownMetadataVersion(v):
			bad("Metadata-Version %s is not a known version (1.0, 1.1, 1.2, 2.1, 2.2, 2.3, 2.4, 2.5)", vs[0])
		default:
			mv = v
		}
	}

	if len(m.Values("Name")) == 0 {
		bad("no Name field; it is required")
	} else if err := pyname.Valid(m.Name); err != nil {
		bad("Name: %v", err)
	} else if c.fnOK {
		c.mark(CheckNameMismatch)
		if pyname.Normalize(m.Name) != pyname.Normalize(c.rep.Name.Distribution) {
			c.add(CheckNameMismatch, path, "Name %q is not the file name's distribution %q (compared normalised); installers refuse the wheel: rebuild it", m.Name, c.rep.Name.Distribution)
		}
	}

	if len(m.Values("Version")) == 0 {
		bad("no Version field; it is required")
	} else if v, err := pep440.Parse(m.Version); err != nil {
		bad("Version: %v", err)
	} else if c.fnOK {
		c.mark(CheckVersionMismatch)
		if fv := c.normVersion(c.rep.Name.Version); v.String() != fv {
			c.add(CheckVersionMismatch, path, "Version %q (normalised %q) is not the file name's version %q; installers refuse the wheel: rebuild it", m.Version, v.String(), fv)
		}
	}

	if rp := m.Values("Requires-Python"); len(rp) > 0 {
		if _, err := pep440.ParseSpecifiers(rp[0]); err != nil {
			bad("Requires-Python: %v", err)
		}
	}
	for _, rd := range m.RequiresDist {
		if _, err := pep508.ParseRequirement(rd); err != nil {
			bad("Requires-Dist %q is not a PEP 508 requirement: %v", rd, err)
		}
	}
	if mv >= 201 {
		for _, e := range m.ProvidesExtra {
			if err := pyname.Valid(e); err != nil {
				bad("Provides-Extra %q is not a valid extra name: %v", e, err)
			}
		}
	}
	for _, d := range m.Values("Dynamic") {
		switch strings.ToLower(strings.TrimSpace(d)) {
		case "name", "version", "metadata-version":
			bad("Dynamic: %s may not be dynamic", d)
		}
	}
	if dct := m.Values("Description-Content-Type"); len(dct) > 0 {
		if msg := c.checkContentType(dct[0]); msg != "" {
			bad("Description-Content-Type %q: %s", dct[0], msg)
		}
	}
	hasExpr := len(m.Values("License-Expression")) > 0
	switch {
	case hasExpr && mv != 0 && mv < 204:
		bad("License-Expression needs Metadata-Version 2.4 or later, not %s; PyPI rejects the upload", m.MetadataVersion)
	case hasExpr && strings.TrimSpace(m.LicenseExpression) == "":
		bad("License-Expression is empty")
	case hasExpr && len(m.Values("License")) > 0:
		bad("both License-Expression and License are present; they are mutually exclusive (License is deprecated): drop License")
	case hasExpr:
		if err := spdxexpr.Check(m.LicenseExpression); err != nil {
			bad("License-Expression: %v", err)
		}
	}
	if mv >= 204 {
		c.checkLicenseFiles(m)
	}
}

// checkContentType checks a Description-Content-Type, returning what is
// wrong or "".
func (c *wheelChecker) checkContentType(v string) string {
	parts := strings.Split(v, ";")
	switch strings.ToLower(strings.TrimSpace(parts[0])) {
	case "text/plain", "text/x-rst", "text/markdown":
	default:
		return "the type must be text/plain, text/x-rst or text/markdown; PyPI rejects others"
	}
	for _, p := range parts[1:] {
		k, val, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "charset") && !strings.EqualFold(strings.Trim(strings.TrimSpace(val), `"`), "utf-8") {
			return "the only charset allowed is UTF-8"
		}
	}
	return ""
}

// checkLicenseFiles checks the License-File fields (PEP 639).
func (c *wheelChecker) checkLicenseFiles(m *Metadata) {
	c.mark(CheckLicenseFile)
	path := c.distDir + "/METADATA"
	seen := map[string]bool{}
	for _, lf := range m.LicenseFiles {
		if why := c.unsafeReason(lf); why != "" || strings.HasSuffix(lf, "/") {
			if why == "" {
				why = "the path names a folder"
			}
			c.add(CheckLicenseFile, path, "License-File %q: %s; it must be a relative \"/\"-separated path under .dist-info/licenses/", lf, why)
			continue
		}
		if seen[lf] {
			c.add(CheckLicenseFile, path, "License-File %q is listed twice", lf)
			continue
		}
		seen[lf] = true
		member := c.distDir + "/licenses/" + lf
		if c.names[member] == 0 {
			c.add(CheckLicenseFile, member, "METADATA names License-File %q but the wheel has no %s; Metadata-Version 2.4 requires every license file under .dist-info/licenses/: add the file or drop the field", lf, member)
		}
	}
}
