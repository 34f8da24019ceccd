package deps

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestResolveFindLinks(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, c)
}

// checkFixtureClosure checks the closure of the standard fixture.
func checkFixtureClosure(t *testing.T, fx *fixture, c *Closure) {
	t.Helper()
	want := mapKeys(fx.files)
	var got []string
	for _, p := range c.Packages {
		got = append(got, p.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("closure %v, want %v", names(c), want)
	}
	if len(c.Own) != 2 || c.Own[0].Name != "demo-compiler" || c.Own[1].Name != "demo-plugin" {
		t.Fatalf("own %+v", c.Own)
	}
	for _, p := range c.Packages {
		if len(p.Files) != 1 {
			t.Fatalf("%s: files %+v", p.Name, p.Files)
		}
		f := p.Files[0]
		if f.SHA256 != sha256File(t, fx.files[p.Name]) || sha256File(t, f.Path) != f.SHA256 {
			t.Errorf("%s: file %+v is not the pinned one", p.Name, f)
		}
		if !strings.HasPrefix(f.Path, filepath.Join(fx.dir, "cache")) {
			t.Errorf("%s: %s is not in the cache", p.Name, f.Path)
		}
		if f.Name != filepath.Base(fx.files[p.Name]) {
			t.Errorf("%s: name %s", p.Name, f.Name)
		}
		switch p.Name {
		case "example2":
			if !slices.Equal(p.Pythons, []string{"3.9", "3.10", "3.11"}) {
				t.Errorf("example2 needed on %v, want 3.9-3.11 (python_version < \"3.12\")", p.Pythons)
			}
			if p.Marker.String() != `python_version == "3.9" or python_version == "3.10" or python_version == "3.11"` {
				t.Errorf("example2 marker %q", p.Marker)
			}
		default:
			if len(p.Pythons) != 5 || p.Marker != nil {
				t.Errorf("%s needed on %v (marker %v), want every Python", p.Name, p.Pythons, p.Marker)
			}
		}
	}
	byName := map[string]Resolved{}
	for _, p := range append(slices.Clone(c.Own), c.Packages...) {
		byName[p.Name] = p
	}
	// Extras: pip comes from demo-compiler[tools], setuptools and pytest
	// from wheel[test] (real metadata of wheel 0.43.0).
	if !slices.Equal(byName["demo-compiler"].Requires, []string{"example", "example2", "pip"}) {
		t.Errorf("demo-compiler requires %v", byName["demo-compiler"].Requires)
	}
	if !slices.Equal(byName["wheel"].Requires, []string{"pytest", "setuptools"}) {
		t.Errorf("wheel requires %v", byName["wheel"].Requires)
	}
	if !slices.Equal(byName["pip"].RequiredBy, []string{"demo-compiler"}) {
		t.Errorf("pip required by %v", byName["pip"].RequiredBy)
	}
	// License and supplier data from the real METADATA and .dist-info.
	pip := byName["pip"]
	if pip.License.Text != "MIT" || !slices.Contains(pip.License.Classifiers, "License :: OSI Approved :: MIT License") {
		t.Errorf("pip license %+v", pip.License)
	}
	if !strings.Contains(pip.People.Author+pip.People.AuthorEmail, "The pip developers") {
		t.Errorf("pip people %+v", pip.People)
	}
	licensed := false
	for _, lf := range pip.LicenseFiles {
		if strings.HasSuffix(lf.Path, ".dist-info/LICENSE.txt") && strings.Contains(string(lf.Data), "Permission is hereby granted") {
			licensed = true
		}
	}
	if !licensed {
		t.Errorf("pip's LICENSE.txt not found among %d license files", len(pip.LicenseFiles))
	}
	if byName["wheel"].People.MaintainerEmail == "" {
		t.Errorf("wheel people %+v", byName["wheel"].People)
	}
	for _, f := range c.Findings {
		if f.Kind != "lock-note" && f.Kind != "wheel" {
			t.Errorf("unexpected finding %s", f)
		}
	}
}

func TestResolveUnused(t *testing.T) {
	fx := newFixture(t)
	other := buildWheel(t, fx.findLinks, wheelSpec{name: "unused-thing", version: "2.0"})
	req := fx.requirements(t, nil,
		"unused-thing==2.0 --hash=sha256:"+sha256File(t, other),
		`winonly==1.0 ; sys_platform == "win32" --hash=sha256:`+strings.Repeat("a", 64),
		"demo-compiler==1.0.0 --hash=sha256:"+strings.Repeat("b", 64))
	lock := mustReadRequirements(t, req)
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, fd := range c.Findings {
		kinds[fd.Package] = fd.Kind
	}
	if kinds["unused-thing"] != "unused" || kinds["winonly"] != "not-for-target" || kinds["demo-compiler"] != "own-locked" {
		t.Errorf("findings %v", c.Findings)
	}
	if slices.Contains(names(c), "unused-thing==2.0") {
		t.Error("an unused package was bundled")
	}
}

// refusal resolves and returns the single refusal, checking its kind.
func refusal(t *testing.T, roots []Root, lock *Lock, f *Finder, target Target, kind Kind) *RefusalError {
	t.Helper()
	c, err := Resolve(context.Background(), roots, lock, f, target)
	if err == nil {
		t.Fatalf("resolved %v, want a %s refusal", names(c), kind)
	}
	var re *ResolveError
	if !errors.As(err, &re) {
		t.Fatalf("error %v is not a *ResolveError", err)
	}
	var found *RefusalError
	for _, r := range re.Refusals {
		if r.Kind == kind {
			found = r
		}
	}
	if found == nil {
		t.Fatalf("no %s refusal in: %v", kind, err)
	}
	if found.Remedy == "" || found.Target != target.Name {
		t.Errorf("refusal without remedy or target: %v", found)
	}
	t.Logf("%s", err)
	return found
}

func TestRefuseMissing(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"}))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindMissing)
	if r.Package != "example" || r.Requirement != "example>=21" || r.RequiredBy != fx.roots[0].File.String() {
		t.Errorf("refusal %+v", r)
	}
	if len(r.Pythons) != 5 {
		t.Errorf("pythons %v", r.Pythons)
	}
}

func TestRefuseVersion(t *testing.T) {
	fx := newFixture(t)
	// The lock pins wheel 0.43.0, demo-plugin asks for wheel[test]>=0.40:
	// pin example at a version the requirement excludes instead.
	root := buildWheel(t, filepath.Join(fx.dir, "own2"), wheelSpec{name: "demo-compiler", version: "1.0.0", tag: "py3-none-manylinux_2_17_x86_64",
		requires: []string{"example>=22"}})
	r0, err := LoadRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, []Root{r0}, lock, f, targetLinux, KindVersion)
	if r.Package != "example" || !strings.Contains(r.Detail, "21.12") {
		t.Errorf("refusal %+v", r)
	}
}

