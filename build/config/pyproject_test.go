package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const goodPyProject = `[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "Demo_Pkg"
version = "1.0.0"
description = "A demo package"
readme = "README.md"
license = "MIT OR Apache-2.0"
license-files = ["LICENSE"]
requires-python = ">=3.9"
dependencies = ["numpy>=1.21", "rich; python_version >= '3.10'"]
authors = [{ name = "Ann Example", email = "ann@example.org" }, { name = "Team" }]
maintainers = [{ email = "ops@example.org" }]
keywords = ["demo", "example"]
classifiers = ["Programming Language :: Python :: 3"]
urls = { Homepage = "https://example.org", "Bug Tracker" = "https://example.org/issues" }
scripts = { demo = "demo_pkg.cli:main" }
gui-scripts = { demo-gui = "demo_pkg.gui:main" }
import-names = ["demo_pkg"]
optional-dependencies = { CLI = ["click>=8"], empty = [] }

[project.entry-points."demo.plugins"]
basic = "demo_pkg.plugins:Basic"

[tool.demo]
anything = { goes = 1 }
`

func TestParsePyProject(t *testing.T) {
	pp, errs := parsePyProject("py/pyproject.toml", "py/pyproject.toml", []byte(goodPyProject))
	if errs != nil {
		t.Fatalf("parsePyProject: %v", errs)
	}
	check := func(what string, got, want any) {
		t.Helper()
		switch g := got.(type) {
		case []string:
			if !slices.Equal(g, want.([]string)) {
				t.Errorf("%s = %q, want %q", what, got, want)
			}
		case map[string]string:
			if !maps.Equal(g, want.(map[string]string)) {
				t.Errorf("%s = %q, want %q", what, got, want)
			}
		case []Person:
			if !slices.Equal(g, want.([]Person)) {
				t.Errorf("%s = %q, want %q", what, got, want)
			}
		default:
			if got != want {
				t.Errorf("%s = %q, want %q", what, got, want)
			}
		}
	}
	check("name", pp.Name, "Demo_Pkg")
	check("version", pp.Version, "1.0.0")
	check("description", pp.Description, "A demo package")
	check("readme (project-relative)", pp.Readme, "py/README.md")
	check("readme type", pp.ReadmeType, "")
	check("license", pp.License, "MIT OR Apache-2.0")
	check("license-files", pp.LicenseFiles, []string{"LICENSE"})
	check("requires-python", pp.RequiresPython, ">=3.9")
	check("dependencies", pp.Dependencies, []string{"numpy>=1.21", "rich; python_version >= '3.10'"})
	check("authors", pp.Authors, []Person{{Name: "Ann Example", Email: "ann@example.org"}, {Name: "Team"}})
	check("maintainers", pp.Maintainers, []Person{{Email: "ops@example.org"}})
	check("keywords", pp.Keywords, []string{"demo", "example"})
	check("classifiers", pp.Classifiers, []string{"Programming Language :: Python :: 3"})
	check("urls", pp.URLs, map[string]string{"Homepage": "https://example.org", "Bug Tracker": "https://example.org/issues"})
	check("scripts", pp.Scripts, map[string]string{"demo": "demo_pkg.cli:main"})
	check("gui-scripts", pp.GUIScripts, map[string]string{"demo-gui": "demo_pkg.gui:main"})
	check("entry-points", pp.EntryPoints["demo.plugins"], map[string]string{"basic": "demo_pkg.plugins:Basic"})
	check("optional-dependencies", pp.Extras["CLI"], []string{"click>=8"})
	check("optional-dependencies (empty)", pp.Extras["empty"], []string{})
	if len(pp.SHA256) != 64 {
		t.Errorf("SHA256 = %q", pp.SHA256)
	}

	pp, errs = parsePyProject("pyproject.toml", "pyproject.toml", []byte(`[project]
name = "x"
dynamic = ["version", "dependencies"]
readme = { text = "Hello\n", content-type = "text/x-rst" }
license = { file = "LICENSE" }
`))
	if errs != nil {
		t.Fatalf("parsePyProject: %v", errs)
	}
	check("readme text", pp.ReadmeText, "Hello\n")
	check("readme type", pp.ReadmeType, "text/x-rst")
	if !pp.LicenseLegacy || pp.License != "" {
		t.Errorf("license table: legacy %v, license %q", pp.LicenseLegacy, pp.License)
	}
	if pp.dynamic["version"] != 0 || pp.dynamic["dependencies"] != 1 || pp.set["version"] {
		t.Errorf("dynamic = %v, set = %v", pp.dynamic, pp.set)
	}
}

