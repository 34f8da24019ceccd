package extract

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
)

// th is one raw tar header (and its data), for archives archive/tar will
// not write.
type th struct {
	name, link, prefix string
	typ                byte
	size               int64 // the size field; -1: len(body)
	magic              string
	body               []byte
}

func (h th) bytes() []byte {
	b := make([]byte, 512)
	copy(b[0:100], h.name)
	copy(b[100:], "0000644\x00")
	copy(b[108:], "0000000\x00")
	copy(b[116:], "0000000\x00")
	size := h.size
	if size < 0 {
		size = int64(len(h.body))
	}
	copy(b[124:], fmt.Sprintf("%011o\x00", size))
	copy(b[136:], "00000000000\x00")
	b[156] = h.typ
	copy(b[157:257], h.link)
	magic := h.magic
	if magic == "" {
		magic = "ustar\x0000"
	}
	copy(b[257:], magic)
	copy(b[345:500], h.prefix)
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	b = append(b, h.body...)
	return append(b, make([]byte, (512-len(h.body)%512)%512)...)
}

func reg(name, body string) th { return th{name: name, typ: '0', size: -1, body: []byte(body)} }

// paxHdr is a PAX extended ('x') or global ('g') header with records
// "key=value".
func paxHdr(typ byte, recs ...string) th {
	var b strings.Builder
	for _, r := range recs {
		// The length counts itself: find n with n = len(" r\n") + digits(n).
		n := 0
		for d := 1; ; d++ {
			if n = len(r) + 2 + d; len(fmt.Sprint(n)) == d {
				break
			}
		}
		fmt.Fprintf(&b, "%d %s\n", n, r)
	}
	return th{name: "PaxHeaders/x", typ: typ, size: -1, body: []byte(b.String())}
}

func gnuLong(typ byte, name string) th {
	return th{name: "././@LongLink", typ: typ, size: -1, magic: "ustar  \x00", body: []byte(name + "\x00")}
}

// tarOf joins headers and the end-of-archive marker; offsets gives where
// each header starts.
func tarOf(hs ...th) (data []byte, offsets []int64) {
	for _, h := range hs {
		offsets = append(offsets, int64(len(data)))
		data = append(data, h.bytes()...)
	}
	return append(data, make([]byte, 1024)...), offsets
}

// ambiguousCase is an archive that must be refused, naming entry (the
// name as stored, "" for the archive) and the offset of what is wrong.
type ambiguousCase struct {
	name   string
	data   []byte
	opts   Options
	want   error
	entry  string
	offset int64 // -1: none
	msg    string
	stream bool // read through a stream that cannot seek
}