func TestRefuseAmbiguousLock(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, nil, "example==21.12 --hash=sha256:"+strings.Repeat("c", 64)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindAmbiguous)
	var amb *AmbiguousError
	if r.Package != "example" || !errors.As(r, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("refusal %+v", r)
	}
}

func TestAmbiguousDisjointMarkersAreFine(t *testing.T) {
	fx := newFixture(t)
	ex := fx.files["example"]
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"},
		`example==21.12 ; python_version < "3.11" --hash=sha256:`+sha256File(t, ex),
		`example==21.12 ; python_version >= "3.11" --hash=sha256:`+sha256File(t, ex)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range c.Packages {
		if p.Name == "example" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want two example entries (one per marker), got %v", names(c))
	}
}

func TestRefuseAmbiguousFiles(t *testing.T) {
	fx := newFixture(t)
	// The same project and version under two names whose best tag is the
	// same for every Python: both pinned, neither preferred.
	other := copyFile(t, fx.files["example"], fx.findLinks, "example-21.12-py2.py3-none-any.whl")
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"},
		"example==21.12 --hash=sha256:"+sha256File(t, fx.files["example"])+" --hash=sha256:"+sha256File(t, other)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindAmbiguous)
	if !strings.Contains(r.Detail, "py2.py3") {
		t.Errorf("refusal %+v", r)
	}
}

func TestRefuseNoFit(t *testing.T) {
	fx := newFixture(t)
	os.Remove(fx.files["example"])
	win := copyFile(t, realWheel(t, "example", "21.12"), fx.findLinks, "example-21.12-cp311-cp311-win_amd64.whl")
	old := copyFile(t, realWheel(t, "example", "21.12"), fx.findLinks, "example-21.12-cp27-cp27mu-manylinux1_x86_64.whl")
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"},
		"example==21.12 --hash=sha256:"+sha256File(t, win)))
	_ = old
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindNoFit)
	for _, want := range []string{"cp311-cp311-win_amd64", "cp27-cp27mu-manylinux1_x86_64", "manylinux_2_17_x86_64", "accepts"} {
		if !strings.Contains(r.Detail, want) {
			t.Errorf("detail lacks %q: %s", want, r.Detail)
		}
	}
	var nw *NoWheelError
	if !errors.As(r, &nw) {
		t.Errorf("no *NoWheelError in %v", r)
	}
}

func TestRefuseSdistOnly(t *testing.T) {
	fx := newFixture(t)
	os.Remove(fx.files["example"])
	sd := filepath.Join(fx.findLinks, "example-21.12.tar.gz")
	os.WriteFile(sd, []byte("not really a tarball"), 0o644)
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"}, "example==21.12 --hash=sha256:"+sha256File(t, sd)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindSdistOnly)
	if !strings.Contains(r.Detail, "sdists are not installed from a bundle: lock a wheel") {
		t.Errorf("detail %s", r.Detail)
	}
}