// TestParsePyProjectRefusals pins each refusal of the pyproject reader: the
// file, line and column, the key and the message.
func TestParsePyProjectRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"syntax", "[project\nname = 1\n", "py/pyproject.toml:1:9: "},
		{"no [project]", "[tool.x]\na = 1\n", "py/pyproject.toml: project: no [project] table"},
		{"project not a table", "project = 1\n", "py/pyproject.toml:1:11: project: wrong type: found an integer"},
		{"unknown key", "[project]\nname = \"x\"\nversoin = \"1\"\n", `py/pyproject.toml:3:11: project.versoin: unknown key` + "\n\thint: did you mean \"version\"?"},
		{"missing name", "[project]\nversion = \"1\"\n", "py/pyproject.toml:1:2: project.name: missing name"},
		{"name of the wrong type", "[project]\nname = 1\n", "py/pyproject.toml:2:8: project.name: wrong type: found an integer\n\thint: this key takes a string"},
		{"dynamic name", "[project]\nname = \"x\"\ndynamic = [\"name\"]\n", "py/pyproject.toml:3:12: project.dynamic[0]: name cannot be dynamic"},
		{"dynamic and set", "[project]\nname = \"x\"\nversion = \"1\"\ndynamic = [\"version\"]\n", "py/pyproject.toml:4:12: project.dynamic[0]: version is listed as dynamic and also set"},
		{"dynamic unknown", "[project]\nname = \"x\"\ndynamic = [\"versions\"]\n", `py/pyproject.toml:3:12: project.dynamic[0]: unknown field "versions"`},
		{"readme extension", "[project]\nname = \"x\"\nreadme = \"README\"\n", `py/pyproject.toml:3:10: project.readme: cannot tell the content type of "README" from its extension`},
		{"readme file and text", "[project]\nname = \"x\"\nreadme = { file = \"a.md\", text = \"b\", content-type = \"text/markdown\" }\n", "py/pyproject.toml:3:10: project.readme: the readme table needs one of file or text"},
		{"readme content type", "[project]\nname = \"x\"\nreadme = { file = \"a.html\", content-type = \"text/html\" }\n", `py/pyproject.toml:3:44: project.readme.content-type: unsupported readme content type "text/html"`},
		{"readme without content type", "[project]\nname = \"x\"\nreadme = { file = \"a.md\" }\n", `py/pyproject.toml:3:10: project.readme.content-type: unsupported readme content type ""`},
		{"readme leaves the project", "[project]\nname = \"x\"\nreadme = \"../../README.md\"\n", `py/pyproject.toml:3:10: project.readme: "../../README.md" leaves the project folder`},
		{"readme absolute", "[project]\nname = \"x\"\nreadme = \"/etc/README.md\"\n", `py/pyproject.toml:3:10: project.readme: "/etc/README.md" is absolute`},
		{"readme text with NUL", "[project]\nname = \"x\"\nreadme = { text = \"a\\u0000\", content-type = \"text/plain\" }\n", "py/pyproject.toml:3:19: project.readme.text: holds U+0000 NUL at character 2"},
		{"license table with both", "[project]\nname = \"x\"\nlicense = { file = \"L\", text = \"MIT\" }\n", "py/pyproject.toml:3:11: project.license: invalid license table"},
		{"license of the wrong type", "[project]\nname = \"x\"\nlicense = 1\n", "py/pyproject.toml:3:11: project.license: wrong type: found an integer"},
		{"author key", "[project]\nname = \"x\"\nauthors = [{ name = \"a\", mail = \"b\" }]\n", "py/pyproject.toml:3:33: project.authors[0].mail: unknown key"},
		{"author not a table", "[project]\nname = \"x\"\nauthors = [\"Ann\"]\n", "py/pyproject.toml:3:12: project.authors[0]: wrong type: found a string"},
		{"optional dependencies of the wrong type", "[project]\nname = \"x\"\n[project.optional-dependencies]\ncli = \"click\"\n", "py/pyproject.toml:4:7: project.optional-dependencies.cli: wrong type: found a string\n\thint: this key takes an array of strings"},
		{"entry points of the wrong type", "[project]\nname = \"x\"\nentry-points = { g = \"x:y\" }\n", "py/pyproject.toml:3:22: project.entry-points.g: wrong type: found a string"},
		{"classifier of the wrong type", "[project]\nname = \"x\"\nclassifiers = [\"a\", 2]\n", "py/pyproject.toml:3:21: project.classifiers[1]: wrong type: found an integer"},
		{"urls of the wrong type", "[project]\nname = \"x\"\nurls = [\"https://x\"]\n", "py/pyproject.toml:3:1: project.urls: wrong type: found an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pp, errs := parsePyProject("py/pyproject.toml", "py/pyproject.toml", []byte(tc.doc))
			if errs == nil || pp != nil {
				t.Fatalf("accepted:\n%s", tc.doc)
			}
			if !strings.Contains(errs.Error(), tc.want) {
				t.Errorf("got\n%v\nwant it to contain\n%s", errs, tc.want)
			}
		})
	}
}

