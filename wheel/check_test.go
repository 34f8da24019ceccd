package wheel_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
	"github.com/mkrelease/mkrelease/wheel"
)

// chkMember is one member of a test wheel.
type chkMember struct {
	name   string
	data   string
	mode   fs.FileMode // 0: 0644
	stored bool
}

// chkWheel describes a test wheel: its file name and members. RECORD is
// computed by build unless noRecord is set (or a RECORD member is given).
type chkWheel struct {
	file     string
	members  []chkMember
	noRecord bool
	// after RECORD is computed: members added, removed or changed
	edit func(w *chkWheel)
}

const (
	chkFile     = "demo_pkg-1.0.0-py3-none-any.whl"
	chkDistInfo = "demo_pkg-1.0.0.dist-info"
)

const chkMetadata = `Metadata-Version: 2.4
Name: demo-pkg
Version: 1.0.0
Summary: A demonstration package
License-Expression: MIT
License-File: LICENSE
Requires-Python: >=3.9
Requires-Dist: requests>=2; extra == "http"
Provides-Extra: http
Project-URL: Source, https://example.invalid/demo
Classifier: Programming Language :: Python :: 3
Keywords: demo,example
Description-Content-Type: text/markdown

# demo-pkg

A package for tests.
`

const chkWheelFile = `Wheel-Version: 1.0
Generator: mkrelease test
Root-Is-Purelib: true
Tag: py3-none-any
`

// chkValid returns a valid wheel description: package files, a .data
// script, a license under .dist-info/licenses and the three metadata files.
func chkValid() *chkWheel {
	return &chkWheel{
		file: chkFile,
		members: []chkMember{
			{name: "demo_pkg/__init__.py", data: "from .core import run\n"},
			{name: "demo_pkg/core.py", data: strings.Repeat("def run():\n    return 42\n", 50)},
			{name: "demo_pkg/empty.txt", data: "", stored: true},
			{name: "demo_pkg-1.0.0.data/scripts/demo", data: "#!python\nimport demo_pkg\n", mode: 0o755},
			{name: chkDistInfo + "/licenses/LICENSE", data: "MIT License\n"},
			{name: chkDistInfo + "/METADATA", data: chkMetadata},
			{name: chkDistInfo + "/WHEEL", data: chkWheelFile},
		},
	}
}

// set replaces the data of the named member.
func (w *chkWheel) set(name, data string) *chkWheel {
	for i := range w.members {
		if w.members[i].name == name {
			w.members[i].data = data
			return w
		}
	}
	panic("no member " + name)
}

// remove drops the named member (every one of that name).
func (w *chkWheel) remove(name string) *chkWheel {
	w.members = slices.DeleteFunc(w.members, func(m chkMember) bool { return m.name == name })
	return w
}

// add appends a member.
func (w *chkWheel) add(m chkMember) *chkWheel {
	w.members = append(w.members, m)
	return w
}

// then sets the edit applied after RECORD is computed.
func (w *chkWheel) then(edit func(w *chkWheel)) *chkWheel {
	w.edit = edit
	return w
}