func ambiguousCases(t testing.TB) []ambiguousCase {
	long := "pkg/" + strings.Repeat("deep/", 24) + "module.py" // 133 bytes
	var cs []ambiguousCase
	addTar := func(name string, want error, entry string, at int, msg string, hs ...th) {
		data, offs := tarOf(hs...)
		off := int64(-1)
		if at >= 0 {
			off = offs[at]
		}
		cs = append(cs, ambiguousCase{name: "tar/" + name, data: data, want: want, entry: entry, offset: off, msg: msg})
		cs = append(cs, ambiguousCase{name: "tar.gz/" + name, data: gzipBytes(t, data), want: want, entry: entry, offset: off, msg: msg, stream: true})
	}

	// Tar meta headers.
	addTar("global header with a path", ErrAmbiguous, "", 0, `global header sets "path"="evil.py"`,
		paxHdr('g', "path=evil.py"), reg("a.py", "x"))
	addTar("global header with a size", ErrAmbiguous, "", 0, `sets "size"="0"`,
		paxHdr('g', "size=0"), reg("a.py", "x"))
	addTar("global header with a linkpath", ErrAmbiguous, "", 0, `"linkpath"`,
		paxHdr('g', "comment=ok", "linkpath=/etc/passwd"), reg("a.py", "x"))
	addTar("global header between an extended header and its entry", ErrAmbiguous, "", 1, "global header comes between",
		paxHdr('x', "mtime=1"), paxHdr('g', "comment=x"), reg("a.py", "x"))
	addTar("two PAX headers in a row", ErrAmbiguous, "", 1, "two PAX extended headers",
		paxHdr('x', "path=good.py"), paxHdr('x', "path=evil.py"), reg("good.py", "x"))
	addTar("two GNU long names", ErrAmbiguous, "", 1, "two GNU long name headers",
		gnuLong('L', long), gnuLong('L', "evil.py"), reg(long[:100], "x"))
	addTar("two GNU long link names", ErrAmbiguous, "", 2, "two GNU long link name headers",
		reg("a", "x"), gnuLong('K', long), gnuLong('K', "a"), th{name: "h", typ: '1', link: "a"})
	addTar("GNU long name whose ustar name is elsewhere", ErrAmbiguous, long, 1, `header's own name field is "../../evil.py"`,
		gnuLong('L', long), reg("../../evil.py", "x"))
	addTar("GNU long link name whose ustar link is elsewhere", ErrAmbiguous, "h", 2, "own link field",
		reg("a", "x"), gnuLong('K', long), th{name: "h", typ: '1', link: "other"})
	addTar("PAX path and GNU long name", ErrAmbiguous, long, 2, "both a PAX path",
		paxHdr('x', "path=a.py"), gnuLong('L', long), reg(long[:100], "x"))
	addTar("PAX path that fits the ustar name but differs", ErrAmbiguous, "good.py", 1, `ustar name is "evil.py"`,
		paxHdr('x', "path=good.py"), reg("evil.py", "x"))
	addTar("unsafe ustar name behind a long PAX path", ErrAmbiguous, long, 1, `ustar name "../evil.py" behind the PAX path`,
		paxHdr('x', "path="+long), reg("../evil.py", "x"))
	addTar("PAX linkpath that fits but differs", ErrAmbiguous, "l", 1, "PAX linkpath",
		paxHdr('x', "linkpath=a"), th{name: "l", typ: '2', link: "b"})
	addTar("PAX size that differs from the ustar size", ErrAmbiguous, "a.py", 1, "PAX size is 0 but the ustar size field says 512",
		paxHdr('x', "size=0"), reg("a.py", strings.Repeat("x", 512)))
	addTar("symlink with data", ErrAmbiguous, "l", 0, "a symlink whose header declares 1024 bytes",
		th{name: "l", typ: '2', link: "a", size: -1, body: reg("hidden.py", "x").bytes()}, reg("a", "x"))
	addTar("hard link with data", ErrAmbiguous, "h", 1, "hard link whose header declares",
		reg("a", "x"), th{name: "h", typ: '1', link: "a", size: -1, body: []byte("data")})
	addTar("directory with data", ErrAmbiguous, "d/", 0, "directory whose header declares",
		th{name: "d/", typ: '5', size: -1, body: []byte("data")})
	addTar("legacy directory with data", ErrAmbiguous, "d/", 0, "directory whose header declares",
		th{name: "d/", typ: 0, size: -1, body: []byte("data")})
	addTar("GNU sparse file", ErrAmbiguous, "s", 0, "GNU sparse file",
		th{name: "s", typ: 'S', size: 0, magic: "ustar  \x00"})
	addTar("PAX sparse file", ErrAmbiguous, "", 0, "GNU.sparse.major",
		paxHdr('x', "GNU.sparse.major=1", "GNU.sparse.minor=0", "GNU.sparse.name=a"), reg("GNUSparseFile.0/a", ""))
	addTar("extended header at the end", ErrAmbiguous, "", 1, "followed by the end of the archive",
		reg("a", "x"), paxHdr('x', "path=b"))

	// Names that are one file on macOS or Windows.
	addTar("Unicode NFC collision", ErrDuplicate, "cafe\u0301.py", -1, "Unicode normalisation (NFC)",
		reg("caf\u00e9.py", "1"), reg("cafe\u0301.py", "2"))
	addTar("case collision", ErrDuplicate, "readme", -1, "differ only in case",
		reg("README", "1"), reg("readme", "2"))
	addTar("case collision through a folder", ErrDuplicate, "pkg/b.py", -1, `"pkg" and a path of entry 1`,
		reg("PKG/a.py", "1"), reg("pkg/b.py", "2"))
	addTar("Kelvin sign", ErrDuplicate, "\u212a.txt", -1, "Unicode normalisation",
		reg("K.txt", "1"), reg("\u212a.txt", "2"))

	// Zip.
	body := []byte("print('hello')\n")
	addZip := func(name string, want error, entry string, at func(a *zt.Archive) int64, msg string, a *zt.Archive) {
		data := a.Bytes()
		off := int64(-1)
		if at != nil {
			off = at(a)
		}
		cs = append(cs, ambiguousCase{name: "zip/" + name, data: data, want: want, entry: entry, offset: off, msg: msg})
		cs = append(cs, ambiguousCase{name: "zip stream/" + name, data: data, want: want, entry: entry, offset: off, msg: msg, stream: true})
	}
	first := func(a *zt.Archive) int64 { return a.Offsets[0] }
	cd := func(a *zt.Archive) int64 { return a.CDOffset }
	e := zt.Stored("good.py", body)
	e.LocalName = zt.Ptr("../evil.py")
	addZip("local header name differs", ErrAmbiguous, "good.py", first, `local header names the entry "../evil.py"`, &zt.Archive{Entries: []*zt.Entry{e}})
	e = zt.Deflated("a.py", body).WithDescriptor()
	e.Descriptor = zt.Descriptor(true, e.CRC32, uint32(len(e.Data)), 1<<20)
	addZip("data descriptor disagrees", ErrAmbiguous, "a.py", func(a *zt.Archive) int64 { return a.Offsets[0] + 30 + 4 + int64(len(a.Entries[0].Data)) },
		"the data descriptor says", &zt.Archive{Entries: []*zt.Entry{e}})
	inner := &zt.Archive{Entries: []*zt.Entry{zt.Stored("b.py", body)}}
	record := inner.Bytes()[:inner.CDOffset]
	b := zt.Stored("b.py", body)
	b.NoLocal, b.Offset = true, zt.Ptr(int64(34))
	addZip("overlapping files", ErrAmbiguous, "b.py", func(*zt.Archive) int64 { return 34 }, "overlap", &zt.Archive{Entries: []*zt.Entry{zt.Stored("a.py", record), b}})
	h := zt.Stored("hidden.py", body)
	h.NoCentral = true
	addZip("hidden entry first", ErrAmbiguous, "", func(*zt.Archive) int64 { return 0 }, "before the first entry", &zt.Archive{Entries: []*zt.Entry{h, zt.Stored("a.py", body)}})
	a := &zt.Archive{Entries: []*zt.Entry{zt.Stored("a.py", body)}}
	a.Trailing = []byte("junk")
	addZip("bytes after the end record", ErrAmbiguous, "", func(a *zt.Archive) int64 { return a.EndOffset + 22 }, "follow the end of central directory record", a)
	a = &zt.Archive{Entries: []*zt.Entry{zt.Stored("a.py", body)}, Comment: []byte("PK\x05\x06")}
	addZip("comment with a signature", ErrAmbiguous, "", func(a *zt.Archive) int64 { return a.EndOffset + 22 }, "comment holds a zip record signature", a)
	e = zt.Stored("caf\u00e9.py", body)
	e.Flags = 0
	addZip("name without the UTF-8 flag", ErrAmbiguous, "caf\u00e9.py", cd, "code page 437", &zt.Archive{Entries: []*zt.Entry{e}})
	e = zt.Stored("a.py", body)
	e.CentralExtra = zt.UnicodePath("a.py", "../evil.py")
	addZip("Unicode Path extra field", ErrAmbiguous, "a.py", cd, "Unicode Path", &zt.Archive{Entries: []*zt.Entry{e}})
	addZip("Unicode NFC collision", ErrDuplicate, "cafe\u0301.py", nil, "Unicode normalisation", &zt.Archive{Entries: []*zt.Entry{zt.Stored("caf\u00e9.py", body), zt.Stored("cafe\u0301.py", body)}})
	addZip("case collision", ErrDuplicate, "Setup.py", nil, "differ only in case", &zt.Archive{Entries: []*zt.Entry{zt.Stored("setup.py", body), zt.Stored("Setup.py", body)}})
	cs = append(cs, func() ambiguousCase {
		stub := &zt.Archive{Entries: []*zt.Entry{zt.Stored("stub", nil)}}
		sb := stub.Bytes()
		sb = sb[:stub.CDOffset] // a bare local record, as a prefix
		a := &zt.Archive{Entries: []*zt.Entry{zt.Stored("a.py", body)}}
		a.Bytes()
		a.Entries[0].Offset = zt.Ptr(a.Offsets[0])
		a.Prefix, a.CDOffsetDelta = sb, -int64(len(sb))
		return ambiguousCase{name: "zip/prepended data", data: a.Bytes(), want: ErrAmbiguous, entry: "", offset: 0, msg: "data was prepended"}
	}())
	return cs
}

