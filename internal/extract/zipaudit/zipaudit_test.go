package zipaudit_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
)

// hostile is an archive that must be reported.
type hostile struct {
	name string
	// build returns the archive; where gives the offset the problem must
	// name once it is built.
	build   func() *zt.Archive
	where   func(a *zt.Archive) int64
	member  string
	msg     string // a substring of the problem's message
	corrupt bool
}

func one(entries ...*zt.Entry) *zt.Archive { return &zt.Archive{Entries: entries} }

func local(i int) func(a *zt.Archive) int64 { return func(a *zt.Archive) int64 { return a.Offsets[i] } }

func at(off int64) func(*zt.Archive) int64 { return func(*zt.Archive) int64 { return off } }

// dataEnd is where entry i's data ends (its descriptor starts).
func dataEnd(i int) func(a *zt.Archive) int64 {
	return func(a *zt.Archive) int64 {
		e := a.Entries[i]
		return a.Offsets[i] + 30 + int64(len(e.Name)+len(e.LocalExtra)+len(e.Data))
	}
}

// Hostile lists the archives the audit must report, each built byte by
// byte. Python's zipfile reads several of them without complaint (see
// TestPythonReadsThemDifferently).
func Hostile() []hostile {
	body := []byte("print('hello')\n")
	return []hostile{
		{name: "local header name differs", build: func() *zt.Archive {
			e := zt.Stored("good.py", body)
			e.LocalName = zt.Ptr("evil.py")
			return one(e)
		}, where: local(0), member: "good.py", msg: `the local header names the entry "evil.py"`},
		{name: "local header flags differ", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.LocalFlags = zt.Ptr(uint16(0x8))
			return one(e)
		}, where: local(0), member: "a.py", msg: "flags are 0x0008"},
		{name: "local header method differs", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.LocalMethod = zt.Ptr(uint16(8))
			return one(e)
		}, where: local(0), member: "a.py", msg: "compression method is 8"},
		{name: "local header CRC differs", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.LocalCRC32 = zt.Ptr(e.CRC32 ^ 1)
			return one(e)
		}, where: local(0), member: "a.py", msg: "the local header says CRC-32"},
		{name: "local header size differs", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.LocalUSize = zt.Ptr(uint32(1))
			return one(e)
		}, where: local(0), member: "a.py", msg: "1 extracted"},
		{name: "data descriptor CRC differs", build: func() *zt.Archive {
			e := zt.Deflated("a.py", body).WithDescriptor()
			e.Descriptor = zt.Descriptor(true, e.CRC32^0xff, uint32(len(e.Data)), uint32(e.USize))
			return one(e)
		}, where: dataEnd(0), member: "a.py", msg: "the data descriptor says CRC-32"},
		{name: "data descriptor sizes differ", build: func() *zt.Archive {
			e := zt.Deflated("a.py", body).WithDescriptor()
			e.Descriptor = zt.Descriptor(false, e.CRC32, uint32(len(e.Data)), 4096)
			return one(e)
		}, where: dataEnd(0), member: "a.py", msg: "4096 extracted"},
		{name: "overlapping files (nested local header)", build: func() *zt.Archive {
			// "b.py"'s local record lies inside "a.py"'s stored data, and
			// the central directory lists both: the overlapping-files bomb.
			inner := one(zt.Stored("b.py", body))
			record := inner.Bytes()[:inner.CDOffset]
			a := zt.Stored("a.py", record)
			b := zt.Stored("b.py", body)
			b.NoLocal, b.Offset = true, zt.Ptr(int64(30+len("a.py")))
			return one(a, b)
		}, where: at(30 + 4), member: "b.py", msg: `overlap those of "a.py"`},
		{name: "two names for one local header", build: func() *zt.Archive {
			a := zt.Stored("a.py", body)
			b := zt.Stored("a.py", body)
			b.NoLocal, b.Offset = true, zt.Ptr(int64(0))
			return one(a, b)
		}, where: at(0), member: "a.py", msg: "overlap"},
		{name: "hidden entry before the first", build: func() *zt.Archive {
			h := zt.Stored("hidden.py", []byte("import os; os.system('evil')\n"))
			h.NoCentral = true
			return one(h, zt.Stored("a.py", body))
		}, where: at(0), member: "", msg: "bytes before the first entry belong to no entry"},
		{name: "hidden entry between two", build: func() *zt.Archive {
			h := zt.Stored("hidden.py", []byte("evil\n"))
			h.NoCentral = true
			return one(zt.Stored("a.py", body), h, zt.Stored("b.py", body))
		}, where: local(1), member: "b.py", msg: `between "a.py" and this entry`},
		{name: "bytes before the central directory", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.After = []byte("PK\x03\x04 and more")
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset - int64(len("PK\x03\x04 and more")) }, msg: "between the last entry"},
		{name: "prepended data, offsets not adjusted (self-extractor)", build: func() *zt.Archive {
			stub := []byte("MZ\x90\x00 a self-extracting stub")
			a := one(zt.Stored("a.py", body))
			a.Bytes()
			a.Entries[0].Offset = zt.Ptr(a.Offsets[0])
			a.Prefix, a.CDOffsetDelta = stub, -int64(len(stub))
			return a
		}, where: at(0), msg: "data was prepended to the archive"},
		{name: "prepended data, offsets adjusted (zip -A)", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body))
			a.Prefix = []byte("#!/bin/sh\nexec python3 \"$0\"\n")
			return a
		}, where: at(0), msg: "bytes before the first entry"},
		{name: "bytes after the end record", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body))
			a.Trailing = []byte("PK\x01\x02 trailing")
			return a
		}, where: func(a *zt.Archive) int64 { return a.EndOffset + 22 }, msg: "follow the end of central directory record"},
		{name: "comment with a record signature", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body))
			a.Comment = []byte("look: PK\x03\x04")
			return a
		}, where: func(a *zt.Archive) int64 { return a.EndOffset + 22 + 6 }, msg: "comment holds a zip record signature"},
		{name: "entry count differs", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body))
			a.Count = zt.Ptr(uint16(2))
			return a
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, msg: "announces 2 entries but the central directory holds 1"},
		{name: "zip64 end record disagrees", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body), zt.Stored("b.py", body))
			a.Zip64, a.Zip64Count = true, zt.Ptr(uint64(1))
			return a
		}, where: func(a *zt.Archive) int64 { return a.EndOffset }, msg: "zip64 end record's is 1"},
		{name: "non-ASCII name without the UTF-8 flag", build: func() *zt.Archive {
			e := zt.Stored("caf\u00e9.py", body)
			e.Flags &^= 0x800
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, member: "caf\u00e9.py", msg: `code page 437, giving "caf├⌐.py"`},
		{name: "UTF-8 flag on a name that is not UTF-8", build: func() *zt.Archive {
			e := zt.Stored("caf\xe9.py", body)
			e.Flags |= 0x800
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, member: "caf\xe9.py", msg: "not valid UTF-8"},
		{name: "Unicode Path extra field names another file", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.CentralExtra = zt.UnicodePath("a.py", "evil.py")
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, member: "a.py", msg: `Unicode Path extra field names the entry "evil.py"`},
		{name: "stored entry with two sizes", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.USize = 4096
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, member: "a.py", msg: "stored (not compressed)"},
		{name: "malformed extra field", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.CentralExtra = []byte{0x55, 0x54, 50, 0, 1}
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.CDOffset }, member: "a.py", msg: "extra field 0x5455 declares 50 bytes"},
		{name: "local header offset points at nothing", build: func() *zt.Archive {
			e := zt.Stored("a.py", body)
			e.Offset = zt.Ptr(int64(7))
			return one(e)
		}, where: func(a *zt.Archive) int64 { return a.Central[0] }, member: "a.py", msg: "puts the local header at offset 7, where there is none", corrupt: true},
		{name: "truncated", build: func() *zt.Archive {
			a := one(zt.Stored("a.py", body))
			a.Trailing = nil
			return a
		}, where: at(0), msg: "no end of central directory record", corrupt: true},
	}
}

