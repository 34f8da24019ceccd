package deps

import (
	"archive/zip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
	"github.com/mkrelease/mkrelease/wheel"
)

// rawCopy rebuilds the wheel at src byte by byte (package ziptest), its
// members stored, in their order; edit may change the entries before the
// archive is written to dir under the same file name.
func rawCopy(t *testing.T, src, dir string, edit func(a *zt.Archive)) string {
	t.Helper()
	zr, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	a := &zt.Archive{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		a.Entries = append(a.Entries, zt.Stored(f.Name, data))
	}
	if edit != nil {
		edit(a)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestReadWheelAuditsZip: a wheel whose local header names another file
// than its central directory header (pip's zipfile and Go read one name,
// streaming readers the other) is refused on both paths that read wheels,
// naming the wheel and the member; the same wheel rebuilt without the
// defect is read.
func TestReadWheelAuditsZip(t *testing.T) {
	dir := t.TempDir()
	src := buildWheel(t, filepath.Join(dir, "src"), wheelSpec{name: "demo-a", version: "1.0.0"})
	const member = "demo_a-1.0.0.dist-info/LICENSE"

	good := rawCopy(t, src, filepath.Join(dir, "good"), nil)
	if _, err := LoadOwn(good, "", 0); err != nil {
		t.Fatalf("LoadOwn of the faithful copy: %v", err)
	}
	if _, err := LoadRoot(good); err != nil {
		t.Fatalf("LoadRoot of the faithful copy: %v", err)
	}

	bad := rawCopy(t, src, filepath.Join(dir, "bad"), func(a *zt.Archive) {
		for _, e := range a.Entries {
			if e.Name == member {
				other := "demo_a-1.0.0.dist-info/LICENSF"
				e.LocalName = &other
				return
			}
		}
		t.Fatalf("no member %s", member)
	})
	for _, tt := range []struct {
		name string
		load func(string) (Root, error)
		want []string
	}{
		{"LoadOwn", func(p string) (Root, error) { return LoadOwn(p, "", 0) }, []string{
			"wheel demo_a-1.0.0-py3-none-any.whl: zip structure: ",
			`"` + member + `": at offset `,
			"zip readers (pip's zipfile, Go, streaming readers) would not agree on what the wheel holds: rebuild it",
		}},
		{"LoadRoot", LoadRoot, []string{
			"demo_a-1.0.0-py3-none-any.whl",
			`zip: "` + member + `": at offset `,
		}},
	} {
		_, err := tt.load(bad)
		if err == nil {
			t.Errorf("%s of the hostile wheel: no error", tt.name)
			continue
		}
		t.Logf("%s: %v", tt.name, err)
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s error %q\ndoes not contain %q", tt.name, err, w)
			}
		}
	}

	// readContents audits what it reads itself, whatever ran before.
	f, size, err := openWheel(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fn, err := wheel.ParseFilename(filepath.Base(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readContents(bad, f, size, &wheelInfo{fn: fn, meta: &wheel.Metadata{}}); err == nil || !strings.Contains(err.Error(), `"`+member+`"`) {
		t.Errorf("readContents of the hostile wheel: %v", err)
	}
}

// extraWheel writes a wheel of demo-b 1.0.0 with the members extra added
// (paths in the archive; those in the .dist-info folder go there).
func extraWheel(t *testing.T, dir string, extra map[string]string) string {
	t.Helper()
	fn, err := wheel.NewFilename("demo-b", "1.0.0", "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	c := &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: "demo_b/__init__.py", Data: []byte("\n"), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: []byte("Metadata-Version: 2.1\nName: demo-b\nVersion: 1.0.0\n"), Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644},
		},
		Epoch: 1793491200,
	}
	for p, data := range extra {
		if rest, ok := strings.CutPrefix(p, fn.DistInfo()+"/"); ok {
			c.DistInfo = append(c.DistInfo, wheel.Member{Path: rest, Data: []byte(data), Mode: 0o644})
		} else {
			c.Members = append(c.Members, wheel.Member{Path: p, Data: []byte(data), Mode: 0o644})
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := wheel.Write(context.Background(), c, dir)
	if err != nil {
		t.Fatal(err)
	}
	return res.Path
}

// TestCaseCollisionAndEntryPointsAreFatal: a wheel whose member names
// differ only in case installs other files on macOS and Windows, and an
// entry_points.txt with a bare CR gives other console scripts to Python
// than to other readers: both are refused, naming the member; style
// findings stay warnings.
func TestCaseCollisionAndEntryPointsAreFatal(t *testing.T) {
	for id, fatal := range map[string]bool{
		wheel.CheckCaseCollision: true, wheel.CheckEntryPoints: true, wheel.CheckZip: true,
		wheel.CheckFilename: false, wheel.CheckMetadata: false, wheel.CheckTagMismatch: false, wheel.CheckLicenseFile: false,
	} {
		if got := isFatalCheck(id); got != fatal {
			t.Errorf("isFatalCheck(%q) = %v, want %v", id, got, fatal)
		}
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{"case-collision", map[string]string{"demo_b/Data.txt": "a\n", "demo_b/data.txt": "b\n"}, []string{
			`case-collision: "demo_b/`, `only in case; on macOS and Windows one overwrites the other`,
		}},
		{"entry-points", map[string]string{"demo_b-1.0.0.dist-info/entry_points.txt": "[console_scripts]\rdemo-b = demo_b:main\n"}, []string{
			`entry-points: "demo_b-1.0.0.dist-info/entry_points.txt": line 1 (byte 17) has a carriage return`,
		}},
	} {
		p := extraWheel(t, filepath.Join(dir, tt.name), tt.extra)
		_, err := readWheel(p)
		if err == nil {
			t.Errorf("%s: readWheel: no error", tt.name)
			continue
		}
		t.Logf("%s: %v", tt.name, err)
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q\ndoes not contain %q", tt.name, err, w)
			}
		}
	}
	// Without the defects the same wheel is read.
	p := extraWheel(t, filepath.Join(dir, "clean"), map[string]string{"demo_b/data.txt": "b\n", "demo_b-1.0.0.dist-info/entry_points.txt": "[console_scripts]\ndemo-b = demo_b:main\n"})
	if _, err := readWheel(p); err != nil {
		t.Errorf("clean wheel: %v", err)
	}
}