// record renders RECORD for the members, with its own row last.
func (w *chkWheel) record(t testing.TB) string {
	var rows []wheel.RecordRow
	for _, m := range w.members {
		if strings.HasSuffix(m.name, "/") {
			continue
		}
		rows = append(rows, wheel.RecordRow{Path: m.name, Hash: wheel.RecordHashOf([]byte(m.data)), Size: int64(len(m.data))})
	}
	rows = append(rows, wheel.RecordRow{Path: chkDistInfo + "/RECORD", Size: -1})
	b, err := wheel.WriteRecord(rows)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// build renders the wheel as zip bytes.
func (w *chkWheel) build(t testing.TB) []byte {
	hasRecord := slices.ContainsFunc(w.members, func(m chkMember) bool { return m.name == chkDistInfo+"/RECORD" })
	if !w.noRecord && !hasRecord {
		w.members = append(w.members, chkMember{name: chkDistInfo + "/RECORD", data: w.record(t)})
	}
	if w.edit != nil {
		w.edit(w)
	}
	return chkZip(t, w.members)
}

// chkZip writes members into a zip archive.
func chkZip(t testing.TB, members []chkMember) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		h := &zip.FileHeader{Name: m.name, Method: zip.Deflate}
		if m.stored || strings.HasSuffix(m.name, "/") {
			h.Method = zip.Store
		}
		mode := m.mode
		if mode == 0 {
			mode = 0o644
		}
		if strings.HasSuffix(m.name, "/") {
			mode |= fs.ModeDir
		}
		h.SetMode(mode)
		zf, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zf.Write([]byte(m.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// chkCheck runs CheckReader on the wheel.
func chkCheck(t testing.TB, w *chkWheel) *wheel.Report {
	t.Helper()
	data := w.build(t)
	rep, err := wheel.CheckReader(w.file, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("CheckReader: %v", err)
	}
	chkInvariants(t, rep)
	return rep
}

// chkInvariants checks what holds for every report.
func chkInvariants(t testing.TB, rep *wheel.Report) {
	t.Helper()
	for _, f := range rep.Findings {
		if !slices.Contains(rep.Checks, f.Check) {
			t.Errorf("finding %v: check %q not in Checks %v", f, f.Check, rep.Checks)
		}
		if f.Msg == "" {
			t.Errorf("finding %v has no message", f)
		}
		if f.File != filepath.Base(rep.File) {
			t.Errorf("finding %v: File %q, want the wheel's name %q", f, f.File, filepath.Base(rep.File))
		}
	}
	if o := rep.Outcome(); o.Subject != rep.File || !slices.Equal(o.Checks, rep.Checks) || len(o.Findings) != len(rep.Findings) {
		t.Errorf("Outcome() = %+v", o)
	}
	if (rep.Err() == nil) != (len(rep.Findings) == 0) {
		t.Errorf("Err() = %v with %d findings", rep.Err(), len(rep.Findings))
	}
}

var chkAllChecks = []string{
	"filename", "zip", "unsafe-path", "symlink", "special-file", "duplicate", "case-collision",
	"dist-info", "data", "bomb", "record", "record-duplicate", "unlisted", "missing",
	"record-hash", "record-size", "wheel-file", "tag-mismatch", "metadata", "name-mismatch",
	"version-mismatch", "license-file", "entry-points",
}

func TestCheckValidWheel(t *testing.T) {
	rep := chkCheck(t, chkValid())
	if len(rep.Findings) != 0 {
		t.Fatalf("findings on a valid wheel:\n%v", rep.Err())
	}
	if err := rep.Err(); err != nil {
		t.Fatalf("Err() = %v", err)
	}
	if !slices.Equal(rep.Checks, chkAllChecks) {
		t.Errorf("Checks = %q\nwant     %q", rep.Checks, chkAllChecks)
	}
	if rep.Name.Distribution != "demo_pkg" || rep.Name.Version != "1.0.0" {
		t.Errorf("Name = %+v", rep.Name)
	}
	m := rep.Metadata
	if m == nil {
		t.Fatal("Metadata is nil")
	}
	if m.Name != "demo-pkg" || m.Version != "1.0.0" || m.LicenseExpression != "MIT" ||
		!slices.Equal(m.LicenseFiles, []string{"LICENSE"}) || !strings.HasPrefix(m.Description, "# demo-pkg") {
		t.Errorf("Metadata = %+v", m)
	}
}

func TestCheckFindings(t *testing.T) {
	di := chkDistInfo + "/"
	tests := []struct {
		name   string
		wheel  *chkWheel
		check  string
		member string
		// absent lists checks that must not have run
		absent []string
	}{
		{
			name: "flipped byte in a member",
			wheel: chkValid().then(func(w *chkWheel) {
				w.set("demo_pkg/__init__.py", "from .core import ruN\n")
			}),
			check: "record-hash", member: "demo_pkg/__init__.py",
		},
		{
			name:  "member missing from RECORD",
			wheel: chkValid().then(func(w *chkWheel) { w.add(chkMember{name: "demo_pkg/extra.py", data: "x = 1\n"}) }),
			check: "unlisted", member: "demo_pkg/extra.py",
		},
		{
			name:  "RECORD row for a missing member",
			wheel: chkValid().then(func(w *chkWheel) { w.remove("demo_pkg/core.py") }),
			check: "missing", member: "demo_pkg/core.py",
		},
		{
			name: "wrong size",
			wheel: chkValid().then(func(w *chkWheel) {
				r := chkMemberData(w, di+"RECORD")
				w.set(di+"RECORD", strings.Replace(r, ",22\n", ",23\n", 1))
			}),
			check: "record-size", member: "demo_pkg/__init__.py",
		},
		{
			name:  "member without a hash",
			wheel: chkValid().then(func(w *chkWheel) { chkEditRow(w, "demo_pkg/core.py", "demo_pkg/core.py,,1250") }),
			check: "record-hash", member: "demo_pkg/core.py",
		},
		{
			name:  "member without a size",
			wheel: chkValid().then(func(w *chkWheel) { chkEditRowSize(w, "demo_pkg/core.py", "") }),
			check: "record-size", member: "demo_pkg/core.py",
		},
		{
			name:  "parent traversal",
			wheel: chkValid().add(chkMember{name: "../x", data: "evil"}),
			check: "unsafe-path", member: "../x",
		},
		{
			name:  "traversal inside",
			wheel: chkValid().add(chkMember{name: "demo_pkg/../../x", data: "evil"}),
			check: "unsafe-path", member: "demo_pkg/../../x",
		},
		{
			name:  "absolute path",
			wheel: chkValid().add(chkMember{name: "/abs", data: "evil"}),
			check: "unsafe-path", member: "/abs",
		},
		{
			name:  "drive letter",
			wheel: chkValid().add(chkMember{name: "C:/x", data: "evil"}),
			check: "unsafe-path", member: "C:/x",
		},
		{
			name:  "backslash",
			wheel: chkValid().add(chkMember{name: `demo_pkg\win.py`, data: "x"}),
			check: "unsafe-path", member: `demo_pkg\win.py`,
		},
		{
			name:  "empty element",
			wheel: chkValid().add(chkMember{name: "demo_pkg//x.py", data: "x"}),
			check: "unsafe-path", member: "demo_pkg//x.py",
		},
		{
			name:  "not UTF-8",
			wheel: chkValid().add(chkMember{name: "demo_pkg/\xff.py", data: "x"}),
			check: "unsafe-path", member: "demo_pkg/\xff.py",
		},
		{
			name: "duplicate member",
			wheel: chkValid().then(func(w *chkWheel) {
				w.add(chkMember{name: "demo_pkg/__init__.py", data: "from .core import run\n"})
			}),
			check: "duplicate", member: "demo_pkg/__init__.py",
		},
		{
			name:  "file and folder",
			wheel: chkValid().add(chkMember{name: "demo_pkg/core.py/x", data: "x"}),
			check: "duplicate", member: "demo_pkg/core.py",
		},
		{
			name:  "case collision",
			wheel: chkValid().add(chkMember{name: "demo_pkg/Core.py", data: "x"}),
			check: "case-collision", member: "demo_pkg/Core.py",
		},
		{
			name:  "symlink member",
			wheel: chkValid().add(chkMember{name: "demo_pkg/link.py", data: "core.py", mode: fs.ModeSymlink | 0o777}),
			check: "symlink", member: "demo_pkg/link.py",
		},
		{
			name:  "FIFO member",
			wheel: chkValid().add(chkMember{name: "demo_pkg/fifo", mode: fs.ModeNamedPipe | 0o644}),
			check: "special-file", member: "demo_pkg/fifo",
		},
		{
			name: "METADATA version mismatch",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "Version: 1.0.0", "Version: 1.0.1", 1)),
			check: "version-mismatch", member: di + "METADATA",
		},
		{
			name: "METADATA version spelled differently is fine only when normalised equal",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "Version: 1.0.0", "Version: 1.0", 1)),
			check: "version-mismatch", member: di + "METADATA",
		},
		{
			name: "METADATA name mismatch",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "Name: demo-pkg", "Name: other-pkg", 1)),
			check: "name-mismatch", member: di + "METADATA",
		},
		{
			name:  "WHEEL tag mismatch",
			wheel: chkValid().set(di+"WHEEL", strings.Replace(chkWheelFile, "py3-none-any", "py2-none-any", 1)),
			check: "tag-mismatch", member: di + "WHEEL",
		},
		{
			name:  "WHEEL without tags",
			wheel: chkValid().set(di+"WHEEL", strings.Replace(chkWheelFile, "Tag: py3-none-any\n", "", 1)),
			check: "tag-mismatch", member: di + "WHEEL",
		},
		{
			name:  "Wheel-Version 2.0",
			wheel: chkValid().set(di+"WHEEL", strings.Replace(chkWheelFile, "1.0", "2.0", 1)),
			check: "wheel-file", member: di + "WHEEL",
		},
		{
			name:  "Root-Is-Purelib not a boolean",
			wheel: chkValid().set(di+"WHEEL", strings.Replace(chkWheelFile, "true", "yes", 1)),
			check: "wheel-file", member: di + "WHEEL",
		},
		{
			name:  "Build field without a build tag",
			wheel: chkValid().set(di+"WHEEL", chkWheelFile+"Build: 1\n"),
			check: "wheel-file", member: di + "WHEEL",
		},
		{
			name:  "missing RECORD",
			wheel: &chkWheel{file: chkFile, members: chkValid().members, noRecord: true},
			check: "record", member: di + "RECORD",
			absent: []string{"unlisted", "missing", "record-hash", "record-size"},
		},
		{
			name:   "missing WHEEL",
			wheel:  chkValid().remove(di + "WHEEL"),
			check:  "wheel-file",
			member: di + "WHEEL",
			absent: []string{"tag-mismatch"},
		},
		{
			name:   "missing METADATA",
			wheel:  chkValid().remove(di + "METADATA"),
			check:  "metadata",
			member: di + "METADATA",
			absent: []string{"name-mismatch", "version-mismatch", "license-file"},
		},
		{
			name: "bad RECORD syntax: two fields",
			wheel: chkValid().then(func(w *chkWheel) {
				chkEditRow(w, "demo_pkg/core.py", "demo_pkg/core.py,sha256=abc")
			}),
			check: "record", member: di + "RECORD",
		},
		{
			name: "bad RECORD syntax: bare quote",
			wheel: chkValid().then(func(w *chkWheel) {
				chkEditRow(w, "demo_pkg/core.py", `demo_pkg/co"re.py,,`)
			}),
			check: "record", member: di + "RECORD",
		},
		{
			name: "bad RECORD syntax: padded base64",
			wheel: chkValid().then(func(w *chkWheel) {
				chkEditRowHash(w, "demo_pkg/core.py", func(h string) string { return h + "=" })
			}),
			check: "record", member: "demo_pkg/core.py",
		},
		{
			name: "weak hash",
			wheel: chkValid().then(func(w *chkWheel) {
				chkEditRowHash(w, "demo_pkg/core.py", func(string) string { return "md5=1B2M2Y8AsgTpgAmY7PhCfg" })
			}),
			check: "record", member: "demo_pkg/core.py",
		},
		{
			name: "RECORD's own row with a hash",
			wheel: chkValid().then(func(w *chkWheel) {
				chkEditRow(w, di+"RECORD", di+"RECORD,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0")
			}),
			check: "record", member: di + "RECORD",
		},
		{
			name: "RECORD row listed twice",
			wheel: chkValid().then(func(w *chkWheel) {
				r := chkMemberData(w, di+"RECORD")
				w.set(di+"RECORD", r+chkRow(r, "demo_pkg/core.py")+"\n")
			}),
			check: "record-duplicate", member: "demo_pkg/core.py",
		},
		{
			name: "License-File missing",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "License-File: LICENSE\n", "License-File: LICENSE\nLicense-File: NOTICE\n", 1)),
			check: "license-file", member: di + "licenses/NOTICE",
		},
		{
			name: "License-File with traversal",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "License-File: LICENSE\n", "License-File: ../LICENSE\n", 1)),
			check: "license-file", member: di + "METADATA",
		},
		{
			name:  "license file outside licenses/",
			wheel: chkValid().remove(di + "licenses/LICENSE").add(chkMember{name: di + "LICENSE", data: "MIT License\n"}),
			check: "license-file", member: di + "licenses/LICENSE",
		},
		{
			name: "License and License-Expression",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "License-Expression: MIT\n", "License-Expression: MIT\nLicense: MIT\n", 1)),
			check: "metadata", member: di + "METADATA",
		},
		{
			name: "License-Expression before 2.4",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "Metadata-Version: 2.4", "Metadata-Version: 2.3", 1)),
			check: "metadata", member: di + "METADATA",
			absent: []string{"license-file"},
		},
		{
			name: "unknown Metadata-Version",
			wheel: chkValid().set(di+"METADATA",
				strings.Replace(chkMetadata, "Metadata-Version: 2.4", "Metadata-Version: 3.0", 1)),
			check: "metadata", member: di + "METADATA",
		},
		{
			name:  "METADATA without Name",
			wheel: chkValid().set(di+"METADATA", strings.Replace(chkMetadata, "Name: demo-pkg\n", "", 1)),
			check: "metadata", member: di + "METADATA",
			absent: []string{"name-mismatch"},
		},
		{
			name:  "Name twice",
			wheel: chkValid().set(di+"METADATA", strings.Replace(chkMetadata, "Name: demo-pkg\n", "Name: demo-pkg\nName: demo-pkg\n", 1)),
			check: "metadata", member: di + "METADATA",
		},
		{
			name:  "METADATA syntax",
			wheel: chkValid().set(di+"METADATA", "Metadata-Version: 2.4\nthis is not a header\n"),
			check: "metadata", member: di + "METADATA",
		},
		{
			name:  "bad Requires-Python",
			wheel: chkValid().set(di+"METADATA", strings.Replace(chkMetadata, ">=3.9", ">=three", 1)),
			check: "metadata", member: di + "METADATA",
		},
		{
			name:  "bad Description-Content-Type",
			wheel: chkValid().set(di+"METADATA", strings.Replace(chkMetadata, "text/markdown", "text/html", 1)),
			check: "metadata", member: di + "METADATA",
		},
		{
			name:   "bad file name",
			wheel:  func() *chkWheel { w := chkValid(); w.file = "demo_pkg-1.0.0.whl"; return w }(),
			check:  "filename",
			absent: []string{"name-mismatch", "version-mismatch", "tag-mismatch"},
		},
		{
			name:  "file name not canonical",
			wheel: func() *chkWheel { w := chkValid(); w.file = "Demo.Pkg-1.0.0-py3-none-any.whl"; return w }(),
			check: "filename",
		},
		{
			name:   "dist-info named for another version",
			wheel:  func() *chkWheel { w := chkValid(); w.file = "demo_pkg-1.0.1-py3-none-any.whl"; return w }(),
			check:  "dist-info",
			member: chkDistInfo + "/",
		},
		{
			name:  "two dist-info folders",
			wheel: chkValid().add(chkMember{name: "other-1.0.dist-info/METADATA", data: "Name: other\n"}),
			check: "dist-info",
		},
		{
			name:   "no dist-info folder",
			wheel:  &chkWheel{file: chkFile, members: []chkMember{{name: "demo_pkg/__init__.py", data: ""}}, noRecord: true},
			check:  "dist-info",
			member: chkDistInfo + "/",
			absent: []string{"record", "wheel-file", "metadata"},
		},
		{
			name:   "dist-info subfolder",
			wheel:  chkValid().add(chkMember{name: di + "extra/x.txt", data: "x"}),
			check:  "dist-info",
			member: di + "extra/",
		},
		{
			name:   "unknown .data scheme",
			wheel:  chkValid().add(chkMember{name: "demo_pkg-1.0.0.data/config/x.cfg", data: "x"}),
			check:  "data",
			member: "demo_pkg-1.0.0.data/config/",
		},
		{
			name:   "file directly in .data",
			wheel:  chkValid().add(chkMember{name: "demo_pkg-1.0.0.data/x.cfg", data: "x"}),
			check:  "data",
			member: "demo_pkg-1.0.0.data/x.cfg",
		},
		{
			name:   ".data folder for another project",
			wheel:  chkValid().add(chkMember{name: "other-1.0.0.data/scripts/x", data: "x"}),
			check:  "data",
			member: "other-1.0.0.data/",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := chkCheck(t, tt.wheel)
			found := false
			for _, f := range rep.Findings {
				if f.Check == tt.check && (tt.member == "" || f.Member == tt.member) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %q finding for member %q; findings:\n%v", tt.check, tt.member, rep.Err())
			}
			for _, id := range tt.absent {
				if slices.Contains(rep.Checks, id) {
					t.Errorf("check %q ran; want it skipped (Checks %v)", id, rep.Checks)
				}
			}
			t.Log(rep.Err()) // the messages, with -v
			if err := rep.Err(); err == nil || !strings.Contains(err.Error(), tt.check) {
				t.Errorf("Err() = %v, want it to name %q", err, tt.check)
			}
		})
	}
}

