package deps

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func fixtureClosure(t *testing.T) (*fixture, *Closure) {
	t.Helper()
	fx := newFixture(t)
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{FindLinks: []string{fx.findLinks}, CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	return fx, c
}

func TestWritersDeterministic(t *testing.T) {
	_, c := fixtureClosure(t)
	req, lock := RequirementsTxt(c), PylockToml(c, nil)
	// The same closure in another order, and resolved again, gives the
	// same bytes.
	shuffled := *c
	shuffled.Packages = slices.Clone(c.Packages)
	shuffled.Own = slices.Clone(c.Own)
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(shuffled.Packages), func(i, j int) {
		shuffled.Packages[i], shuffled.Packages[j] = shuffled.Packages[j], shuffled.Packages[i]
	})
	slices.Reverse(shuffled.Own)
	if !bytes.Equal(req, RequirementsTxt(&shuffled)) || !bytes.Equal(lock, PylockToml(&shuffled, nil)) {
		t.Error("the writers depend on the order of the closure")
	}
	_, again := fixtureClosure(t)
	if !bytes.Equal(req, RequirementsTxt(again)) || !bytes.Equal(lock, PylockToml(again, nil)) {
		t.Errorf("two resolutions wrote different files:\n%s\n%s", req, RequirementsTxt(again))
	}
	for _, out := range [][]byte{req, lock} {
		if bytes.Contains(out, []byte(os.TempDir())) {
			t.Errorf("a host path leaked into the output:\n%s", out)
		}
	}
	t.Logf("requirements.txt:\n%s\npylock.toml:\n%s", req, lock)
}

func TestWritersRoundTrip(t *testing.T) {
	_, c := fixtureClosure(t)
	all := append(slices.Clone(c.Own), c.Packages...)
	rl, err := ParseRequirements("requirements.txt", RequirementsTxt(c))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := ParsePylock("/bundle/pylock.toml", PylockToml(c, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(rl.Packages) != len(all) || len(pl.Packages) != len(all) {
		t.Fatalf("%d packages in requirements.txt, %d in pylock.toml, want %d", len(rl.Packages), len(pl.Packages), len(all))
	}
	byName := map[string]Resolved{}
	for _, p := range all {
		byName[p.Name] = p
	}
	for i, p := range pl.Packages {
		want := byName[p.Name]
		if p.Version != want.Version || p.Marker.String() != want.Marker.String() || len(p.Wheels) != len(want.Files) {
			t.Errorf("pylock %+v, want %+v", p, want)
			continue
		}
		dir := DependencyDir
		if want.Own {
			dir = OwnDir
		}
		w := p.Wheels[0]
		if w.Path != "/bundle/"+dir+"/"+want.Files[0].Name || w.SHA256 != want.Files[0].SHA256 || w.Size != want.Files[0].Size {
			t.Errorf("pylock wheel %+v, want %+v", w, want.Files[0])
		}
		r := rl.Packages[i]
		if r.Name != p.Name || !slices.Equal(r.Hashes(), p.Hashes()) || r.Marker.String() != p.Marker.String() {
			t.Errorf("requirements.txt %+v and pylock.toml %+v differ", r, p)
		}
	}
	if !slices.Equal(pl.Environments[0].Variables(), []string{"platform_machine", "sys_platform"}) || pl.RequiresPython.String() != ">=3.9,<3.14" {
		t.Errorf("environments %v requires-python %v", pl.Environments, pl.RequiresPython)
	}
}

func TestRequiresPythonSpecifier(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{[]string{"3.9", "3.10", "3.11"}, ">=3.9,<3.12"},
		{[]string{"3.12", "3.8", "3.10"}, ">=3.8,!=3.9.*,!=3.11.*,<3.13"},
		{[]string{"3.11"}, ">=3.11,<3.12"},
		{nil, ""},
	} {
		if got := requiresPython(tt.in); got != tt.want {
			t.Errorf("requiresPython(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTOMLString(t *testing.T) {
	for in, want := range map[string]string{
		`python_version < "3.12"`: `"python_version < \"3.12\""`,
		`a\b`:                     `"a\\b"`,
		"tab\there\x01":           `"tab\there\u0001"`,
		"naïve":                   `"naïve"`,
	} {
		if got := tomlString(in); got != want {
			t.Errorf("tomlString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPipInstallsBundle lays the closure out as a bundle and has pip
// install it offline in hash-checking mode, from the requirements.txt
// RequirementsTxt wrote; Python's own TOML parser reads the pylock.toml.
func TestPipInstallsBundle(t *testing.T) {
	py := needPython(t)
	_, c := fixtureClosure(t)
	bundle := t.TempDir()
	for _, p := range append(slices.Clone(c.Own), c.Packages...) {
		dir := DependencyDir
		if p.Own {
			dir = OwnDir
		}
		for _, f := range p.Files {
			copyFile(t, f.Path, filepath.Join(bundle, dir), f.Name)
		}
	}
	os.WriteFile(filepath.Join(bundle, "requirements.txt"), RequirementsTxt(c), 0o644)
	os.WriteFile(filepath.Join(bundle, "pylock.toml"), PylockToml(c, nil), 0o644)
	venv := filepath.Join(t.TempDir(), "venv")
	home := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1", "LC_ALL=C.UTF-8"}
	run := func(name string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = bundle, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	run(py, "-m", "venv", venv)
	vpy := filepath.Join(venv, "bin", "python")
	run(vpy, "-m", "pip", "install", "--no-index", "--find-links", OwnDir, "--find-links", DependencyDir, "--require-hashes", "-r", "requirements.txt")
	var installed []struct{ Name, Version string }
	if err := json.Unmarshal(run(vpy, "-m", "pip", "list", "--format=json"), &installed); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range installed {
		got[strings.ToLower(strings.ReplaceAll(p.Name, "_", "-"))] = p.Version
	}
	for _, p := range append(slices.Clone(c.Own), c.Packages...) {
		if !slices.Contains(p.Pythons, "3.11") {
			continue
		}
		if got[p.Name] != p.Version {
			t.Errorf("%s: installed %q, want %s (pip list: %v)", p.Name, got[p.Name], p.Version, got)
		}
	}
	out := run(py, "-c", "import json, sys, tomllib; d = tomllib.load(open('pylock.toml', 'rb')); print(json.dumps([p['name'] for p in d['packages']]))")
	var names []string
	if err := json.Unmarshal(out, &names); err != nil || len(names) != len(c.Own)+len(c.Packages) {
		t.Errorf("tomllib read %s (%v)", out, err)
	}
}