// TestAmbiguous extracts each hostile archive: each is refused with an
// *EntryError naming the archive, the entry and the offset, and nothing
// is left behind.
func TestAmbiguous(t *testing.T) {
	for _, tt := range ambiguousCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "out")
			var r = bytes.NewReader(tt.data)
			var err error
			if tt.stream {
				_, err = Extract(context.Background(), "hostile.archive", streamOnly{r}, dest, tt.opts)
			} else {
				_, err = Extract(context.Background(), "hostile.archive", r, dest, tt.opts)
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			assertNothingLeft(t, parent)
			var ee *EntryError
			if !errors.As(err, &ee) {
				t.Fatalf("err %T is not an *EntryError", err)
			}
			if ee.Archive != "hostile.archive" || ee.Entry != tt.entry || ee.Offset != tt.offset {
				t.Errorf("EntryError names archive %q, entry %q, offset %d; want entry %q, offset %d", ee.Archive, ee.Entry, ee.Offset, tt.entry, tt.offset)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.msg) || !strings.HasPrefix(msg, "extract hostile.archive: ") ||
				(tt.offset >= 0 && !strings.Contains(msg, fmt.Sprintf("at offset %d: ", tt.offset))) {
				t.Errorf("message %q: want the archive, the offset and %q", msg, tt.msg)
			}
			if tt.want == ErrAmbiguous && !strings.Contains(msg, "repack it with a standard tool") {
				t.Errorf("message %q does not say what to do", msg)
			}
			t.Log(msg)
		})
	}
}