// TestCheckFindingsOnly asserts the exact findings for mutations that
// should cause one finding and nothing else.
func TestCheckFindingsOnly(t *testing.T) {
	di := chkDistInfo + "/"
	tests := []struct {
		name  string
		wheel *chkWheel
		want  []wheel.Finding // Msg ignored
	}{
		{"flipped byte", chkValid().then(func(w *chkWheel) {
			w.set("demo_pkg/core.py", strings.Replace(chkMemberData(w, "demo_pkg/core.py"), "42", "43", 1))
		}),
			[]wheel.Finding{{Check: "record-hash", Member: "demo_pkg/core.py"}}},
		{"unlisted", chkValid().then(func(w *chkWheel) { w.add(chkMember{name: "demo_pkg/x.py", data: "x"}) }),
			[]wheel.Finding{{Check: "unlisted", Member: "demo_pkg/x.py"}}},
		{"missing", chkValid().then(func(w *chkWheel) { w.remove("demo_pkg/empty.txt") }),
			[]wheel.Finding{{Check: "missing", Member: "demo_pkg/empty.txt"}}},
		{"traversal listed in RECORD", chkValid().add(chkMember{name: "../x", data: "evil"}),
			[]wheel.Finding{{Check: "unsafe-path", Member: "../x"}}},
		{"duplicate", chkValid().then(func(w *chkWheel) { w.add(chkMember{name: "demo_pkg/empty.txt", data: ""}) }),
			[]wheel.Finding{{Check: "duplicate", Member: "demo_pkg/empty.txt"}}},
		{"missing WHEEL", chkValid().remove(di + "WHEEL"),
			[]wheel.Finding{{Check: "wheel-file", Member: di + "WHEEL"}}},
		{"two problems, ordered by check", chkValid().then(func(w *chkWheel) {
			w.remove("demo_pkg/empty.txt")
			w.add(chkMember{name: "demo_pkg/x.py", data: "x"})
		}), []wheel.Finding{{Check: "unlisted", Member: "demo_pkg/x.py"}, {Check: "missing", Member: "demo_pkg/empty.txt"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := chkCheck(t, tt.wheel)
			var got []wheel.Finding
			for _, f := range rep.Findings {
				got = append(got, wheel.Finding{Check: f.Check, Member: f.Member})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("findings = %v\nwant %v\n%v", got, tt.want, rep.Err())
			}
		})
	}
}

func TestCheckSHA512Record(t *testing.T) {
	w := chkValid().then(func(w *chkWheel) {
		data := chkMemberData(w, "demo_pkg/core.py")
		sum := sha512.Sum512([]byte(data))
		chkEditRowHash(w, "demo_pkg/core.py", func(string) string {
			return "sha512=" + base64.RawURLEncoding.EncodeToString(sum[:])
		})
	})
	if rep := chkCheck(t, w); len(rep.Findings) != 0 {
		t.Fatalf("sha512 row: %v", rep.Err())
	}
	bad := chkValid().then(func(w *chkWheel) {
		sum := sha512.Sum384([]byte("not the content"))
		chkEditRowHash(w, "demo_pkg/core.py", func(string) string {
			return "sha384=" + base64.RawURLEncoding.EncodeToString(sum[:])
		})
	})
	rep := chkCheck(t, bad)
	if len(rep.Findings) != 1 || rep.Findings[0].Check != "record-hash" {
		t.Fatalf("sha384 mismatch: %v", rep.Err())
	}
}

func TestCheckDirectoryEntriesAllowed(t *testing.T) {
	w := chkValid()
	w.members = append([]chkMember{{name: "demo_pkg/"}, {name: chkDistInfo + "/"}}, w.members...)
	if rep := chkCheck(t, w); len(rep.Findings) != 0 {
		t.Fatalf("folder entries: %v", rep.Err())
	}
}

func TestCheckSignatureFilesExempt(t *testing.T) {
	w := chkValid().then(func(w *chkWheel) {
		w.add(chkMember{name: chkDistInfo + "/RECORD.jws", data: "{}"})
		w.add(chkMember{name: chkDistInfo + "/RECORD.p7s", data: "sig"})
	})
	if rep := chkCheck(t, w); len(rep.Findings) != 0 {
		t.Fatalf("RECORD.jws/p7s: %v", rep.Err())
	}
}

func TestCheckBuildTag(t *testing.T) {
	w := chkValid().set(chkDistInfo+"/WHEEL", chkWheelFile+"Build: 1\n")
	w.file = "demo_pkg-1.0.0-1-py3-none-any.whl"
	if rep := chkCheck(t, w); len(rep.Findings) != 0 {
		t.Fatalf("build tag: %v", rep.Err())
	}
	w = chkValid()
	w.file = "demo_pkg-1.0.0-1-py3-none-any.whl"
	rep := chkCheck(t, w)
	if len(rep.Findings) != 1 || rep.Findings[0].Check != "wheel-file" {
		t.Fatalf("missing Build: %v", rep.Err())
	}
}

func TestCheckCompressedTagSet(t *testing.T) {
	w := chkValid().set(chkDistInfo+"/WHEEL", strings.Replace(chkWheelFile, "Tag: py3-none-any\n", "Tag: py2-none-any\nTag: py3-none-any\n", 1))
	w.file = "demo_pkg-1.0.0-py2.py3-none-any.whl"
	if rep := chkCheck(t, w); len(rep.Findings) != 0 {
		t.Fatalf("py2.py3: %v", rep.Err())
	}
}

// TestCheckCorruptMember flips a byte of a stored member's data in the
// archive itself: the CRC-32 no longer matches.
func TestCheckCorruptMember(t *testing.T) {
	w := chkValid()
	for i := range w.members {
		w.members[i].stored = true
	}
	data := w.build(t)
	i := bytes.Index(data, []byte("def run():"))
	if i < 0 {
		t.Fatal("member data not found")
	}
	data[i] ^= 0x20
	rep, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	chkInvariants(t, rep)
	if len(rep.Findings) != 1 || rep.Findings[0].Check != "zip" || rep.Findings[0].Member != "demo_pkg/core.py" {
		t.Fatalf("findings: %v", rep.Err())
	}
}

// TestCheckBomb declares sizes far beyond what the compressed data holds.
func TestCheckBomb(t *testing.T) {
	w := chkValid()
	data := w.build(t)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		h := f.FileHeader
		if f.Name == "demo_pkg/core.py" {
			h.UncompressedSize64 = 1 << 40 // 1 TiB from a few hundred bytes
		}
		raw, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		zf, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(zf, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	rep, err := wheel.CheckReader(chkFile, bytes.NewReader(out), int64(len(out)))
	if err != nil {
		t.Fatal(err)
	}
	chkInvariants(t, rep)
	if len(rep.Findings) != 1 || rep.Findings[0].Check != "bomb" || rep.Findings[0].Member != "demo_pkg/core.py" {
		t.Fatalf("findings: %v", rep.Err())
	}
}

// TestCheckBombRatio: an honest header, but 100 MiB of zeros deflated to
// about 100 KiB is past the ratio limit (100 × compressed + 64 MiB).
func TestCheckBombRatio(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 100 MiB")
	}
	valid := chkValid().build(t)
	zr, err := zip.NewReader(bytes.NewReader(valid), int64(len(valid)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	zf, err := zw.Create("demo_pkg/zeros.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(zf, io.LimitReader(chkZeros{}, 100<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rep, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	chkInvariants(t, rep)
	found := false
	for _, f := range rep.Findings {
		found = found || f.Check == "bomb" && f.Member == "demo_pkg/zeros.bin"
	}
	if !found {
		t.Fatalf("no bomb finding: %v", rep.Err())
	}
}

// chkZeros reads zero bytes forever.
type chkZeros struct{}

func (chkZeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestCheckNotAZip(t *testing.T) {
	data := []byte("this is not a zip archive at all")
	if _, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data))); err == nil {
		t.Fatal("CheckReader accepted a non-zip")
	}
	if _, err := wheel.Check(filepath.Join(t.TempDir(), "absent.whl")); err == nil || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Check(absent) = %v, want ErrNotExist", err)
	}
}

// chkErrReader fails every read past off.
type chkErrReader struct {
	data []byte
	off  int64
}

var errChkIO = errors.New("simulated I/O error")

func (r *chkErrReader) ReadAt(p []byte, off int64) (int, error) {
	if off <= r.off && off+int64(len(p)) > r.off {
		return 0, errChkIO
	}
	return bytes.NewReader(r.data).ReadAt(p, off)
}

func TestCheckIOErrorIsAnError(t *testing.T) {
	data := chkValid().build(t)
	// The first member's data starts after its 30-byte local header and
	// its 20-byte name: fail the reads of that data.
	r := &chkErrReader{data: data, off: 55}
	_, err := wheel.CheckReader(chkFile, r, int64(len(data)))
	if !errors.Is(err, errChkIO) {
		t.Fatalf("err = %v, want the I/O error", err)
	}
}

func TestCheckFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), chkFile)
	if err := os.WriteFile(path, chkValid().build(t), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := wheel.Check(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep.File != path || rep.Err() != nil {
		t.Fatalf("File %q, Err %v", rep.File, rep.Err())
	}
}

func TestReportErrFormat(t *testing.T) {
	rep := &wheel.Report{File: "x.whl", Findings: []wheel.Finding{
		{Check: "record-hash", File: "x.whl", Member: "a/b.py", Msg: "bad"},
		{Check: "filename", File: "x.whl", Msg: "worse"},
	}}
	want := "wheel x.whl: 2 problems:\n\trecord-hash: \"a/b.py\": bad\n\tfilename: worse"
	if got := rep.Err().Error(); got != want {
		t.Errorf("Err() = %q\nwant %q", got, want)
	}
	rep.Findings = rep.Findings[1:]
	if got, want := rep.Err().Error(), "wheel x.whl: filename: worse"; got != want {
		t.Errorf("Err() = %q, want %q", got, want)
	}
}

// chkRealWheels lists wheels installed on the machine.
func chkRealWheels() []string {
	var paths []string
	for _, pat := range []string{
		"/usr/share/python-wheels/*.whl",
		"/root/.pyenv/versions/*/lib/python3.*/ensurepip/_bundled/*.whl",
	} {
		m, _ := filepath.Glob(pat)
		paths = append(paths, m...)
	}
	return paths
}

func TestCheckRealWheels(t *testing.T) {
	paths := chkRealWheels()
	if len(paths) == 0 {
		t.Skip("no wheels on this machine")
	}
	for _, p := range paths {
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) {
			rep, err := wheel.Check(p)
			if err != nil {
				t.Fatal(err)
			}
			chkInvariants(t, rep)
			if err := rep.Err(); err != nil {
				t.Fatal(err)
			}
			if rep.Metadata == nil || rep.Metadata.Name == "" {
				t.Fatalf("no metadata: %+v", rep.Metadata)
			}
			t.Logf("%s: %s %s, %d checks", filepath.Base(p), rep.Metadata.Name, rep.Metadata.Version, len(rep.Checks))
		})
	}
}

