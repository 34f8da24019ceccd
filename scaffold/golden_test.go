package scaffold

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// update rewrites the golden files from init's output:
//
//	go test ./scaffold -run TestGolden -update
var update = flag.Bool("update", false, "rewrite scaffold/testdata/golden/*/ from init's output")

// goldenHost is the machine the golden files are rendered for: a Debian
// x86_64 host with two CPythons and a git identity, the project committed.
var goldenHost = Host{GOOS: "linux", GOARCH: "amd64", Glibc: "2.36", Pythons: []string{"3.11", "3.12"},
	Commit: commit, AuthorName: "Ada Dev", AuthorEmail: "ada@example.invalid", CCSupplier: "Organization: Debian"}

// goldenSummary is the golden file of the lines init prints about what it
// detected (the "wrote" lines and lock's output follow them).
const goldenSummary = "summary.txt"

// unpackProject writes the project archive of a shape into a fresh folder
// and returns the project folder: the first element of the archive's
// paths.
func unpackProject(t *testing.T, archive string) string {
	t.Helper()
	ar, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	top := ""
	for _, f := range ar.Files {
		first, _, _ := strings.Cut(f.Name, "/")
		if top != "" && first != top {
			t.Fatalf("%s: %s is not under %s/: every file is under the project folder", archive, f.Name, top)
		}
		top = first
		p := filepath.Join(root, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, top)
}

// TestGolden holds init's whole output for each project shape under
// testdata/golden/SHAPE/: the project is SHAPE/project.txtar, and every
// file init writes is SHAPE/PATH.golden (.gitignore as .gitignore.golden),
// with the lines it prints about what it detected in summary.txt.golden.
// A change to the output fails here until the golden files are rewritten
// with -update and the difference reviewed. Each generated release.toml
// then loads with the configuration's own loader, and where the project
// has a pyproject.toml, resolves to the same metadata.
func TestGolden(t *testing.T) {
	shapes, err := filepath.Glob(filepath.Join("testdata", "golden", "*", "project.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(shapes) < 3 {
		t.Fatalf("%d project shapes under testdata/golden, want at least 3", len(shapes))
	}
	for _, archive := range shapes {
		golden := filepath.Dir(archive)
		t.Run(filepath.Base(golden), func(t *testing.T) {
			dir := unpackProject(t, archive)
			p, err := Detect(dir)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Files(p, goldenHost)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{goldenSummary: []byte(strings.Join(Summary(p, goldenHost), "\n") + "\n")}
			for _, f := range files {
				got[f.Path] = f.Data
			}
			compareGolden(t, golden, got)

			if _, err := Write(dir, files); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(filepath.Join(dir, "release.toml"))
			if err != nil {
				t.Fatalf("the generated release.toml does not load:\n%v", err)
			}
			if p.Pyproject != nil {
				checkPyprojectMetadata(t, dir, cfg)
			}
			for _, w := range cfg.Wheels {
				if len(w.Include) == 0 {
					t.Errorf("wheel %s includes nothing", w.Name)
				}
			}
		})
	}
}

// compareGolden compares init's output got (path → content) with the
// golden files of folder golden, or rewrites them with -update.
func compareGolden(t *testing.T, golden string, got map[string][]byte) {
	t.Helper()
	var have []string
	err := filepath.WalkDir(golden, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".golden") {
			rel, _ := filepath.Rel(golden, p)
			have = append(have, strings.TrimSuffix(filepath.ToSlash(rel), ".golden"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		for _, rel := range have {
			if _, ok := got[rel]; !ok {
				os.Remove(filepath.Join(golden, filepath.FromSlash(rel)+".golden"))
			}
		}
		for rel, data := range got {
			p := filepath.Join(golden, filepath.FromSlash(rel)+".golden")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, rel := range have {
		if _, ok := got[rel]; !ok {
			t.Errorf("%s.golden: init no longer writes %s (rewrite the golden files with -update)", path.Join(golden, rel), rel)
		}
	}
	for rel, data := range got {
		want, err := os.ReadFile(filepath.Join(golden, filepath.FromSlash(rel)+".golden"))
		if err != nil {
			t.Errorf("init writes %s, which has no golden file (rewrite them with -update): %v", rel, err)
			continue
		}
		if !bytes.Equal(data, want) {
			t.Errorf("%s differs from %s.golden (rewrite with -update once the change is intended):\n%s",
				rel, path.Join(filepath.ToSlash(golden), rel), lineDiff(string(want), string(data)))
		}
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n  golden: " + a + "\n  now:    " + b
		}
	}
	return "(the same lines)"
}

// checkPyprojectMetadata checks that the configuration loaded from the
// generated release.toml has the metadata of the project's pyproject.toml:
// the release's name, version, summary and license, and the wheel named as
// the release's requires-python and dependencies. Then, as in the issue
// (release.toml at 1.10.0.post1, pyproject.toml at 1.10.0), it changes the
// version in pyproject.toml only: the release follows, and a version
// written into release.toml as well that differs is refused.
func checkPyprojectMetadata(t *testing.T, dir string, cfg *config.Config) {
	t.Helper()
	var doc struct {
		Project struct {
			Name           string   `toml:"name"`
			Version        string   `toml:"version"`
			Description    string   `toml:"description"`
			License        string   `toml:"license"`
			RequiresPython string   `toml:"requires-python"`
			Dependencies   []string `toml:"dependencies"`
		} `toml:"project"`
	}
	pyPath := filepath.Join(dir, "pyproject.toml")
	data, err := os.ReadFile(pyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	pp := doc.Project
	if cfg.Project.From != "pyproject.toml" {
		t.Errorf("[project] from = %q, want pyproject.toml", cfg.Project.From)
	}
	if cfg.Project.NormalizedName != pyname.Normalize(pp.Name) || cfg.Project.Version != pp.Version || cfg.Project.Summary != pp.Description {
		t.Errorf("release %s %s %q, pyproject.toml says %s %s %q", cfg.Project.NormalizedName, cfg.Project.Version, cfg.Project.Summary, pp.Name, pp.Version, pp.Description)
	}
	if pp.License != "" && cfg.Project.License != pp.License {
		t.Errorf("license %q, pyproject.toml says %q", cfg.Project.License, pp.License)
	}
	w, ok := cfg.Wheel(pyname.Normalize(pp.Name))
	if !ok {
		t.Fatalf("no wheel named as pyproject.toml's distribution %s", pp.Name)
	}
	if w.RequiresPython != pp.RequiresPython || !slices.Equal(w.Requires, pp.Dependencies) && len(w.Requires)+len(pp.Dependencies) > 0 {
		t.Errorf("wheel %s: requires_python %q, requires %q; pyproject.toml: %q, %q", w.Name, w.RequiresPython, w.Requires, pp.RequiresPython, pp.Dependencies)
	}
	// release.toml writes none of what pyproject.toml gives
	var raw struct {
		Project map[string]any   `toml:"project"`
		Wheel   []map[string]any `toml:"wheel"`
	}
	if err := toml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "release.toml"))), &raw); err != nil {
		t.Fatal(err)
	}
	var set map[string]map[string]any
	if err := toml.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	for field, key := range map[string]string{"name": "name", "version": "version", "description": "summary", "license": "license", "readme": "readme", "authors": "authors"} {
		if _, inPy := set["project"][field]; inPy {
			if _, inRelease := raw.Project[key]; inRelease {
				t.Errorf("release.toml [project] writes %s, which pyproject.toml's %s gives", key, field)
			}
		}
	}
	for _, rw := range raw.Wheel {
		if rw["name"] != pyname.Normalize(pp.Name) {
			continue
		}
		for field, key := range map[string]string{"requires-python": "requires_python", "dependencies": "requires", "scripts": "scripts", "classifiers": "classifiers"} {
			if _, inPy := set["project"][field]; inPy {
				if _, inRelease := rw[key]; inRelease {
					t.Errorf("release.toml's wheel %s writes %s, which pyproject.toml's %s gives", rw["name"], key, field)
				}
			}
		}
	}

	bumped := strings.Replace(string(data), `version = "`+pp.Version+`"`, `version = "`+pp.Version+`.post1"`, 1)
	if err := os.WriteFile(pyPath, []byte(bumped), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := config.Load(filepath.Join(dir, "release.toml"))
	if err != nil {
		t.Fatalf("release.toml does not load after pyproject.toml's version changed: %v", err)
	}
	if again.Project.Version != pp.Version+".post1" {
		t.Errorf("after pyproject.toml moved to %s.post1 the release is %s", pp.Version, again.Project.Version)
	}
	rt := readFile(t, filepath.Join(dir, "release.toml"))
	copied := strings.Replace(rt, "from = \"pyproject.toml\"\n", "from = \"pyproject.toml\"\nversion = \""+pp.Version+"\"\n", 1)
	if _, err := config.Parse("release.toml", dir, []byte(copied)); err == nil || !strings.Contains(err.Error(), "project.version") {
		t.Errorf("a release.toml version that differs from pyproject.toml's loads: %v", err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