func FuzzParsePyProject(f *testing.F) {
	f.Add([]byte(goodPyProject))
	f.Add([]byte("[project]\nname = \"x\"\ndynamic = [\"version\", 1, \"name\"]\nreadme = { file = \"../a\" }\n"))
	f.Add([]byte("[project]\nname = \"x\"\nentry-points = { a = { b = 1 } }\nauthors = [{}, 1]\nlicense = {}\n"))
	f.Add([]byte("project = []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pp, errs := parsePyProject("py/pyproject.toml", "py/pyproject.toml", data)
		if (pp == nil) == (errs == nil) {
			t.Fatalf("pyproject %v, errors %v: want exactly one", pp, errs)
		}
		for _, e := range errs {
			if e.File != "py/pyproject.toml" || e.ExitCode() != 2 {
				t.Fatalf("error %v does not name the file or map to exit 2", e)
			}
		}
		if pp != nil && (pp.Readme == ".." || strings.HasPrefix(pp.Readme, "../") || strings.HasPrefix(pp.Readme, "/")) {
			t.Fatalf("readme %q leaves the project", pp.Readme)
		}
	})
}

// fromRelease is a release.toml whose metadata comes from py/pyproject.toml.
const fromRelease = `[project]
from = "py/pyproject.toml"

[[source]]
name = "up"
local = "src"

[[target]]
name = "linux-x86_64"

[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.12"]

[[wheel]]
name = "demo-pkg"
[[wheel.include]]
source = "up"
from = "demo_pkg"
to = "demo_pkg"
[[wheel.licenses]]
source = "up"
from = "LICENSE"
`

// wheelFrom is fromRelease with from on its [[wheel]] instead of
// [project], which names the release "demo" at version.
func wheelFrom(version string) string {
	r := strings.Replace(fromRelease, "from = \"py/pyproject.toml\"", "name = \"demo\"\nversion = \""+version+"\"", 1)
	return strings.Replace(r, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nfrom = \"py/pyproject.toml\"\n", 1)
}

// loadFrom writes release.toml and the files into a fresh project folder
// and loads it.
func loadFrom(t *testing.T, release string, files map[string]string) (*Config, error) {
	t.Helper()
	dir := t.TempDir()
	files["release.toml"] = release
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Parse("release.toml", dir, []byte(files["release.toml"]))
}

func TestFromMerges(t *testing.T) {
	c, err := loadFrom(t, fromRelease, map[string]string{"py/pyproject.toml": goodPyProject})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	p, w := c.Project, c.Wheels[0]
	if p.NormalizedName != "demo-pkg" || p.Version != "1.0.0" || p.Summary != "A demo package" || p.License != "MIT OR Apache-2.0" || p.Readme != "py/README.md" {
		t.Errorf("project = %+v", p)
	}
	if len(p.Authors) != 2 || len(p.Maintainers) != 1 || len(p.URLs) != 2 {
		t.Errorf("people and urls = %v %v %v", p.Authors, p.Maintainers, p.URLs)
	}
	if w.RequiresPython != ">=3.9" || len(w.Requires) != 2 || len(w.Classifiers) != 1 || len(w.Keywords) != 2 ||
		w.Scripts["demo"] != "demo_pkg.cli:main" || w.GUIScripts["demo-gui"] == "" || w.EntryPoints["demo.plugins"]["basic"] == "" || w.Summary != "" {
		t.Errorf("wheel = %+v", w)
	}
	if len(c.MetadataFiles) != 1 || c.MetadataFiles[0].Path != "py/pyproject.toml" || len(c.MetadataFiles[0].SHA256) != 64 {
		t.Errorf("MetadataFiles = %v", c.MetadataFiles)
	}
	// A problem found later with a value the pyproject gave points there.
	e := c.Errorf("project.readme", "", "no such file")
	if e.File != "py/pyproject.toml" || e.Key != "project.readme" || e.Pos != (Position{9, 10}) {
		t.Errorf("Errorf = %v, want it placed in py/pyproject.toml:9:10", e)
	}
	if e := c.Errorf("wheel[0].requires[1]", "", "x"); e.File != "py/pyproject.toml" || e.Key != "project.dependencies[1]" || e.Pos != (Position{13, 32}) {
		t.Errorf("Errorf = %v, want it placed at the second dependency", e)
	}
}

