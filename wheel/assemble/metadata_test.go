package assemble

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
)

// TestMetadataClassifiers checks that each wheel says the operating system
// of its platform tag, and that a declared classifier saying another one is
// refused.
func TestMetadataClassifiers(t *testing.T) {
	c := &config.Config{Project: config.Project{Name: "vexl", Version: "0.3.0", MetadataVersion: "2.4"}}
	for _, tc := range []struct {
		name     string
		declared []string
		tag      string
		want     []string // the Classifier fields
		err      string
	}{
		{"linux", []string{"Programming Language :: Python :: 3"}, "manylinux_2_17_x86_64.manylinux2014_x86_64",
			[]string{"Operating System :: POSIX :: Linux", "Programming Language :: Python :: 3"}, ""},
		{"macOS", nil, "macosx_13_0_arm64", []string{"Operating System :: MacOS"}, ""},
		{"windows, declared already", []string{"Operating System :: Microsoft :: Windows"}, "win_amd64",
			[]string{"Operating System :: Microsoft :: Windows"}, ""},
		{"pure Python", []string{"Operating System :: OS Independent"}, "any", []string{"Operating System :: OS Independent"}, ""},
		{"another OS declared", []string{"Operating System :: POSIX :: Linux"}, "macosx_13_0_arm64", nil,
			`classifier "Operating System :: POSIX :: Linux" says another operating system than the platform tag macosx_13_0_arm64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Metadata(c, config.Wheel{Name: "vexl-plugin", Classifiers: tc.declared}, tc.tag, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Metadata = %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range m.Fields {
				if f[0] == "Classifier" {
					got = append(got, f[1])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("classifiers = %v, want %v", got, tc.want)
			}
		})
	}
}

// The release side of a project whose metadata is in a pyproject.toml:
// %s is what [project] says besides from (nothing, or from itself).
const pyRelease = `[project]
%s

[[source]]
name = "py"
local = "py"

[[target]]
name = "linux-x86_64"

[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.12"]

[[wheel]]
name = "demo-pkg"
%s
[[wheel.include]]
source = "py"
from = "demo_pkg"
to = "demo_pkg"
`

const pyProjectTOML = `[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "Demo_Pkg"
version = "1.0.0rc1"
description = "A demo package"
readme = "README.md"
license = "MIT OR Apache-2.0"
requires-python = ">=3.9"
dependencies = ["numpy>=1.21", "rich; python_version >= '3.10'"]
authors = [{ name = "Ann Example", email = "ann@example.org" }, { name = "Team" }]
maintainers = [{ name = "Ops", email = "ops@example.org" }]
keywords = ["demo", "example"]
classifiers = ["Programming Language :: Python :: 3", "Development Status :: 4 - Beta"]
urls = { Homepage = "https://example.org", "Bug Tracker" = "https://example.org/issues" }
scripts = { demo = "demo_pkg.cli:main" }

[project.optional-dependencies]
CLI = ["click>=8", "colorama; sys_platform == 'win32' or sys_platform == 'cygwin'"]
docs = ["sphinx"]

[tool.setuptools]
packages = ["demo_pkg"]
`

// The same metadata written in release.toml alone.
const (
	equivalentProject = `name = "Demo_Pkg"
version = "1.0.0rc1"
summary = "A demo package"
readme = "py/README.md"
license = "MIT OR Apache-2.0"
authors = [{ name = "Ann Example", email = "ann@example.org" }, { name = "Team" }]
maintainers = [{ name = "Ops", email = "ops@example.org" }]
urls = { Homepage = "https://example.org", "Bug Tracker" = "https://example.org/issues" }`
	equivalentWheel = `requires_python = ">=3.9"
requires = ["numpy>=1.21", "rich; python_version >= '3.10'"]
keywords = ["demo", "example"]
classifiers = ["Programming Language :: Python :: 3", "Development Status :: 4 - Beta"]
scripts = { demo = "demo_pkg.cli:main" }
extras = { docs = ["sphinx"], cli = ["click>=8", "colorama; sys_platform == 'win32' or sys_platform == 'cygwin'"] }`
)

// loadProject writes release.toml (and a pyproject.toml, a readme and a
// changelog) into a fresh project folder and loads it.
func loadProject(t *testing.T, release string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"release.toml":      release,
		"py/pyproject.toml": pyProjectTOML,
		"py/README.md":      "# Demo\n\nA *demo*.\r\n",
		"CHANGELOG.md":      "## 1.0.0rc1\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := config.Load(filepath.Join(dir, "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMetadataFromPyProject checks that a release whose metadata comes from
// a pyproject.toml ([project] from, or [[wheel]] from) writes the same
// METADATA, byte for byte, as one that writes it in release.toml.
func TestMetadataFromPyProject(t *testing.T) {
	want := metadataBytes(t, loadProject(t, fmt.Sprintf(pyRelease, equivalentProject, equivalentWheel)))
	for _, tc := range []struct{ name, project, wheel string }{
		{"[project] from", `from = "py/pyproject.toml"`, ""},
		{"[project] from, values repeated", `from = "py/pyproject.toml"` + "\n" + equivalentProject, equivalentWheel},
		{"[[wheel]] from", equivalentProject, `from = "py/pyproject.toml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := metadataBytes(t, loadProject(t, fmt.Sprintf(pyRelease, tc.project, tc.wheel)))
			if !bytes.Equal(got, want) {
				t.Errorf("METADATA differs:\n%s\nwant (release.toml alone):\n%s", got, want)
			}
		})
	}
	for _, field := range []string{"Name: demo-pkg", "Version: 1.0.0rc1", "Summary: A demo package", "Author: Team",
		"Author-email: Ann Example <ann@example.org>", "Maintainer-email: Ops <ops@example.org>", "License-Expression: MIT OR Apache-2.0",
		"Keywords: demo,example", "Requires-Python: >=3.9", "Requires-Dist: rich; python_version >= \"3.10\"",
		"Project-URL: Bug Tracker, https://example.org/issues",
		"Provides-Extra: cli\nRequires-Dist: click>=8; extra == \"cli\"\nRequires-Dist: colorama; (sys_platform == \"win32\" or sys_platform == \"cygwin\") and extra == \"cli\"\nProvides-Extra: docs\nRequires-Dist: sphinx; extra == \"docs\"", "Description-Content-Type: text/markdown; charset=UTF-8"} {
		if !bytes.Contains(want, []byte(field+"\n")) {
			t.Errorf("METADATA lacks %q:\n%s", field, want)
		}
	}
}

func metadataBytes(t *testing.T, c *config.Config) []byte {
	t.Helper()
	m, err := Metadata(c, c.Wheels[0], "any", []string{"LICENSE"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMetadataInlineReadme checks a readme given as text in a
// pyproject.toml, with its content type.
func TestMetadataInlineReadme(t *testing.T) {
	c := &config.Config{Project: config.Project{Name: "x", Version: "1", MetadataVersion: "2.4",
		ReadmeText: "Hello\r\n", ReadmeType: "text/x-rst"}}
	b := metadataBytes(t, &config.Config{Project: c.Project, Wheels: []config.Wheel{{Name: "x"}}})
	if !bytes.HasSuffix(b, []byte("Description-Content-Type: text/x-rst\n\nHello\n")) {
		t.Errorf("METADATA:\n%s", b)
	}
}

// The readme that becomes a wheel's description is read beneath the
// project: one that is a symbolic link out of it (or through a folder
// linked out) is refused, naming the link, and nothing of the file it
// points to reaches METADATA; one linked inside the project is read.
func TestMetadataReadmeLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	for _, tc := range []struct {
		name, readme, link, target string
		want                       string // a refusal; "" for the readme read
	}{
		{"regular file", "README.md", "", "", ""},
		{"linked outside", "NOTES.md", "NOTES.md", "../outside/secret.md", "NOTES.md is a symbolic link to ../outside/secret.md, outside the project"},
		{"through a folder linked outside", "ext/secret.md", "ext", "../outside", "ext/secret.md: ext is a symbolic link to ../outside, outside the project"},
		{"linked inside", "NOTES.md", "NOTES.md", "README.md", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "project")
			os.MkdirAll(filepath.Join(top, "outside"), 0o755)
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(top, "outside", "secret.md"), []byte("root:x:0:0\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n"), 0o644)
			if tc.link != "" {
				if err := os.Symlink(tc.target, filepath.Join(dir, tc.link)); err != nil {
					t.Fatal(err)
				}
			}
			c := &config.Config{Dir: dir, Project: config.Project{Name: "x", Version: "1", MetadataVersion: "2.4", Readme: tc.readme}}
			m, err := Metadata(c, config.Wheel{Name: "x"}, "any", nil)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Metadata = %v, want a refusal saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Description != "# Demo\n" {
				t.Errorf("description %q", m.Description)
			}
		})
	}
}
