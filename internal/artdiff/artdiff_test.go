package artdiff

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// libBytes is a binary member: 8 KiB with NUL bytes, so it is not text.
func libBytes(mark byte) string {
	b := make([]byte, 8192)
	for i := range b {
		b[i] = byte(i * 7)
	}
	b[5000] = mark
	return string(b)
}

func testWheel() []zmember {
	return []zmember{
		{name: "vexl_plugin/__init__.py", body: "from ._core import *\nVERSION = \"0.3.0\"\n"},
		{name: "vexl_plugin/lib/libvexl.so", body: libBytes(1), mode: 0o755},
		{name: "vexl_plugin-0.3.0.dist-info/METADATA", body: "Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\n"},
		{name: "vexl_plugin-0.3.0.dist-info/WHEEL", body: "Wheel-Version: 1.0\nGenerator: mkrelease\nRoot-Is-Purelib: false\n"},
		{name: "vexl_plugin-0.3.0.dist-info/RECORD", body: "vexl_plugin/__init__.py,sha256=x,40\n"},
	}
}

const (
	root      = "vexl-0.3.0-linux-x86_64/"
	wheelName = "vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl"
)

func testBundle(wheel []byte, manifest string) []tmember {
	return []tmember{
		{name: root},
		{name: root + "INSTALL.md", body: "# Install\n\nRun ./install.sh VENV\n"},
		{name: root + "install.sh", body: "#!/bin/sh\nset -eu\n", mode: 0o755},
		{name: root + "manifest.json", body: manifest},
		{name: root + "wheels/"},
		{name: root + "wheels/" + wheelName, body: string(wheel)},
		{name: root + "SHA256SUMS", body: "aa  INSTALL.md\nbb  install.sh\n"},
	}
}

const manifest = `{
  "name": "vexl",
  "packages": [
    {"name": "vexl-compiler", "versionInfo": "0.3.0"},
    {"name": "vexl-plugin", "checksums": [{"algorithm": "SHA256", "checksumValue": "aa"}]}
  ],
  "spdx-id": "SPDXRef-DOCUMENT"
}
`

// want is the expected outcome of a comparison: nil for identical files,
// else the path, What, and a substring of Detail.
type want struct {
	path   []string
	what   string
	detail string
}