// TestFromRules pins what `from` accepts and refuses: the same value in
// both files is accepted; a different one is an error naming both files.
func TestFromRules(t *testing.T) {
	const minimal = "[project]\nname = \"demo-pkg\"\nversion = \"1.0\"\n"
	for _, tc := range []struct {
		name           string
		release, pyprj string
		files          map[string]string
		want           string // "" when accepted
	}{
		{"same values, written differently", strings.Replace(fromRelease, "from = \"py/pyproject.toml\"", "from = \"py/pyproject.toml\"\nname = \"Demo.Pkg\"\nversion = \"V1.0\"", 1),
			minimal, nil, ""},
		{"version conflict", strings.Replace(fromRelease, "from = \"py/pyproject.toml\"", "from = \"py/pyproject.toml\"\nversion = \"1.1\"", 1), minimal, nil,
			"release.toml:3:11: project.version: \"1.1\" here, but py/pyproject.toml:3:11 sets project.version = \"1.0\"\n\thint: write it in one file only (leave project.version out of release.toml to take py/pyproject.toml's), or make both the same"},
		{"wheel field conflict", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nrequires_python = \">=3.8\"\n", 1), minimal + "requires-python = \">=3.9\"\n", nil,
			"release.toml:17:19: wheel[0].requires_python: \">=3.8\" here, but py/pyproject.toml:4:19 sets project.requires-python = \">=3.9\""},
		{"same requirement, spelt differently", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nrequires = [\"NumPy >= 1.21\"]\n", 1), minimal + "dependencies = [\"numpy>=1.21\"]\n", nil, ""},
		{"extras conflict", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nextras = { cli = [\"click>=7\"] }\n", 1), minimal + "optional-dependencies = { CLI = [\"click>=8\"] }\n", nil,
			"release.toml:17:10: wheel[0].extras: { \"cli\" = [\"click>=7\"] } here, but py/pyproject.toml:4:25 sets project.optional-dependencies = { \"CLI\" = [\"click>=8\"] }"},
		{"same extras, spelt differently", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nextras = { cli = [\"Click >= 8\"] }\n", 1), minimal + "optional-dependencies = { CLI = [\"click>=8\"] }\n", nil, ""},
		{"invalid extra, placed in the pyproject", fromRelease, minimal + "optional-dependencies = { \"-cli\" = [\"click\"] }\n", nil,
			"py/pyproject.toml:4:27: project.optional-dependencies.-cli: invalid extra name"},
		{"wheel summary against the description", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"demo-pkg\"\nsummary = \"other\"\n", 1), minimal + "description = \"d\"\n", nil,
			"release.toml:17:11: wheel[0].summary: \"other\" here, but py/pyproject.toml:4:15 sets project.description = \"d\""},
		{"dynamic version, set in release.toml", strings.Replace(fromRelease, "from = \"py/pyproject.toml\"", "from = \"py/pyproject.toml\"\nversion = \"2.0\"", 1),
			"[project]\nname = \"demo-pkg\"\ndynamic = [\"version\"]\n", nil, ""},
		{"dynamic version", fromRelease, "[project]\nname = \"demo-pkg\"\ndynamic = [\"readme\", \"version\"]\n", nil,
			"py/pyproject.toml:3:22: project.dynamic[1]: version is dynamic: mkrelease runs no build backend, so it cannot read it from py/pyproject.toml\n\thint: set project.version in release.toml, or write version statically"},
		{"dynamic dependencies", fromRelease, minimal + "dynamic = [\"dependencies\"]\n", nil,
			"py/pyproject.toml:4:12: project.dynamic[0]: dependencies is dynamic"},
		{"no wheel of the name", strings.Replace(fromRelease, "name = \"demo-pkg\"\n", "name = \"other\"\n", 1), minimal + "dependencies = [\"numpy\"]\n", nil,
			"release.toml:2:8: project.from: py/pyproject.toml sets dependencies for the distribution \"demo-pkg\", but no [[wheel]] without from of its own is named so"},
		{"invalid version, placed in the pyproject", fromRelease, "[project]\nname = \"demo-pkg\"\nversion = \"one\"\n", nil,
			"py/pyproject.toml:3:11: project.version: invalid version"},
		{"invalid specifier, placed in the pyproject", fromRelease, minimal + "requires-python = \"3.9\"\n", nil,
			"py/pyproject.toml:4:19: project.requires-python: invalid specifier"},
		{"bidi control in the description", fromRelease, minimal + "description = \"a\\u202eb\"\n", nil,
			"py/pyproject.toml:4:15: project.description: holds U+202E RIGHT-TO-LEFT OVERRIDE at character 2"},
		{"legacy license table", fromRelease, minimal + "license = { text = \"MIT\" }\n", nil,
			"py/pyproject.toml:4:11: project.license: a license table (file or text, before PEP 639) is no SPDX license expression"},
		{"legacy license table, release.toml's expression", strings.Replace(fromRelease, "from = \"py/pyproject.toml\"", "from = \"py/pyproject.toml\"\nlicense = \"MIT\"", 1),
			minimal + "license = { file = \"LICENSE\" }\n", nil, ""},
		{"license-files without wheel.licenses", strings.Replace(fromRelease, "[[wheel.licenses]]\nsource = \"up\"\nfrom = \"LICENSE\"\n", "", 1), minimal + "license-files = [\"LICENSE\"]\n", nil,
			"py/pyproject.toml:4:1: project.license-files: wheel \"demo-pkg\" declares no [[wheel.licenses]]"},
		{"no such file", strings.Replace(fromRelease, "py/pyproject.toml", "pyproject.toml", 1), minimal, nil,
			"release.toml:2:8: project.from: pyproject.toml: no such file"},
		{"from leaves the project", strings.Replace(fromRelease, "py/pyproject.toml", "../pyproject.toml", 1), minimal, nil,
			`release.toml:2:8: project.from: "../pyproject.toml" leaves the project folder`},
		{"wheel from: name conflict", wheelFrom("1.0"),
			"[project]\nname = \"other\"\n", nil,
			"release.toml:17:8: wheel[0].name: \"demo-pkg\" here, but py/pyproject.toml:2:8 sets project.name = \"other\""},
		{"wheel from: release-wide field [project] lacks", wheelFrom("1.0"),
			minimal + "authors = [{ name = \"Ann\" }]\n", nil,
			"py/pyproject.toml:4:1: project.authors: release.toml gives authors for every wheel of the release; [project] does not set it"},
		{"wheel from: another version", wheelFrom("1.1"),
			minimal, nil, "release.toml:3:11: project.version: \"1.1\" here, but py/pyproject.toml:3:11 sets project.version = \"1.0\""},
		{"wheel from: fields and name taken", strings.Replace(wheelFrom("1.0"), "name = \"demo-pkg\"\n", "", 1),
			minimal + "description = \"d\"\nkeywords = [\"k\"]\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"py/pyproject.toml": tc.pyprj}
			c, err := loadFrom(t, tc.release, files)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if c.Wheels[0].Name != "demo-pkg" {
					t.Errorf("wheel name = %q", c.Wheels[0].Name)
				}
				return
			}
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want an ErrorList", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got\n%v\nwant it to contain\n%s", err, tc.want)
			}
		})
	}
}

func TestWrittenIn(t *testing.T) {
	c, err := loadFrom(t, fromRelease, map[string]string{"py/pyproject.toml": goodPyProject})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"project.readme":       "py/pyproject.toml",
		"wheel[0].requires[0]": "py/pyproject.toml",
		"wheel[0].include[0]":  "release.toml",
		"bundle.changelog":     "release.toml",
		"project.from":         "release.toml",
	} {
		if got := c.WrittenIn(key); got != want {
			t.Errorf("WrittenIn(%s) = %q, want %q", key, got, want)
		}
	}
}