// build renders a hostile case (the truncated one cut short).
func (h hostile) bytes() (*zt.Archive, []byte) {
	a := h.build()
	b := a.Bytes()
	if h.name == "truncated" {
		b = b[:a.EndOffset]
	}
	return a, b
}

func TestHostile(t *testing.T) {
	for _, h := range Hostile() {
		t.Run(h.name, func(t *testing.T) {
			a, b := h.bytes()
			rep, err := zipaudit.Audit(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 {
				t.Fatalf("no problem reported")
			}
			p := rep.Problems[0]
			if p.Member != h.member || p.Offset != h.where(a) || !strings.Contains(p.Msg, h.msg) || p.Corrupt != h.corrupt {
				t.Errorf("first problem %+v\nwant member %q, offset %d, corrupt %v, message with %q", p, h.member, h.where(a), h.corrupt, h.msg)
			}
			if err := rep.Err(); err == nil || !strings.Contains(err.Error(), h.msg) {
				t.Errorf("Err() = %v", err)
			}
			t.Log(rep.Err())
		})
	}
}

// TestValid: archives the builder makes without defects, and the
// variations writers use, have no problem.
func TestValid(t *testing.T) {
	body := []byte(strings.Repeat("data ", 100))
	tests := map[string]*zt.Archive{
		"empty":      one(),
		"stored":     one(zt.Stored("a.txt", body)),
		"deflated":   one(zt.Deflated("a.txt", body), zt.Deflated("dir/b.txt", body)),
		"descriptor": one(zt.Deflated("a.txt", body).WithDescriptor(), zt.Stored("b", nil).WithDescriptor()),
		"descriptor without sig": func() *zt.Archive {
			e := zt.Deflated("a.txt", body).WithDescriptor()
			e.Descriptor = e.Descriptor[4:]
			return one(e)
		}(),
		"descriptor and sizes": func() *zt.Archive {
			e := zt.Deflated("a.txt", body).WithDescriptor()
			e.LocalCRC32, e.LocalCSize, e.LocalUSize = nil, nil, nil
			return one(e)
		}(),
		"UTF-8 name": one(zt.Stored("caf\u00e9/\u00fcber.txt", body)),
		"Unicode Path agreeing": func() *zt.Archive {
			e := zt.Stored("caf\u00e9", body)
			e.CentralExtra = zt.UnicodePath(e.Name, e.Name)
			return one(e)
		}(),
		"plain comment": func() *zt.Archive {
			a := one(zt.Stored("a", body))
			a.Comment = []byte("4b825dc642cb6eb9a060e54bf8d69288fbee4904")
			return a
		}(),
		"zip64 end records":     func() *zt.Archive { a := one(zt.Stored("a", body), zt.Stored("b", body)); a.Zip64 = true; return a }(),
		"zero padding in extra": func() *zt.Archive { e := zt.Stored("a", body); e.LocalExtra = []byte{0, 0}; return one(e) }(),
		"directory entry":       one(zt.Stored("dir/", nil), zt.Stored("dir/a", body)),
	}
	for name, a := range tests {
		t.Run(name, func(t *testing.T) {
			b := a.Bytes()
			rep, err := zipaudit.Audit(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if len(rep.Entries) != len(a.Entries) {
				t.Errorf("%d entries, want %d", len(rep.Entries), len(a.Entries))
			}
			if zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b))); err != nil || len(zr.File) != len(a.Entries) {
				t.Errorf("archive/zip: %v", err)
			}
		})
	}
}

