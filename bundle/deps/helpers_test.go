package deps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// realWheelGlobs are where this machine keeps real third-party wheels:
// Debian's python3-pip-whl and python3-setuptools-whl, and the wheels
// CPython ships with ensurepip and in its test data (pyenv builds).
var realWheelGlobs = []string{
	"/usr/share/python-wheels/*.whl",
	"/root/.pyenv/versions/*/lib/python3.*/ensurepip/_bundled/*.whl",
	"/root/.pyenv/versions/*/lib/python3.*/test/wheeldata/*.whl",
	"/root/.pyenv/versions/*/lib/python3.*/test/test_importlib/data/*.whl",
}

// realWheel returns the path of a real wheel of project (of version, when
// not ""), the highest version found; it fails the test, saying what to
// install, when there is none.
func realWheel(t testing.TB, project, version string) string {
	t.Helper()
	type found struct {
		path string
		v    pep440.Version
	}
	var all []found
	for _, g := range realWheelGlobs {
		paths, _ := filepath.Glob(g)
		for _, p := range paths {
			fn, err := wheel.ParseFilename(filepath.Base(p))
			if err != nil || pyname.Normalize(fn.Distribution) != project {
				continue
			}
			v, err := pep440.Parse(fn.Version)
			if err != nil || version != "" && v.String() != version {
				continue
			}
			all = append(all, found{p, v})
		}
	}
	if len(all) == 0 {
		t.Fatalf("no real wheel of %s %s on this machine (looked in %s): install Debian's python3-pip-whl and python3-setuptools-whl, and a CPython built with its test suite (pyenv install 3.11.7, 3.12.1, 3.13.0) for example, example2 and wheel",
			project, version, strings.Join(realWheelGlobs, ", "))
	}
	slices.SortFunc(all, func(a, b found) int {
		if c := b.v.Compare(a.v); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	return all[0].path
}

// copyFile copies src to dir/name (name "" keeps the base name) and
// returns the new path.
func copyFile(t testing.TB, src, dir, name string) string {
	t.Helper()
	if name == "" {
		name = filepath.Base(src)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, name)
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func sha256File(t testing.TB, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// wheelSpec describes a small wheel built by a test.
type wheelSpec struct {
	name, version string
	tag           string // python-abi-platform, default py3-none-any
	requires      []string
	extras        []string
	requiresPy    string
	license       string
}

// buildWheel writes the wheel described by s into dir with wheel.Write and
// returns its path.
func buildWheel(t testing.TB, dir string, s wheelSpec) string {
	t.Helper()
	tag := s.tag
	if tag == "" {
		tag = "py3-none-any"
	}
	parts := strings.SplitN(tag, "-", 3)
	fn, err := wheel.NewFilename(s.name, s.version, parts[0], parts[1], parts[2])
	if err != nil {
		t.Fatal(err)
	}
	var meta strings.Builder
	fmt.Fprintf(&meta, "Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: test wheel %s\n", s.name, s.version, s.name)
	fmt.Fprintf(&meta, "Author: mkrelease tests\nAuthor-email: tests@mkrelease.invalid\n")
	if s.license != "" {
		fmt.Fprintf(&meta, "License: %s\n", s.license)
	}
	if s.requiresPy != "" {
		fmt.Fprintf(&meta, "Requires-Python: %s\n", s.requiresPy)
	}
	for _, e := range s.extras {
		fmt.Fprintf(&meta, "Provides-Extra: %s\n", e)
	}
	for _, r := range s.requires {
		fmt.Fprintf(&meta, "Requires-Dist: %s\n", r)
	}
	var wheelFile strings.Builder
	fmt.Fprintf(&wheelFile, "Wheel-Version: 1.0\nGenerator: mkrelease-tests\nRoot-Is-Purelib: %v\n", parts[2] == "any")
	for _, tg := range fn.Tags() {
		fmt.Fprintf(&wheelFile, "Tag: %s\n", tg)
	}
	pkg := pyname.WheelEscape(s.name)
	c := &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: pkg + "/__init__.py", Data: []byte(fmt.Sprintf("VERSION = %q\n", s.version)), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: []byte(meta.String()), Mode: 0o644},
			{Path: "WHEEL", Data: []byte(wheelFile.String()), Mode: 0o644},
			{Path: "LICENSE", Data: []byte("Test license of " + s.name + "\n"), Mode: 0o644},
		},
		Epoch: 1793491200,
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

// fixture is the standard scenario: two release wheels and a find-links
// folder of real third-party wheels (plus one stub, pytest, which no real
// wheel on the machine provides).
type fixture struct {
	dir       string
	roots     []Root
	findLinks string
	// files maps a project to its wheel in findLinks.
	files map[string]string
}

// targetLinux is the target of most tests.
var targetLinux = Target{Name: "linux-x86_64", Platform: "manylinux_2_17_x86_64", Pythons: []string{"3.9", "3.10", "3.11", "3.12", "3.13"}}

// newFixture builds the scenario:
//
//	demo-compiler 1.0.0: example>=21; example2==1.0.0 ; python_version < "3.12";
//	    pywin32>=300 ; sys_platform == "win32"; pip>=22 ; extra == "tools"
//	demo-plugin 1.0.0: demo-compiler[tools]==1.0.0; wheel[test]>=0.40
//
// wheel 0.43.0's own extra "test" requires pytest>=6.0.0 and
// setuptools>=65, so the closure is example, example2 (Python < 3.12),
// pip, wheel, setuptools and pytest.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	fx := &fixture{dir: dir, findLinks: filepath.Join(dir, "find-links"), files: map[string]string{}}
	own := filepath.Join(dir, "own")
	compiler := buildWheel(t, own, wheelSpec{name: "demo-compiler", version: "1.0.0", tag: "py3-none-manylinux_2_17_x86_64",
		requires: []string{`example>=21`, `example2==1.0.0 ; python_version < "3.12"`, `pywin32>=300 ; sys_platform == "win32"`, `pip>=22 ; extra == "tools"`},
		extras:   []string{"tools"}, requiresPy: ">=3.9"})
	plugin := buildWheel(t, own, wheelSpec{name: "demo-plugin", version: "1.0.0", tag: "py3-none-manylinux_2_17_x86_64",
		requires: []string{`demo-compiler[tools]==1.0.0`, `wheel[test]>=0.40`}, requiresPy: ">=3.9"})
	for _, p := range []string{compiler, plugin} {
		r, err := LoadRoot(p)
		if err != nil {
			t.Fatal(err)
		}
		fx.roots = append(fx.roots, r)
	}
	for _, project := range []struct{ name, version string }{
		{"example", "21.12"}, {"example2", "1.0.0"}, {"pip", ""}, {"wheel", "0.43.0"}, {"setuptools", ""},
	} {
		fx.files[project.name] = copyFile(t, realWheel(t, project.name, project.version), fx.findLinks, "")
	}
	fx.files["pytest"] = buildWheel(t, fx.findLinks, wheelSpec{name: "pytest", version: "8.0.0", license: "MIT"})
	return fx
}

// requirements returns a requirements file pinning every file of the
// fixture's find-links folder (projects in skip left out), plus extra
// lines.
func (fx *fixture) requirements(t testing.TB, skip []string, extra ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# generated by the test\n")
	for _, project := range mapKeys(fx.files) {
		if slices.Contains(skip, project) {
			continue
		}
		p := fx.files[project]
		fn, _ := wheel.ParseFilename(filepath.Base(p))
		fmt.Fprintf(&b, "%s==%s \\\n    --hash=sha256:%s\n", project, fn.Version, sha256File(t, p))
	}
	for _, l := range extra {
		b.WriteString(l + "\n")
	}
	path := filepath.Join(t.TempDir(), "requirements.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mapKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func mustReadRequirements(t testing.TB, path string) *Lock {
	t.Helper()
	lock, err := ReadRequirements(path)
	if err != nil {
		t.Fatal(err)
	}
	return lock
}

// names lists "name==version" of a closure's packages.
func names(c *Closure) []string {
	var out []string
	for _, p := range c.Packages {
		out = append(out, p.Name+"=="+p.Version)
	}
	return out
}

func sha256Sum(data []byte) [32]byte { return sha256.Sum256(data) }

func pep508ParseMarker(s string) (*pep508.Marker, error) { return pep508.ParseMarker(s) }