func TestRefuseHashMismatchLocal(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"}, "example==21.12 --hash=sha256:"+strings.Repeat("d", 64)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindHashMismatch)
	var hm *HashMismatchError
	if !errors.As(r, &hm) || hm.Got != sha256File(t, fx.files["example"]) {
		t.Errorf("refusal %+v", r)
	}
	if _, err := os.Stat(filepath.Join(fx.dir, "cache", "sha256", hm.Got)); err == nil {
		t.Error("bytes that are not pinned were kept in the cache")
	}
}

func TestRootMustFitTarget(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	mac := Target{Name: "macos-arm64", Platform: "macosx_11_0_arm64", Pythons: []string{"3.11"}}
	r := refusal(t, fx.roots, lock, f, mac, KindNoFit)
	if !strings.Contains(r.Detail, "release's own wheel") {
		t.Errorf("refusal %+v", r)
	}
}

func TestResolvePerPythonWheels(t *testing.T) {
	// example has a pure wheel (real) and an abi3 wheel for 3.11 and
	// later (built here): each Python gets the wheel it prefers, and the
	// bundle holds both.
	fx := newFixture(t)
	abi3 := buildWheel(t, fx.findLinks, wheelSpec{name: "example", version: "21.12", tag: "cp311-abi3-manylinux_2_17_x86_64"})
	lock := mustReadRequirements(t, fx.requirements(t, []string{"example"},
		"example==21.12 --hash=sha256:"+sha256File(t, fx.files["example"])+" --hash=sha256:"+sha256File(t, abi3)))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	ex := c.Packages[0]
	if ex.Name != "example" || len(ex.Files) != 2 || ex.Files[0].Name != filepath.Base(abi3) || ex.Files[1].Name != "example-21.12-py3-none-any.whl" {
		t.Fatalf("example files %+v", ex.Files)
	}
	if n := strings.Count(string(RequirementsTxt(c)), "--hash=sha256:"); n != len(c.Own)+len(c.Packages)+1 {
		t.Errorf("requirements.txt has %d hashes", n)
	}
	// Direct use of Fetch: Python 3.9 cannot use the abi3 wheel.
	tags, _ := TargetTags(targetLinux.Pythons, targetLinux.Platform)
	var example Locked
	for _, p := range lock.Packages {
		if p.Name == "example" {
			example = p
		}
	}
	for py, want := range map[string]string{"3.9": "example-21.12-py3-none-any.whl", "3.13": filepath.Base(abi3)} {
		file, err := f.Fetch(context.Background(), example, tags.Preference(py))
		if err != nil || file.Name != want {
			t.Errorf("Fetch for %s = %s, %v; want %s", py, file.Name, err, want)
		}
	}
}

func TestFetchPrefersHigherBuildTag(t *testing.T) {
	dir := t.TempDir()
	a := copyFile(t, realWheel(t, "example", "21.12"), dir, "example-21.12-1-py3-none-any.whl")
	b := buildWheel(t, filepath.Join(dir, "b"), wheelSpec{name: "example", version: "21.12"})
	b = copyFile(t, b, dir, "example-21.12-2-py3-none-any.whl")
	lock, err := ParseRequirements("r.txt", []byte("example==21.12 --hash=sha256:"+sha256File(t, a)+" --hash=sha256:"+sha256File(t, b)+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	tags, _ := TargetTags([]string{"3.12"}, "win_amd64")
	f := &Finder{FindLinks: []string{dir}, CacheDir: filepath.Join(dir, "cache")}
	file, err := f.Fetch(context.Background(), lock.Packages[0], tags.Preference("3.12"))
	if err != nil || file.Name != "example-21.12-2-py3-none-any.whl" {
		t.Errorf("Fetch = %+v, %v; want build 2", file, err)
	}
	if _, err := (&Finder{FindLinks: []string{dir}}).Fetch(context.Background(), lock.Packages[0], tags.Preference("3.12")); err == nil {
		t.Error("Fetch without a cache folder succeeded")
	}
}

func TestUnknownMarkerCountsAsApplying(t *testing.T) {
	fx := newFixture(t)
	root := buildWheel(t, filepath.Join(fx.dir, "own2"), wheelSpec{name: "demo-compiler", version: "1.0.0", tag: "py3-none-manylinux_2_17_x86_64",
		requires: []string{`example2==1.0.0 ; platform_release >= "6"`, `example ; sys_platform == "darwin"`}})
	r0, err := LoadRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), []Root{r0}, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names(c), []string{"example2==1.0.0"}) {
		t.Errorf("closure %v, want example2 only (its marker may hold on a Linux machine; example's cannot)", names(c))
	}
}

func TestResolveCanceled(t *testing.T) {
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache")}
	if _, err := Resolve(ctx, fx.roots, lock, f, targetLinux); !errors.Is(err, context.Canceled) {
		t.Errorf("Resolve with a canceled context = %v", err)
	}
}