// TestWriters: what common writers produce has no problem: archive/zip
// (data descriptors, raw), Python's zipfile (to a file, to a pipe, zip64),
// Info-ZIP zip (to a file, streaming, with a comment) and git archive.
func TestWriters(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"pkg/__init__.py": "x = 1\n", "pkg/caf\u00e9.txt": "unicode\n", "pkg/empty": "",
		"pkg/" + strings.Repeat("long", 40) + ".txt": strings.Repeat("compressible ", 500),
	}
	src := filepath.Join(dir, "src")
	for name, data := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	archives := map[string][]byte{}

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		for _, m := range []uint16{zip.Store, zip.Deflate} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name + "." + string(rune('0'+m)), Method: m})
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(data))
		}
	}
	zw.SetComment("made by archive/zip")
	zw.Close()
	archives["archive/zip"] = buf.Bytes()

	run := func(name string, cmd *exec.Cmd, out string) {
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Logf("%s: skipped: %v %s", name, err, b)
			return
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		archives[name] = b
	}
	py := `import sys, zipfile, os
mode, out = sys.argv[1], sys.argv[2]
f = open(out, "wb") if mode != "pipe" else os.fdopen(os.dup(1), "wb")
class Unseekable:
    def __init__(s, f): s.f = f
    def write(s, b): return s.f.write(b)
    def flush(s): s.f.flush()
z = zipfile.ZipFile(Unseekable(f) if mode == "pipe" else f, "w", zipfile.ZIP_DEFLATED)
for root, _, names in os.walk("."):
    for n in sorted(names):
        p = os.path.join(root, n)[2:]
        if mode == "zip64":
            with z.open(p, "w", force_zip64=True) as w: w.write(open(p, "rb").read())
        else:
            z.write(p)
z.close(); f.close()
`
	for _, mode := range []string{"file", "zip64"} {
		out := filepath.Join(dir, "py-"+mode+".zip")
		run("python "+mode, exec.Command("python3", "-c", py, mode, out), out)
	}
	pipeOut := filepath.Join(dir, "py-pipe.zip")
	if f, err := os.Create(pipeOut); err == nil {
		cmd := exec.Command("python3", "-c", py, "pipe", "-")
		cmd.Dir, cmd.Stdout = src, f
		if err := cmd.Run(); err == nil {
			f.Close()
			archives["python pipe"], _ = os.ReadFile(pipeOut)
		} else {
			f.Close()
			t.Logf("python pipe: skipped: %v", err)
		}
	}
	out := filepath.Join(dir, "infozip.zip")
	run("zip", exec.Command("zip", "-qr", "-X", out, "."), out)
	streamOut := filepath.Join(dir, "infozip-stream.zip")
	run("zip streaming", exec.Command("sh", "-c", "zip -qr -X -fd - . > "+streamOut), streamOut)
	commentOut := filepath.Join(dir, "infozip-comment.zip")
	run("zip comment", exec.Command("sh", "-c", "zip -qr -X "+commentOut+" . && echo 'a comment' | zip -qz "+commentOut), commentOut)
	gitOut := filepath.Join(dir, "git.zip")
	run("git archive", exec.Command("sh", "-c", "git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm x && git archive --format=zip -o "+gitOut+" HEAD"), gitOut)

	for name, b := range archives {
		rep, err := zipaudit.Audit(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Info-ZIP zip 3.0 stores non-ASCII names without the UTF-8 flag
		// (whatever -UN says), and Python's zipfile then reads
		// "pkg/caf├⌐.txt": a real disagreement, and the only problem.
		for _, p := range rep.Problems {
			if !strings.HasPrefix(name, "zip") || p.Member != "pkg/caf\u00e9.txt" || !strings.Contains(p.Msg, "code page 437") {
				t.Errorf("%s: %v", name, p)
			}
		}
		t.Logf("%s: %d entries, comment %q, %d problems", name, len(rep.Entries), rep.Comment, len(rep.Problems))
	}
	for _, need := range []string{"archive/zip"} {
		if archives[need] == nil {
			t.Errorf("%s archive missing", need)
		}
	}
}