func TestCompare(t *testing.T) {
	wheel := testWheel()
	wheelBytes := mkzip(zipOpts{}, wheel...)
	bundle := mktgz(tarOpts{}, testBundle(wheelBytes, manifest)...)
	otherLib := changed(wheel, 1, func(m *zmember) { m.body = libBytes(2) })
	nested := func(depth int, body string) []byte {
		data := mkzip(zipOpts{}, zmember{name: "leaf.bin", body: body})
		for i := depth; i > 0; i-- {
			data = mkzip(zipOpts{}, zmember{name: "inner" + string(rune('0'+i)) + ".zip", body: string(data)})
		}
		return data
	}
	tests := []struct {
		name     string
		artifact string
		a, b     []byte
		want     *want
	}{
		{"identical wheels", wheelName, wheelBytes, mkzip(zipOpts{}, wheel...), nil},
		{"identical bundles", "b.tar.gz", bundle, mktgz(tarOpts{}, testBundle(wheelBytes, manifest)...), nil},
		{"identical empty files", "x", nil, nil, nil},

		// Wheels (zip).
		{"wheel member text", wheelName, wheelBytes,
			mkzip(zipOpts{}, changed(wheel, 0, func(m *zmember) { m.body = "from ._core import *\nVERSION = \"0.3.1\"\n" })...),
			&want{[]string{"vexl_plugin/__init__.py"}, "line 2", `column 16: original "VERSION = \"0.3.0\"\n", rebuilt "VERSION = \"0.3.1\"\n"`}},
		{"wheel member binary", wheelName, wheelBytes, mkzip(zipOpts{}, otherLib...),
			&want{[]string{"vexl_plugin/lib/libvexl.so"}, "content", "first difference at byte 5000 of 8192"}},
		{"wheel member order", wheelName, wheelBytes,
			mkzip(zipOpts{}, wheel[0], wheel[1], wheel[3], wheel[2], wheel[4]),
			&want{nil, "order", `entry 3: original "vexl_plugin-0.3.0.dist-info/METADATA", rebuilt "vexl_plugin-0.3.0.dist-info/WHEEL"`}},
		{"wheel member mode", wheelName, wheelBytes,
			mkzip(zipOpts{}, changed(wheel, 0, func(m *zmember) { m.mode = 0o755 })...),
			&want{[]string{"vexl_plugin/__init__.py"}, "mode", "original 0644 -rw-r--r--, rebuilt 0755 -rwxr-xr-x"}},
		{"wheel member mtime", wheelName, wheelBytes,
			mkzip(zipOpts{}, changed(wheel, 2, func(m *zmember) { m.mtime = epoch().Add(2 * time.Second) })...),
			&want{[]string{"vexl_plugin-0.3.0.dist-info/METADATA"}, "mtime", "original 2024-01-02T03:04:06Z, rebuilt 2024-01-02T03:04:08Z"}},
		{"wheel extra member", wheelName, wheelBytes,
			mkzip(zipOpts{}, slices.Insert(slices.Clone(wheel), 1, zmember{name: "vexl_plugin/extra.py"})...),
			&want{[]string{"vexl_plugin/extra.py"}, "extra in rebuilt", "entry 2; 5 entries in the original, 6 in the rebuilt"}},
		{"wheel missing member", wheelName, wheelBytes,
			mkzip(zipOpts{}, slices.Delete(slices.Clone(wheel), 3, 4)...),
			&want{[]string{"vexl_plugin-0.3.0.dist-info/WHEEL"}, "missing in rebuilt", "entry 4; 5 entries in the original, 4 in the rebuilt"}},
		{"wheel missing last member", wheelName, wheelBytes,
			mkzip(zipOpts{}, wheel[:4]...),
			&want{[]string{"vexl_plugin-0.3.0.dist-info/RECORD"}, "missing in rebuilt", "entry 5"}},
		{"wheel compression method", wheelName, wheelBytes,
			mkzip(zipOpts{}, changed(wheel, 2, func(m *zmember) { m.store = true })...),
			&want{[]string{"vexl_plugin-0.3.0.dist-info/METADATA"}, "compression method", "original deflate, rebuilt store"}},
		{"wheel compressed differently", wheelName, wheelBytes, mkzip(zipOpts{level: flate.BestSpeed}, wheel...),
			&want{[]string{"vexl_plugin/__init__.py"}, "compressed data", "same content; compressed sizes"}},
		{"wheel comment", wheelName, wheelBytes, mkzip(zipOpts{comment: "built on my laptop"}, wheel...),
			&want{nil, "archive comment", `original "", rebuilt "built on my laptop"`}},
		{"wheel local header", wheelName, wheelBytes, patched(wheelBytes, 4, 0x7f),
			&want{nil, "archive structure", `members, contents and metadata are identical; first difference at byte 4, in the local header of "vexl_plugin/__init__.py"`}},
		{"truncated wheel", wheelName, wheelBytes, wheelBytes[:len(wheelBytes)/2],
			&want{nil, "unreadable", "rebuilt: zip: not a valid zip file"}},
		{"unsafe member name", wheelName,
			mkzip(zipOpts{}, zmember{name: "ok.py"}, zmember{name: "../evil.py", body: "a"}),
			mkzip(zipOpts{}, zmember{name: "ok.py"}, zmember{name: "../evil.py", body: "b"}),
			&want{[]string{"../evil.py"}, "unsafe name", `".." element in name; not opened`}},
		{"extra unsafe member", wheelName, mkzip(zipOpts{}, zmember{name: "ok.py"}),
			mkzip(zipOpts{}, zmember{name: "ok.py"}, zmember{name: "/etc/passwd"}),
			&want{[]string{"/etc/passwd"}, "extra in rebuilt", "unsafe name: absolute path"}},
		{"zip became gzip", wheelName, wheelBytes, gz(tarOpts{}, wheelBytes),
			&want{nil, "file type", "original zip archive, rebuilt gzip stream"}},
		{"zips nested too deep", "n.zip", nested(3, "a"), nested(3, "b"),
			&want{[]string{"inner1.zip", "inner2.zip", "inner3.zip"}, "content", "a zip archive nested more than 3 archives deep is not opened"}},
		{"zips nested deep enough", "n.zip", nested(2, "a"), nested(2, "b"),
			&want{[]string{"inner1.zip", "inner2.zip", "leaf.bin"}, "line 1", `column 1: original "a" then end of file, rebuilt "b" then end of file`}},

		// Bundles (tar.gz) with a wheel inside.
		{"wheel member inside bundle", "vexl-0.3.0-linux-x86_64.tar.gz", bundle,
			mktgz(tarOpts{}, testBundle(mkzip(zipOpts{}, otherLib...), manifest)...),
			&want{[]string{root + "wheels/" + wheelName, "vexl_plugin/lib/libvexl.so"}, "content", "first difference at byte 5000 of 8192"}},
		{"wheel member order inside bundle", "b.tar.gz", bundle,
			mktgz(tarOpts{}, testBundle(mkzip(zipOpts{}, wheel[1], wheel[0], wheel[2], wheel[3], wheel[4]), manifest)...),
			&want{[]string{root + "wheels/" + wheelName}, "order", "entry 1"}},
		{"JSON inside bundle", "b.tar.gz", bundle,
			mktgz(tarOpts{}, testBundle(wheelBytes, strings.Replace(manifest, `"0.3.0"`, `"0.3.1"`, 1))...),
			&want{[]string{root + "manifest.json"}, "JSON value at $.packages[0].versionInfo", `original "0.3.0", rebuilt "0.3.1"`}},
		{"truncated wheel inside bundle", "b.tar.gz", bundle,
			mktgz(tarOpts{}, testBundle(wheelBytes[:len(wheelBytes)-30], manifest)...),
			&want{[]string{root + "wheels/" + wheelName}, "unreadable", "rebuilt: zip: not a valid zip file"}},
		{"bundle entry mode", "b.tar.gz", bundle,
			mktgz(tarOpts{}, changed(testBundle(wheelBytes, manifest), 2, func(m *tmember) { m.mode = 0o644 })...),
			&want{[]string{root + "install.sh"}, "mode", "original 0755, rebuilt 0644"}},
		{"bundle entry owner", "b.tar.gz", bundle,
			mktgz(tarOpts{}, changed(testBundle(wheelBytes, manifest), 1, func(m *tmember) { m.uid = 1000 })...),
			&want{[]string{root + "INSTALL.md"}, "owner", "original 0:0, rebuilt 1000:0"}},
		{"bundle entry mtime", "b.tar.gz", bundle,
			mktgz(tarOpts{}, changed(testBundle(wheelBytes, manifest), 4, func(m *tmember) { m.mtime = epoch().Add(time.Hour) })...),
			&want{[]string{root + "wheels/"}, "mtime", "rebuilt 2024-01-02T04:04:06Z"}},
		{"bundle entry type", "b.tar.gz", bundle,
			mktgz(tarOpts{}, changed(testBundle(wheelBytes, manifest), 1, func(m *tmember) { m.typ, m.link, m.body = tar.TypeSymlink, "README", "" })...),
			&want{[]string{root + "INSTALL.md"}, "type", "original regular file, rebuilt symlink"}},
		{"bundle missing entry", "b.tar.gz", bundle,
			mktgz(tarOpts{}, slices.Delete(testBundle(wheelBytes, manifest), 1, 2)...),
			&want{[]string{root + "INSTALL.md"}, "missing in rebuilt", "entry 2; 7 entries in the original, 6 in the rebuilt"}},
		{"bundle extra entry", "b.tar.gz", bundle,
			mktgz(tarOpts{}, append(testBundle(wheelBytes, manifest), tmember{name: root + "zz.txt"})...),
			&want{[]string{root + "zz.txt"}, "extra in rebuilt", "entry 8"}},
		{"bundle entry order", "b.tar.gz", bundle,
			mktgz(tarOpts{}, slices.Concat(testBundle(wheelBytes, manifest)[:1], testBundle(wheelBytes, manifest)[2:3],
				testBundle(wheelBytes, manifest)[1:2], testBundle(wheelBytes, manifest)[3:])...),
			&want{nil, "order", `entry 2: original "` + root + `INSTALL.md", rebuilt "` + root + `install.sh"`}},
		{"bundle gzip mtime", "b.tar.gz", bundle,
			mktgz(tarOpts{gzMtime: epoch()}, testBundle(wheelBytes, manifest)...),
			&want{nil, "gzip header field ModTime", "original unset, rebuilt 2024-01-02T03:04:06Z"}},
		{"bundle compressed differently", "b.tar.gz", bundle,
			mktgz(tarOpts{level: gzip.BestSpeed}, testBundle(wheelBytes, manifest)...),
			&want{nil, "compressed stream", "uncompressed contents identical; first difference at byte"}},
		{"bundle tar format", "b.tar.gz", bundle,
			gz(tarOpts{}, append(mktar(testBundle(wheelBytes, manifest)...), make([]byte, 512)...)),
			&want{nil, "archive structure", "entries, contents and headers are identical; first difference at byte"}},
		{"truncated bundle", "b.tar.gz", bundle, bundle[:len(bundle)-100],
			&want{nil, "unreadable", "rebuilt: unexpected EOF"}},
		{"plain tar entry", "b.tar", mktar(testBundle(wheelBytes, manifest)...),
			mktar(changed(testBundle(wheelBytes, manifest), 6, func(m *tmember) { m.body = "aa  INSTALL.md\ncc  install.sh\n" })...),
			&want{[]string{root + "SHA256SUMS"}, "line 2", `column 1: original "bb  install.sh\n", rebuilt "cc  install.sh\n"`}},

		// JSON documents.
		{"JSON nested value", "vexl-0.3.0.spdx.json", []byte(manifest), []byte(strings.Replace(manifest, `"aa"`, `"ab"`, 1)),
			&want{nil, "JSON value at $.packages[1].checksums[0].checksumValue", `original "aa", rebuilt "ab"`}},
		{"JSON missing member", "manifest.json", []byte(manifest), []byte(strings.Replace(manifest, `, "versionInfo": "0.3.0"`, "", 1)),
			&want{nil, "JSON value at $.packages[0].versionInfo", `missing in rebuilt, original "0.3.0"`}},
		{"JSON extra member", "manifest.json", []byte(manifest), []byte(strings.Replace(manifest, `"name": "vexl",`, `"name": "vexl", "x": [1, 2],`, 1)),
			&want{nil, "JSON value at $.x", "extra in rebuilt: an array of 2 elements"}},
		{"JSON odd key", "manifest.json", []byte(manifest), []byte(strings.Replace(manifest, `"SPDXRef-DOCUMENT"`, `null`, 1)),
			&want{nil, `JSON value at $["spdx-id"]`, `original "SPDXRef-DOCUMENT", rebuilt null`}},
		{"JSON extra element", "manifest.json", []byte(manifest), []byte(strings.Replace(manifest, "}]}\n", "}]}, {}\n", 1)),
			&want{nil, "JSON value at $.packages[2]", "extra in rebuilt: an object of 0 members; arrays of 2 and 3 elements"}},
		{"JSON number as written", "manifest.json", []byte(`{"n": 1.0}`), []byte(`{"n": 1}`),
			&want{nil, "JSON value at $.n", "original 1.0, rebuilt 1"}},
		{"JSON key order", "manifest.json", []byte(`{"a": 1, "b": 2}`), []byte(`{"b": 2, "a": 1}`),
			&want{nil, "JSON key order at $", `member 1: original "a", rebuilt "b"`}},
		{"JSON formatting", "manifest.json", []byte("{\n  \"a\": [1, 2]\n}\n"), []byte("{\n  \"a\": [1,2]\n}\n"),
			&want{nil, "line 2", `same JSON value written differently; column 11: original "  \"a\": [1, 2]\n", rebuilt "  \"a\": [1,2]\n"`}},
		{"JSON invalid on one side", "manifest.json", []byte(manifest), []byte(manifest[:40]),
			&want{nil, "unreadable", "rebuilt: unexpected EOF"}},
		{"JSON invalid on both sides", "manifest.json", []byte("not json\n"), []byte("not jsox\n"),
			&want{nil, "line 1", "neither side parses as JSON; column 8"}},

		// Text.
		{"text line", "RELEASE_NOTES.md", []byte("# vexl 0.3.0\n\n- faster kernels\n- fixes\n"), []byte("# vexl 0.3.0\n\n- faster kernel\n- fixes\n"),
			&want{nil, "line 3", `column 16: original "- faster kernels\n", rebuilt "- faster kernel\n"`}},
		{"text missing line", "SHA256SUMS", []byte("aa  a.whl\nbb  b.whl\n"), []byte("aa  a.whl\n"),
			&want{nil, "line 2", `column 1: original "bb  b.whl\n", rebuilt end of file`}},
		{"text final newline", "RELEASE_NOTES.md", []byte("notes\n"), []byte("notes"),
			&want{nil, "line 1", `column 6: original "notes\n", rebuilt "notes" then end of file`}},
		{"text long line", "RELEASE_NOTES.md", []byte(strings.Repeat("x", 100) + "a" + strings.Repeat("y", 100)), []byte(strings.Repeat("x", 100) + "b" + strings.Repeat("y", 100)),
			&want{nil, "line 1", `column 101: original …"` + strings.Repeat("x", contextBefore) + "a" + strings.Repeat("y", maxShown-1) + `"…`}},
		{"text became empty", "SHA256SUMS", []byte("aa  a.whl\n"), nil,
			&want{nil, "line 1", `column 1: original "aa  a.whl\n", rebuilt end of file`}},

		// Other binaries.
		{"binary", "data.bin", []byte("\x00\x01\x02\x03\x04\x05"), []byte("\x00\x01\x02\x07\x04\x05"),
			&want{nil, "content", "first difference at byte 3 of 6"}},
		{"binary sizes", "data.bin", []byte("\x00\x01\x02"), []byte("\x00\x01\x02\x03"),
			&want{nil, "content", "first difference at byte 3; sizes 3 and 4 bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := compareBytes(t, tt.artifact, tt.a, tt.b)
			if err != nil {
				t.Fatalf("Compare: %v", err)
			}
			checkDifference(t, tt.artifact, got, tt.want)
			if got != nil {
				t.Log(got)
			}
		})
	}
}

