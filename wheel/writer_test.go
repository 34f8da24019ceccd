package wheel

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func sampleContents(t *testing.T) *Contents {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	os.WriteFile(bin, bytes.Repeat([]byte("\x7fELF binary-ish content "), 4000), 0o700)
	noise := make([]byte, 300<<10)
	rand.Read(noise)
	rnd := filepath.Join(dir, "noise.bin")
	os.WriteFile(rnd, noise, 0o600)
	gz := filepath.Join(dir, "data.gz")
	os.WriteFile(gz, []byte("pretend gzip"), 0o644)
	name, err := NewFilename("Demo.Pkg", "1.0-RC1", "py3", "none", "manylinux_2_17_x86_64")
	if err != nil {
		t.Fatal(err)
	}
	return &Contents{
		Name: name,
		Members: []Member{
			{Path: "demo_pkg/__init__.py", Data: []byte("VERSION = '1.0rc1'\n"), Mode: 0o644},
			{Path: "demo_pkg/bin/tool", File: bin, Mode: 0o700},
			{Path: "demo_pkg/noise.bin", File: rnd, Mode: 0o644},
			{Path: "demo_pkg/data.gz", File: gz, Mode: 0o644},
			{Path: "demo_pkg/ünïcode.txt", Data: []byte("names are UTF-8\n"), Mode: 0o644},
		},
		Data:     []Member{{Path: "scripts/demo-run", Data: []byte("#!python\nprint('hi')\n"), Mode: 0o755}},
		DistInfo: []Member{{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\n")}, {Path: "licenses/LICENSE", Data: []byte("MIT\n")}, {Path: "METADATA", Data: []byte("Metadata-Version: 2.4\nName: demo.pkg\nVersion: 1.0rc1\n")}},
		Epoch:    1793491200,
	}
}

func TestWriteIsDeterministicAndReadable(t *testing.T) {
	c := sampleContents(t)
	a, err := Write(context.Background(), c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(context.Background(), c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(a.Path)
	bb, _ := os.ReadFile(b.Path)
	if !bytes.Equal(ab, bb) || a.SHA256 != b.SHA256 {
		t.Fatal("two writes of the same contents differ")
	}
	// The validator finds nothing to object to in what the writer wrote,
	// apart from the sample's minimal METADATA/WHEEL, which it must flag.
	rep, err := Check(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Check != CheckWheelFile && f.Check != CheckTagMismatch {
			t.Errorf("validator finding on written wheel: %s", f)
		}
	}
	if filepath.Base(a.Path) != "demo_pkg-1.0rc1-py3-none-manylinux_2_17_x86_64.whl" {
		t.Errorf("file name %s", filepath.Base(a.Path))
	}
	zr, err := zip.OpenReader(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rc); err != nil { // checks the CRC
			t.Errorf("%s: %v", f.Name, err)
		}
		rc.Close()
		if got := f.Modified.UTC().Format("2006-01-02T15:04:05"); got != "2026-11-01T00:00:00" {
			t.Errorf("%s dated %s", f.Name, got)
		}
		if len(f.Extra) != 0 {
			t.Errorf("%s has extra fields %x", f.Name, f.Extra)
		}
	}
	want := []string{
		"demo_pkg/__init__.py", "demo_pkg/bin/tool", "demo_pkg/data.gz", "demo_pkg/noise.bin", "demo_pkg/ünïcode.txt",
		"demo_pkg-1.0rc1.data/scripts/demo-run",
		"demo_pkg-1.0rc1.dist-info/METADATA", "demo_pkg-1.0rc1.dist-info/WHEEL", "demo_pkg-1.0rc1.dist-info/licenses/LICENSE",
		"demo_pkg-1.0rc1.dist-info/RECORD",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("members:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	methods := map[string]uint16{}
	modes := map[string]os.FileMode{}
	for _, f := range zr.File {
		methods[f.Name] = f.Method
		modes[f.Name] = f.Mode().Perm()
	}
	if methods["demo_pkg/bin/tool"] != zip.Deflate || methods["demo_pkg/data.gz"] != zip.Store || methods["demo_pkg/noise.bin"] != zip.Store {
		t.Errorf("methods %v: want deflate for compressible, store for .gz and random bytes", methods)
	}
	if modes["demo_pkg/bin/tool"] != 0o755 || modes["demo_pkg/noise.bin"] != 0o644 || modes["demo_pkg-1.0rc1.data/scripts/demo-run"] != 0o755 {
		t.Errorf("modes %v", modes)
	}
	rc, _ := zr.File[len(zr.File)-1].Open()
	record, _ := io.ReadAll(rc)
	rc.Close()
	lines := strings.Split(strings.TrimSuffix(string(record), "\n"), "\n")
	if len(lines) != len(want) || lines[len(lines)-1] != "demo_pkg-1.0rc1.dist-info/RECORD,," ||
		lines[0] != "demo_pkg/__init__.py,"+RecordHashOf([]byte("VERSION = '1.0rc1'\n"))+",19" {
		t.Errorf("RECORD:\n%s", record)
	}
}

// Python's zipfile reads the result: the format is what installers expect.
func TestWriteReadByPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	r, err := Write(context.Background(), sampleContents(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); bad = z.testzip(); print(bad or 'ok', len(z.namelist()))", r.Path).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok 10") {
		t.Errorf("python zipfile: %s %v", out, err)
	}
}

func TestWriteRefusesBadContents(t *testing.T) {
	for name, change := range map[string]func(*Contents){
		"traversal":        func(c *Contents) { c.Members[0].Path = "../escape.py" },
		"absolute":         func(c *Contents) { c.Members[0].Path = "/etc/passwd" },
		"duplicate":        func(c *Contents) { c.Members[1].Path = c.Members[0].Path },
		"reserved folder":  func(c *Contents) { c.Members[0].Path = "x.dist-info/METADATA" },
		"RECORD by caller": func(c *Contents) { c.DistInfo = append(c.DistInfo, Member{Path: "RECORD", Data: []byte{}}) },
		"missing file":     func(c *Contents) { c.Members[1].File = "/nonexistent/tool" },
	} {
		t.Run(name, func(t *testing.T) {
			c := sampleContents(t)
			change(c)
			dir := t.TempDir()
			if _, err := Write(context.Background(), c, dir); err == nil {
				t.Fatal("Write succeeded")
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("a failed write left %v", entries)
			}
		})
	}
}

func TestFilenameRoundTrip(t *testing.T) {
	for _, s := range []string{"demo_pkg-1.0rc1-py3-none-any.whl", "x-1.0-1b-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"} {
		f, err := ParseFilename(s)
		if err != nil || f.String() != s {
			t.Errorf("ParseFilename(%q) = %v, %v", s, f, err)
		}
	}
	for _, s := range []string{"x-1.0-py3-none.whl", "x-1.0-b1-py3-none-any.whl", "x-1.0-py3-none-any.zip", "-1.0-py3-none-any.whl", "x-one-py3-none-any.whl"} {
		if _, err := ParseFilename(s); err == nil {
			t.Errorf("ParseFilename(%q) accepted", s)
		}
	}
}

// benchContents is a wheel of 8 copies of the test binary (a real ELF
// file), and sets b's bytes per operation to their total size.
func benchContents(b *testing.B) *Contents {
	b.Helper()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	name, _ := NewFilename("bench", "1.0", "py3", "none", "any")
	c := &Contents{Name: name, Epoch: 1793491200}
	for i := 0; i < 8; i++ {
		c.Members = append(c.Members, Member{Path: fmt.Sprintf("bench/bin%d", i), File: exe, Mode: 0o755})
	}
	b.SetBytes(8 * st.Size())
	return c
}

// BenchmarkWrite packs copies of the test binary (a real ELF file) into a
// wheel: the writer's throughput on native code. bench/wheelbench compares
// it with `wheel pack` on a larger payload.
func BenchmarkWrite(b *testing.B) {
	c := benchContents(b)
	dir := b.TempDir()
	for b.Loop() {
		if _, err := Write(context.Background(), c, dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck checks a wheel of copies of the test binary, as verify
// and install do: every member inflated and hashed against its RECORD row.
// Its throughput is of the uncompressed bytes.
func BenchmarkCheck(b *testing.B) {
	c := benchContents(b)
	c.DistInfo = []Member{
		{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\nTag: py3-none-any\n")},
		{Path: "METADATA", Data: []byte("Metadata-Version: 2.1\nName: bench\nVersion: 1.0\n")},
	}
	res, err := Write(context.Background(), c, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		rep, err := Check(res.Path)
		if err != nil {
			b.Fatal(err)
		}
		if len(rep.Findings) > 0 {
			b.Fatalf("findings: %v", rep.Findings)
		}
	}
}

// TestWriteZipVersions: every member says "version needed to extract" 1.0
// when stored and 2.0 when deflated, in its local header and in the
// central directory, and "made by" Unix 2.0 (0x0314) like CPython's
// zipfile; Python reads the same values.
func TestWriteZipVersions(t *testing.T) {
	r, err := Write(context.Background(), sampleContents(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	zr, raw := readZip(t, r.Path)
	want := map[uint16]uint16{zip.Store: 10, zip.Deflate: 20}
	var lines []string
	methods := map[uint16]int{}
	for _, f := range zr.File {
		local := localVersion(t, raw, f)
		if f.ReaderVersion != want[f.Method] || local != want[f.Method] || f.CreatorVersion != 0x0314 {
			t.Errorf("%s (method %d): needed %d (local %d), made by %#04x; want %d and 0x0314", f.Name, f.Method, f.ReaderVersion, local, f.CreatorVersion, want[f.Method])
		}
		methods[f.Method]++
		lines = append(lines, fmt.Sprintf("%s %d %d %d", f.Name, 3, 20, want[f.Method]))
	}
	if methods[zip.Store] == 0 || methods[zip.Deflate] == 0 {
		t.Errorf("members by method %v: the sample has no stored or no deflated member, so a rule goes unchecked", methods)
	}
	pythonReadsVersions(t, r.Path, lines)
}

// localVersion reads "version needed to extract" from the local header of
// f in the archive raw: the header that ends where f's data starts (30
// fixed bytes, the name, the extra field).
func localVersion(t *testing.T, raw []byte, f *zip.File) uint16 {
	t.Helper()
	off, err := f.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	for lh := off - 30 - int64(len(f.Name)); lh >= 0 && lh >= off-30-int64(len(f.Name))-0xffff; lh-- {
		if string(raw[lh:lh+4]) != "PK\x03\x04" {
			continue
		}
		nameLen, extraLen := int64(binary.LittleEndian.Uint16(raw[lh+26:])), int64(binary.LittleEndian.Uint16(raw[lh+28:]))
		if nameLen == int64(len(f.Name)) && lh+30+nameLen+extraLen == off && string(raw[lh+30:lh+30+nameLen]) == f.Name {
			return binary.LittleEndian.Uint16(raw[lh+4:])
		}
	}
	t.Fatalf("%s: no local header before its data at %d", f.Name, off)
	return 0
}

// TestWriteZip64Versions writes a wheel with a member of 4 GiB and a byte
// (a sparse file of zeros: a few MB deflated), past what a zip without
// ZIP64 fields can record: that member says it needs 4.5 and was made by
// Unix 4.5 (0x032d), in its local header and in the central directory,
// and the others keep 2.0 (archive/zip reads them all back; Python's
// zipfile too when it is there).
func TestWriteZip64Versions(t *testing.T) {
	if testing.Short() {
		t.Skip("deflates 4 GiB")
	}
	c := sampleContents(t)
	big := filepath.Join(t.TempDir(), "zeros.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	const size = 1<<32 + 1
	if err := f.Truncate(size); err != nil {
		t.Skip("no sparse file of 4 GiB here: ", err)
	}
	f.Close()
	c.Members = append(c.Members, Member{Path: "demo_pkg/zeros.bin", File: big, Mode: 0o644})
	r, err := Write(context.Background(), c, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	zr, raw := readZip(t, r.Path)
	var lines []string
	sawBig := false
	for _, f := range zr.File {
		needed, made := map[uint16]uint16{zip.Store: 10, zip.Deflate: 20}[f.Method], uint16(0x0314)
		if f.Name == "demo_pkg/zeros.bin" {
			sawBig = true
			if f.UncompressedSize64 != size || f.Method != zip.Deflate {
				t.Errorf("%s: %d bytes, method %d; want %d deflated", f.Name, f.UncompressedSize64, f.Method, size)
			}
			needed, made = 45, 0x032d
		}
		if local := localVersion(t, raw, f); f.ReaderVersion != needed || local != needed || f.CreatorVersion != made {
			t.Errorf("%s: needed %d (local %d), made by %#04x; want %d and %#04x", f.Name, f.ReaderVersion, local, f.CreatorVersion, needed, made)
		}
		lines = append(lines, fmt.Sprintf("%s %d %d %d", f.Name, 3, made&0xff, needed))
	}
	if !sawBig {
		t.Fatal("the wheel has no demo_pkg/zeros.bin")
	}
	pythonReadsVersions(t, r.Path, lines)
}

func TestSetVersions(t *testing.T) {
	const big = 1 << 32
	tests := []struct {
		method       uint16
		csize, usize uint64
		offset       int64
		needed, made uint16
	}{
		{zip.Store, 5, 5, 0, 10, 0x0314},
		{zip.Deflate, 3, 5, 0, 20, 0x0314},
		{zip.Store, 0, 0, 1 << 20, 10, 0x0314},
		{zip.Deflate, 3, 5, 0xfffffffe, 20, 0x0314},
		{zip.Store, 5, 5, 0xffffffff, 45, 0x032d}, // the offset needs zip64
		{zip.Deflate, 3, big, 0, 45, 0x032d},      // so does the size
		{zip.Store, 0xffffffff, 0xffffffff, 0, 45, 0x032d},
	}
	for _, tt := range tests {
		h := &zip.FileHeader{Method: tt.method, CompressedSize64: tt.csize, UncompressedSize64: tt.usize}
		h.SetMode(0o644)
		setVersions(h, tt.offset)
		if h.ReaderVersion != tt.needed || h.CreatorVersion != tt.made {
			t.Errorf("method %d, sizes %d/%d at %d: needed %d, made by %#04x; want %d, %#04x", tt.method, tt.csize, tt.usize, tt.offset, h.ReaderVersion, h.CreatorVersion, tt.needed, tt.made)
		}
	}
}

// pythonReadsVersions checks that Python's zipfile reads the members of
// the wheel at path as lines says: "NAME CREATE_SYSTEM CREATE_VERSION
// EXTRACT_VERSION", one per member in order.
func pythonReadsVersions(t *testing.T, path string, lines []string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	out, err := exec.Command(py, "-c", `import sys, zipfile
for i in zipfile.ZipFile(sys.argv[1]).infolist(): print(i.filename, i.create_system, i.create_version, i.extract_version)`, path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(lines, "\n") {
		t.Errorf("python zipfile reads:\n%s\nwant:\n%s", got, strings.Join(lines, "\n"))
	}
}

// readZip reads the zip file at path whole and opens it.
func readZip(t *testing.T, path string) (*zip.Reader, []byte) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return zr, raw
}

// A member whose file no longer has the digest its caller hashed it with
// (it changed during the build) stops the write: nothing is left in the
// folder, and the error names the member, the file and the remedy.
func TestWriteRefusesAMemberThatChanged(t *testing.T) {
	c := sampleContents(t)
	for i, m := range c.Members {
		if m.File != "" {
			sum, _, err := checksum.File(m.File)
			if err != nil {
				t.Fatal(err)
			}
			c.Members[i].SHA256 = sum
		}
	}
	if _, err := Write(context.Background(), c, t.TempDir()); err != nil {
		t.Fatalf("members with their true digests: %v", err)
	}
	tool := c.Members[1]
	os.WriteFile(tool.File, []byte("\x7fELF changed during the build"), 0o700)
	dir := t.TempDir()
	_, err := Write(context.Background(), c, dir)
	var ce *ChangedError
	if !errors.As(err, &ce) {
		t.Fatalf("Write = %v, want a *ChangedError", err)
	}
	if ce.Member != tool.Path || ce.File != tool.File || ce.Want != tool.SHA256 || ce.Got != checksum.Bytes([]byte("\x7fELF changed during the build")) {
		t.Errorf("ChangedError = %+v", ce)
	}
	for _, s := range []string{tool.Path, tool.File, "changed during the build", "hint: build again"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left in the folder: %v", left)
	}
}