// TestPythonReadsThemDifferently shows, with Python's zipfile (what pip
// uses), that hostile archives are not merely broken: Python opens several
// of them and sees something other than Go's archive/zip or a streaming
// reader would.
func TestPythonReadsThemDifferently(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	cases := map[string]string{}
	for _, h := range Hostile() {
		_, b := h.bytes()
		p := filepath.Join(dir, strings.ReplaceAll(h.name, " ", "_")+".zip")
		os.WriteFile(p, b, 0o644)
		cases[h.name] = p
	}
	script := `import json, sys, zipfile
out = {}
for arg in sys.argv[1:]:
    try:
        z = zipfile.ZipFile(arg)
        names = z.namelist()
        data = [z.read(n).decode("latin-1") for n in names]
        out[arg] = {"names": names, "data": data}
    except Exception as e:
        out[arg] = {"error": type(e).__name__ + ": " + str(e)}
print(json.dumps(out))
`
	args := []string{"-c", script}
	for _, p := range cases {
		args = append(args, p)
	}
	b, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]struct {
		Names []string `json:"names"`
		Data  []string `json:"data"`
		Error string   `json:"error"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for name, p := range cases {
		t.Logf("%-55s python: %+v", name, got[p])
	}
	// Python refuses a local name that differs, so a streaming reader and
	// Python disagree on whether the archive can be read at all.
	if r := got[cases["local header name differs"]]; !strings.Contains(r.Error, "differ") {
		t.Errorf("local name: Python gave %+v, want a 'differ' error", r)
	}
	// Python silently compensates for prepended data.
	if r := got[cases["prepended data, offsets not adjusted (self-extractor)"]]; r.Error != "" || len(r.Names) != 1 || r.Names[0] != "a.py" {
		t.Errorf("prepended: Python gave %+v, want it to read a.py", r)
	}
	// Python decodes an unflagged non-ASCII name as code page 437.
	if r := got[cases["non-ASCII name without the UTF-8 flag"]]; len(r.Names) != 1 || r.Names[0] != "caf├⌐.py" {
		t.Errorf("cp437: Python gave %+v", r)
	}
	// Python ignores the Unicode Path field and hidden entries, and reads
	// a local header's CRC or a descriptor's sizes without complaint.
	for _, name := range []string{"Unicode Path extra field names another file", "hidden entry before the first", "hidden entry between two", "local header CRC differs", "data descriptor sizes differ", "bytes after the end record"} {
		if r := got[cases[name]]; r.Error != "" {
			t.Errorf("%s: Python refused it (%s); the case should be one Python reads", name, r.Error)
		}
	}
	// Info-ZIP unzip honours the Unicode Path field: it sees "evil.py".
	if unzip, err := exec.LookPath("unzip"); err == nil {
		out, _ := exec.Command(unzip, "-Z1", cases["Unicode Path extra field names another file"]).Output()
		if strings.TrimSpace(string(out)) != "evil.py" {
			t.Errorf("unzip -Z1 lists %q, want evil.py", out)
		}
	}
}

// TestReadError: a failing reader is an error, not a problem.
func TestReadError(t *testing.T) {
	_, err := zipaudit.Audit(failReader{}, 1000)
	if !errors.Is(err, errFail) {
		t.Fatalf("err = %v", err)
	}
}

var errFail = errors.New("disk on fire")

type failReader struct{}

func (failReader) ReadAt([]byte, int64) (int, error) { return 0, errFail }

// TestRealArchives audits the wheels and zips installed on the machine
// (CPython's bundled and test wheels, Go module zips): none has a problem,
// except the CPython test file made to have a code page 437 name.
func TestRealArchives(t *testing.T) {
	var paths []string
	for _, pat := range []string{
		"/usr/share/python-wheels/*.whl",
		"/root/.pyenv/versions/*/lib/python3*/ensurepip/_bundled/*.whl",
		"/root/.pyenv/versions/*/lib/python3*/test/*.whl",
		"/root/.pyenv/versions/*/lib/python3*/test/*/*.zip",
		"/root/go/pkg/mod/cache/download/*/*/@v/*.zip",
		"/root/go/pkg/mod/cache/download/*/*/*/@v/*.zip",
	} {
		m, _ := filepath.Glob(pat)
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Skip("no archives on this machine")
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		rep, err := zipaudit.Audit(f, st.Size())
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		cp437 := strings.HasSuffix(p, "zip_cp437_header.zip")
		if got := rep.Err() != nil; got != cp437 {
			t.Errorf("%s: %v", p, rep.Err())
		}
	}
	t.Logf("%d archives audited", len(paths))
}

// FuzzAudit: no input makes Audit panic or report offsets outside the
// archive; an archive without problems opens with archive/zip, which
// lists the same names.
func FuzzAudit(f *testing.F) {
	for _, h := range Hostile() {
		_, b := h.bytes()
		f.Add(b)
	}
	f.Add(one(zt.Deflated("a", []byte("aaaa")).WithDescriptor(), zt.Stored("b/", nil)).Bytes())
	a := one(zt.Stored("a", []byte("x")))
	a.Zip64 = true
	f.Add(a.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := zipaudit.Audit(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Problems) > 100 {
			t.Fatalf("%d problems", len(rep.Problems))
		}
		for _, p := range rep.Problems {
			if p.Offset < 0 || p.Offset > int64(len(b)) || p.Msg == "" {
				t.Fatalf("problem %+v in a %d-byte archive", p, len(b))
			}
		}
		if len(rep.Problems) > 0 {
			return
		}
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
			t.Fatalf("no problem, but archive/zip refuses it: %v", err)
		}
		if len(zr.File) != len(rep.Entries) {
			t.Fatalf("archive/zip lists %d entries, the audit %d", len(zr.File), len(rep.Entries))
		}
		for i, f := range zr.File {
			e := rep.Entries[i]
			if f.Name != e.Name || f.CRC32 != e.CRC32 || f.CompressedSize64 != e.CompressedSize || f.UncompressedSize64 != e.UncompressedSize {
				t.Fatalf("entry %d: archive/zip %q %x %d %d, audit %+v", i, f.Name, f.CRC32, f.CompressedSize64, f.UncompressedSize64, e)
			}
			if off, err := f.DataOffset(); err == nil && off != e.DataOffset {
				t.Fatalf("entry %d: archive/zip data at %d, audit %d", i, off, e.DataOffset)
			}
		}
	})
}

// AuditLimit stops at once on an archive with more entries than its
// limit: on the count the end record announces, or, when that count is
// low, on the central directory header past the limit.
func TestAuditLimit(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(n))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	five := buf.Bytes()
	// The same archive whose end record announces 3 entries.
	lying := bytes.Clone(five)
	end := bytes.LastIndex(lying, []byte("PK\x05\x06"))
	lying[end+8], lying[end+10] = 3, 3
	for _, tc := range []struct {
		name     string
		data     []byte
		max      uint64
		tooMany  bool
		declared uint64
		entries  int // read before stopping
	}{
		{"within the limit", five, 5, false, 5, 5},
		{"no limit", five, 0, false, 5, 5},
		{"announced over the limit", five, 4, true, 5, 0},
		{"announced within, held over", lying, 4, true, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := zipaudit.AuditLimit(bytes.NewReader(tc.data), int64(len(tc.data)), tc.max)
			if err != nil {
				t.Fatal(err)
			}
			if rep.TooMany != tc.tooMany || rep.Declared != tc.declared || len(rep.Entries) != tc.entries {
				t.Errorf("TooMany %v, Declared %d, %d entries read; want %v, %d, %d", rep.TooMany, rep.Declared, len(rep.Entries), tc.tooMany, tc.declared, tc.entries)
			}
			if !tc.tooMany && len(rep.Problems) > 0 {
				t.Errorf("problems: %v", rep.Problems)
			}
		})
	}
}