// TestUnambiguousAccepted: the long-name and global-header forms that real
// writers produce are accepted: archive/tar's PAX and GNU output, git
// archive's global comment, Python's tarfile and GNU tar in every format,
// and a git archive zip with its commit-id comment.
func TestUnambiguousAccepted(t *testing.T) {
	long := "pkg/" + strings.Repeat("deep/", 24) + "module.py"
	want := map[string]string{long: "file 0644 x", "pkg/caf\u00e9.py": "file 0644 y", "pkg/short.py": "file 0644 z"}
	for p := range maps.Clone(want) {
		for d := filepath.ToSlash(filepath.Dir(p)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
			want[d] = "dir 0755"
		}
	}
	archives := map[string][]byte{}
	for _, format := range []tar.Format{tar.FormatPAX, tar.FormatGNU} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if format == tar.FormatPAX {
			tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "0123456789abcdef0123456789abcdef01234567"}, Format: tar.FormatPAX})
		}
		for _, n := range []string{long, "pkg/caf\u00e9.py", "pkg/short.py"} {
			body := want[n][len("file 0644 "):]
			if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), Format: format}); err != nil {
				t.Fatal(err)
			}
			tw.Write([]byte(body))
		}
		tw.Close()
		archives["archive/tar "+format.String()] = buf.Bytes()
	}
	src := t.TempDir()
	for n, v := range want {
		p := filepath.Join(src, filepath.FromSlash(n))
		if strings.HasPrefix(v, "dir") {
			os.MkdirAll(p, 0o755)
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(v[len("file 0644 "):]), 0o644)
	}
	out := t.TempDir()
	tool := func(name string, args ...string) {
		dst := filepath.Join(out, strings.ReplaceAll(name, " ", "_"))
		cmd := exec.Command(args[0], append(args[1:], dst)...)
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Logf("%s: skipped (%v %s)", name, err, b)
			return
		}
		archives[name], _ = os.ReadFile(dst)
	}
	for _, f := range []string{"gnu", "pax", "oldgnu"} {
		tool("GNU tar "+f, "sh", "-c", `tar --format=`+f+` --sort=name -cf "$0" pkg`)
	}
	for _, f := range []string{"GNU_FORMAT", "PAX_FORMAT"} {
		tool("Python tarfile "+f, "python3", "-c", `import sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.`+f+`) as t: t.add("pkg")`)
	}
	tool("git archive tar", "sh", "-c", `git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x && git archive --format=tar -o "$0" HEAD`)
	tool("git archive zip", "sh", "-c", `git archive --format=zip -o "$0" HEAD`)

	for name, data := range archives {
		t.Run(name, func(t *testing.T) {
			dest, _, err := extractBytes(t, data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := listTree(t, dest); !maps.Equal(got, want) {
				t.Errorf("tree:\n got %q\nwant %q", got, want)
			}
		})
	}
	if len(archives) < 4 {
		t.Errorf("only %d archives made", len(archives))
	}
}

func TestAllowCaseCollisions(t *testing.T) {
	data, _ := tarOf(reg("README", "1"), reg("readme", "2"))
	dest, _, err := extractBytes(t, data, Options{AllowCaseCollisions: true})
	if err != nil {
		if errors.Is(err, ErrDuplicate) && strings.Contains(err.Error(), "already exists on disk") {
			t.Skip("the file system folds case")
		}
		t.Fatal(err)
	}
	if got := listTree(t, dest); !maps.Equal(got, map[string]string{"README": "file 0644 1", "readme": "file 0644 2"}) {
		t.Errorf("tree %q", got)
	}
	// Canonically equivalent names stay refused.
	data, _ = tarOf(reg("caf\u00e9", "1"), reg("cafe\u0301", "2"))
	if _, _, err := extractBytes(t, data, Options{AllowCaseCollisions: true}); !errors.Is(err, ErrDuplicate) {
		t.Errorf("NFC collision with AllowCaseCollisions: err = %v", err)
	}
}