// chkMemberData returns the data of the named member.
func chkMemberData(w *chkWheel, name string) string {
	for _, m := range w.members {
		if m.name == name {
			return m.data
		}
	}
	panic("no member " + name)
}

// chkRow returns RECORD's row for path.
func chkRow(record, path string) string {
	for _, l := range strings.Split(record, "\n") {
		if strings.HasPrefix(l, path+",") {
			return l
		}
	}
	panic("no row for " + path)
}

// chkEditRow replaces RECORD's row for path with row.
func chkEditRow(w *chkWheel, path, row string) {
	r := chkMemberData(w, chkDistInfo+"/RECORD")
	w.set(chkDistInfo+"/RECORD", strings.Replace(r, chkRow(r, path), row, 1))
}

// chkEditRowHash rewrites the hash of RECORD's row for path.
func chkEditRowHash(w *chkWheel, path string, f func(string) string) {
	fields := strings.Split(chkRow(chkMemberData(w, chkDistInfo+"/RECORD"), path), ",")
	fields[1] = f(fields[1])
	chkEditRow(w, path, strings.Join(fields, ","))
}

// chkEditRowSize rewrites the size of RECORD's row for path.
func chkEditRowSize(w *chkWheel, path, size string) {
	fields := strings.Split(chkRow(chkMemberData(w, chkDistInfo+"/RECORD"), path), ",")
	fields[2] = size
	chkEditRow(w, path, strings.Join(fields, ","))
}