// patched returns a copy of data with the byte at i set to v.
func patched(data []byte, i int, v byte) []byte {
	data = bytes.Clone(data)
	data[i] = v
	return data
}

func checkDifference(t *testing.T, artifact string, got *Difference, w *want) {
	t.Helper()
	switch {
	case w == nil && got == nil:
		return
	case w == nil:
		t.Fatalf("Compare = %v, want nil", got)
	case got == nil:
		t.Fatalf("Compare = nil, want %s %q (%s)", w.path, w.what, w.detail)
	}
	if got.Artifact != artifact || !slices.Equal(got.Path, w.path) || got.What != w.what || !strings.Contains(got.Detail, w.detail) {
		t.Errorf("Compare = %#v\nwant path %q, what %q, detail containing %q", *got, w.path, w.what, w.detail)
	}
}

func TestDifferenceString(t *testing.T) {
	tests := []struct {
		d    Difference
		want string
	}{
		{Difference{Artifact: "vexl-0.3.0-linux-x86_64.tar.gz", Path: []string{"wheels/vexl_plugin.whl", "vexl_plugin/lib/libvexl.so"},
			What: "content", Detail: "first difference at byte 4096, in ELF section .text"},
			"vexl-0.3.0-linux-x86_64.tar.gz: wheels/vexl_plugin.whl: vexl_plugin/lib/libvexl.so: content (first difference at byte 4096, in ELF section .text)"},
		{Difference{Artifact: "a.whl", What: "order"}, "a.whl: order"},
		{Difference{Artifact: "a.whl", Path: []string{"evil\x1b[2J.py", ""}, What: "unsafe name"}, `a.whl: "evil\x1b[2J.py": "": unsafe name`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestCompareErrors(t *testing.T) {
	dir := t.TempDir()
	f := write(t, dir, "f", []byte("x"))
	for _, tt := range []struct{ a, b string }{
		{filepath.Join(dir, "missing"), f},
		{f, filepath.Join(dir, "missing")},
		{f, dir},
	} {
		if d, err := Compare("f", tt.a, tt.b); err == nil {
			t.Errorf("Compare(%s, %s) = %v, nil; want an error", tt.a, tt.b, d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := write(t, dir, "g", []byte("y"))
	if _, err := CompareContext(ctx, "f", f, g); !errors.Is(err, context.Canceled) {
		t.Errorf("CompareContext(canceled) error = %v, want context.Canceled", err)
	}
}

// TestDamaged damages a wheel and a bundle byte by byte and by truncation:
// Compare must find a difference, never fail or panic, and report none
// for identical files.
func TestDamaged(t *testing.T) {
	wheelBytes := mkzip(zipOpts{}, testWheel()...)
	inputs := map[string][]byte{
		"w.whl":    wheelBytes,
		"b.tar.gz": mktgz(tarOpts{}, testBundle(wheelBytes, manifest)...),
		"b.tar":    mktar(testBundle(wheelBytes, manifest)...),
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			orig := write(t, dir, "orig/"+name, data)
			step := max(1, len(data)/400)
			check := func(label string, damaged []byte) {
				p := write(t, dir, "damaged/"+name, damaged)
				d, err := Compare(name, orig, p)
				if err != nil {
					t.Fatalf("%s: Compare: %v", label, err)
				}
				if (d == nil) != bytes.Equal(data, damaged) {
					t.Fatalf("%s: Compare = %v", label, d)
				}
				if d != nil && (d.What == "" || d.String() == "") {
					t.Fatalf("%s: empty difference %#v", label, d)
				}
			}
			for i := 0; i < len(data); i += step {
				damaged := bytes.Clone(data)
				damaged[i] ^= 0x55
				check("byte "+strconv.Itoa(i), damaged)
				check("truncated at "+strconv.Itoa(i), data[:i])
			}
		})
	}
}

// FuzzCompare checks that Compare never fails on damaged inputs and finds
// a difference exactly when the bytes differ.
func FuzzCompare(f *testing.F) {
	wheelBytes := mkzip(zipOpts{}, testWheel()...)
	f.Add("w.whl", wheelBytes, mkzip(zipOpts{}, testWheel()[1:]...))
	f.Add("b.tar.gz", mktgz(tarOpts{}, testBundle(wheelBytes, manifest)...), mktgz(tarOpts{level: 1}, testBundle(wheelBytes, manifest)...))
	f.Add("m.json", []byte(manifest), []byte(`{"a": [1, {"b": null}]}`))
	f.Add("SHA256SUMS", []byte("a\nb\n"), []byte("a\nc"))
	f.Fuzz(func(t *testing.T, name string, a, b []byte) {
		name = "f" + strings.Map(func(r rune) rune {
			if r == '/' || r == 0 || r == '\\' {
				return '_'
			}
			return r
		}, filepath.Base(name))
		if len(name) > 100 {
			name = name[:100]
		}
		dir := t.TempDir()
		d, err := Compare(name, write(t, dir, "a", a), write(t, dir, "b", b))
		if err != nil {
			t.Fatalf("Compare: %v", err)
		}
		if (d == nil) != bytes.Equal(a, b) {
			t.Fatalf("Compare = %v for %d and %d bytes", d, len(a), len(b))
		}
	})
}