// FuzzCheckReader checks that no archive makes CheckReader panic, and that
// every report it returns is consistent. The seeds are a valid wheel and
// a few broken ones; the fuzzer mutates their bytes.
func FuzzCheckReader(f *testing.F) {
	di := chkDistInfo + "/"
	seeds := []*chkWheel{
		chkValid(),
		chkValid().add(chkMember{name: "../x", data: "x", mode: fs.ModeSymlink | 0o777}),
		chkValid().then(func(w *chkWheel) { chkEditRow(w, "demo_pkg/core.py", `demo_pkg/co"re.py,md5=x,-1`) }),
		chkValid().set(di+"METADATA", "Metadata-Version: 2.4\nName: x\nLicense-File: ../a\n\tcont\n\nbody"),
		chkValid().set(di+"WHEEL", "Wheel-Version: 9\nTag: a-b-c\n"),
		{file: chkFile, members: []chkMember{{name: "a/", data: ""}, {name: "A", data: "x", stored: true}}},
	}
	for _, w := range seeds {
		f.Add(w.build(f))
	}
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	// Zip structures readers disagree on (see ambiguous_test.go).
	for _, edit := range []func(a *zt.Archive){
		func(a *zt.Archive) { a.Entries[0].LocalName = zt.Ptr("other.py") },
		func(a *zt.Archive) { a.Entries[1].WithDescriptor() },
		func(a *zt.Archive) { a.Entries[1].NoLocal, a.Entries[1].Offset = true, zt.Ptr(int64(0)) },
		func(a *zt.Archive) { a.Trailing, a.Comment = []byte("x"), []byte("PK\x05\x06") },
	} {
		_, data := chkRaw(f, chkValid(), edit)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if rep != nil {
				t.Fatal("report and error")
			}
			return
		}
		chkInvariants(t, rep)
		if len(rep.Checks) == 0 || rep.Checks[0] != "filename" {
			t.Fatalf("Checks = %v", rep.Checks)
		}
	})
}

// FuzzCheckContents fuzzes what a well-formed archive holds: a member
// name and the RECORD, WHEEL and METADATA texts, which the raw-byte fuzzer
// rarely reaches intact.
func FuzzCheckContents(f *testing.F) {
	w := chkValid()
	w.build(f)
	f.Add("demo_pkg/x.py", chkMemberData(w, chkDistInfo+"/RECORD"), chkWheelFile, chkMetadata)
	f.Add("../x", "a,b,c\n\"", "Wheel-Version: 1.0\n", "Metadata-Version: 2.4\nLicense-File: /x\n")
	f.Fuzz(func(t *testing.T, name, record, wheelFile, metadata string) {
		content := "x"
		if strings.HasSuffix(name, "/") {
			content = "" // a folder entry has no data
		}
		members := []chkMember{
			{name: name, data: content},
			{name: chkDistInfo + "/RECORD", data: record},
			{name: chkDistInfo + "/WHEEL", data: wheelFile},
			{name: chkDistInfo + "/METADATA", data: metadata},
		}
		data := chkZip(t, members)
		rep, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("CheckReader on a well-formed zip: %v", err)
		}
		chkInvariants(t, rep)
	})
}
