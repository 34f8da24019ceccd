package scaffold

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/mkrelease/mkrelease/build/config"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "My_Project")
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

const commit = "0123456789abcdef0123456789abcdef01234567"

var linux = Host{GOOS: "linux", GOARCH: "amd64", Pythons: []string{"3.11", "3.12"}, Commit: commit}

func TestDetectAndRender(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		host  Host
		want  Project
		// in are strings release.toml must hold; out must not.
		in, out []string
		// checkErr is what config.Parse must report ("" : valid).
		checkErr string
	}{{
		name: "c library with a ctypes package",
		files: map[string]string{
			"Makefile":          "CFLAGS ?= -O2\n# libold.so is gone\nlibgreet.so: greet.c\n\t$(CC) -shared -o $@ $<\n",
			"greet.c":           "int add(int a, int b) { return a + b; }\n",
			"greet/__init__.py": "",
			"tests/__init__.py": "",
			"LICENSE":           "MIT\n",
		},
		host: Host{GOOS: "linux", GOARCH: "amd64", Pythons: []string{"3.11", "3.12"}, Commit: commit,
			AuthorName: "Dev Eloper", AuthorEmail: "dev@example.invalid", CCSupplier: "Organization: Debian"},
		want: Project{Name: "my-project", Version: "0.1.0", LicenseFiles: []string{"LICENSE"}, License: "MIT", LicenseFrom: "the text of LICENSE",
			Make: &Native{File: "Makefile", Library: "libgreet.so", CFlags: "-O2"}, Packages: []string{"greet"}},
		in: []string{`name = "my-project"`, "\nlicense = \"MIT\"\n", `name = "my-project-native"`, `git = "."`, `commit = "` + commit + `"`, `"make libgreet.so && cp libgreet.so ${MKRELEASE_OUT}/"`,
			`outputs = ["libgreet.so"]`, "so env gives that default here.\n[[build.step]]", `env = { CFLAGS = "-O2" }`, `pair = "my-project-native"`, `to = "greet/libgreet.so"`, `env = { CC = "cc" }`,
			`pythons = ["3.11", "3.12"]`, `from = "LICENSE"`, `name = "make"`,
			`authors = [{ name = "Dev Eloper", email = "dev@example.invalid" }]`, `supplier = "Person: Dev Eloper (dev@example.invalid)"`,
			"command = [\"${CC}\", \"--version\"]\nper_target = true\n# The supplier `cc --version` names; another machine's compiler may differ.\nsupplier = \"Organization: Debian\"",
			"command = [\"make\", \"--version\"]\n# Assumed from the same distribution as cc.\nsupplier = \"Organization: Debian\""},
		out: []string{EditMe, "GOOS =", "install_platform"},
	}, {
		name:     "makefile without a library name, not in git",
		files:    map[string]string{"Makefile": "all:\n\tcc -shared -o out.so x.c\n", "x.c": ""},
		host:     Host{GOOS: "linux", GOARCH: "arm64"},
		want:     Project{Name: "my-project", Version: "0.1.0", Make: &Native{File: "Makefile"}},
		in:       []string{`outputs = ["libmy_project.so"]`, EditMe + ": Makefile names no lib*.so", `commit = "EDIT ME"`, `name = "linux-aarch64"`, `pythons = ["3.12"]`},
		checkErr: "source[0].commit",
	}, {
		name:     "inside a larger repository",
		files:    map[string]string{"Makefile": "libx.so: x.c\n"},
		host:     Host{GOOS: "linux", GOARCH: "amd64", EnclosingRepo: true},
		want:     Project{Name: "my-project", Version: "0.1.0", Make: &Native{File: "Makefile", Library: "libx.so"}},
		in:       []string{EditMe + ": this folder is part of a larger git repository", `commit = "EDIT ME"`},
		checkErr: "source[0].commit",
	}, {
		name: "go module with a program and a c-shared library",
		files: map[string]string{
			"go.mod":                 "module example.com/tools/vecz/v2\n\ngo 1.22\n\nrequire golang.org/x/text v0.1.0\n",
			"vendor/modules.txt":     "# golang.org/x/text v0.1.0\n",
			"cmd/veczc/main.go":      "package main\n\nfunc main() {}\n",
			"plugin/plugin.go":       "package main\n\nimport \"C\"\n\n//export Add\nfunc Add(a, b C.int) C.int { return a + b }\n\nfunc main() {}\n",
			"internal/x/x.go":        "package x\n",
			"cmd/veczc/main_test.go": "package main\n",
		},
		host: Host{GOOS: "linux", GOARCH: "amd64", Pythons: []string{"3.11"}, Commit: commit, Glibc: "2.36"},
		want: Project{Name: "vecz", Version: "0.1.0", Go: &GoModule{Path: "example.com/tools/vecz/v2", Mains: []string{"cmd/veczc"}, CShared: []string{"plugin"}}},
		in: []string{`name = "vecz"`, `env = { GOOS = "linux", GOARCH = "amd64", CC = "cc" }`, `"-buildmode=c-shared"`, `outputs = ["libplugin.so", "libplugin.h"]`,
			`"-o", "${MKRELEASE_OUT}/veczc", "./cmd/veczc"`, `data = "scripts"`, `to = "vecz/libplugin.so"`, `command = ["go", "version"]`, `env = { CGO_ENABLED = "0" }`},
		out: []string{"pair ="},
	}, {
		name:  "go module with dependencies and no vendor folder",
		files: map[string]string{"go.mod": "module tool\n\nrequire golang.org/x/text v0.1.0\n", "main.go": "package main\n\nfunc main() {}\n"},
		host:  linux,
		want:  Project{Name: "tool", Version: "0.1.0", Go: &GoModule{Path: "tool", Mains: []string{"."}, NeedsVendor: true}},
		in:    []string{EditMe + ": go.mod requires modules", `"-o", "${MKRELEASE_OUT}/tool", "."]`, `data = "scripts"`},
	}, {
		name: "cmake with a pyproject under src",
		files: map[string]string{
			"CMakeLists.txt":             "project(fast C)\nadd_library(fast SHARED fast.c)\n",
			"pyproject.toml":             "[project]\nname = \"Fast_Thing\"\nversion = \"2.1\"\ndescription = \"A fast thing\"\nrequires-python = \">=3.12\"\n",
			"src/fast_thing/__init__.py": "",
		},
		host: linux,
		want: Project{Name: "fast-thing", Version: "2.1", RequiresPython: ">=3.12",
			Pyproject: &Pyproject{Set: set("name", "version", "description", "requires-python"), Dynamic: set()},
			CMake:     &Native{File: "CMakeLists.txt", Library: "libfast.so"}, Packages: []string{"src/fast_thing"}},
		in: []string{"[project]\nfrom = \"pyproject.toml\"\n", `cp ${TMPDIR}/build/libfast.so`, `from = "src/fast_thing"`, `to = "fast_thing"`, `name = "cmake"`,
			"[[wheel]]\nname = \"fast-thing\"\npair = \"fast-thing-native\"\n"},
		out: []string{"version =", "summary =", "requires_python", "\nlicense ="},
	}, {
		name: "pyproject with dynamic fields",
		files: map[string]string{
			"pyproject.toml":  "[project]\nname = \"dyn\"\ndynamic = [\"version\", \"dependencies\", \"readme\"]\n",
			"dyn/__init__.py": "",
			"README.rst":      "dyn\n",
		},
		host: linux,
		want: Project{Name: "dyn", Version: "0.1.0", Readme: "README.rst", Packages: []string{"dyn"},
			Pyproject: &Pyproject{Set: set("name", "dynamic"), Dynamic: set("version", "dependencies", "readme")}},
		in: []string{EditMe + ": pyproject.toml lists version as dynamic", "version = \"0.1.0\"", "# pyproject.toml lists readme as dynamic: README.rst",
			"readme = \"README.rst\"", EditMe + ": pyproject.toml lists dependencies as dynamic, which mkrelease\n# cannot compute: write requires here."},
		checkErr: "dependencies is dynamic",
	}, {
		name: "pyproject with a license table and an Apache LICENSE",
		files: map[string]string{
			"pyproject.toml":     "[project]\nname = \"tabled\"\nversion = \"3.0\"\ndescription = \"x\"\nlicense = { file = \"LICENSE\" }\n",
			"LICENSE":            "                                 Apache License\n                           Version 2.0, January 2004\n",
			"tabled/__init__.py": "",
		},
		host: linux,
		want: Project{Name: "tabled", Version: "3.0", Packages: []string{"tabled"}, LicenseFiles: []string{"LICENSE"}, License: "Apache-2.0", LicenseFrom: "the text of LICENSE",
			Pyproject: &Pyproject{Set: set("name", "version", "description", "license"), Dynamic: set(), LicenseTable: true}},
		in:  []string{"# pyproject.toml's license is a table (the form before PEP 639), not an SPDX expression: this is the license read from the text of LICENSE, an SPDX expression (the wheels' License-Expression).\nlicense = \"Apache-2.0\"\n"},
		out: []string{EditMe, "version ="},
	}, {
		name: "a GPL text and SPDX headers that settle it",
		files: map[string]string{
			"COPYING":         "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n",
			"gpl/__init__.py": "# SPDX-License-Identifier: GPL-3.0-or-later\n",
			"gpl/_impl.py":    "#!/usr/bin/env python3\n# SPDX-License-Identifier: GPL-3.0-or-later\n",
		},
		host: linux,
		want: Project{Name: "my-project", Version: "0.1.0", Packages: []string{"gpl"}, LicenseFiles: []string{"COPYING"},
			License: "GPL-3.0-or-later", LicenseFrom: "the SPDX-License-Identifier lines of gpl/__init__.py and 1 more file"},
		in: []string{"license = \"GPL-3.0-or-later\"", "from = \"COPYING\""},
	}, {
		name: "a GPL text alone",
		files: map[string]string{
			"COPYING":         "GNU GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007\n",
			"gpl/__init__.py": "",
		},
		host: linux,
		want: Project{Name: "my-project", Version: "0.1.0", Packages: []string{"gpl"}, LicenseFiles: []string{"COPYING"},
			LicenseHint: "COPYING is the GNU GPL version 3: GPL-3.0-only or GPL-3.0-or-later"},
		in:  []string{"init wrote none, as COPYING is the GNU GPL version 3: GPL-3.0-only or GPL-3.0-or-later.", "\n# license = \"...\"\n"},
		out: []string{"\nlicense ="},
	}, {
		name: "sources that disagree on the license",
		files: map[string]string{
			"a.c":      "/* SPDX-License-Identifier: MIT */\n",
			"b.c":      "// SPDX-License-Identifier: BSD-3-Clause\n",
			"Makefile": "liba.so: a.c b.c\n",
		},
		host: linux,
		want: Project{Name: "my-project", Version: "0.1.0", Make: &Native{File: "Makefile", Library: "liba.so"},
			LicenseHint: "the SPDX-License-Identifier lines of the sources name several licenses (BSD-3-Clause, MIT)"},
		in:  []string{"init wrote none, as the SPDX-License-Identifier lines of the sources name several licenses (BSD-3-Clause, MIT).", "\n# license = \"...\"\n"},
		out: []string{"\nlicense ="},
	}, {
		name: "a Rust crate with two Python packages (issue 41)",
		files: map[string]string{
			"Cargo.toml":              "[package]\nname = \"rustsum\"\n",
			"src/lib.rs":              "// SPDX-License-Identifier: MIT OR Apache-2.0\n",
			"rustsum/__init__.py":     "",
			"rustsum_cli/__init__.py": "",
		},
		host: linux,
		want: Project{Name: "my-project", Version: "0.1.0", Cargo: true, Packages: []string{"rustsum", "rustsum_cli"},
			License: "MIT OR Apache-2.0", LicenseFrom: "the SPDX-License-Identifier line of src/lib.rs"},
		in: []string{EditMe + ": Cargo.toml is here, and init writes no build step for Rust.", "[[wheel]]\nname = \"rustsum\"\n\n", "[[wheel]]\nname = \"rustsum-cli\"\n\n",
			"license = \"MIT OR Apache-2.0\""},
		out: []string{"pair =", "holds the Python packages"},
	}, {
		name: "two packages, one importing the other, and a library",
		files: map[string]string{
			"Makefile":            "libduo.so: duo.c\n",
			"duo/__init__.py":     "",
			"duo_cli/__init__.py": "import os, duo.core as core\n",
		},
		host: linux,
		want: Project{Name: "my-project", Version: "0.1.0", Make: &Native{File: "Makefile", Library: "libduo.so"},
			Packages: []string{"duo", "duo_cli"}, Imports: map[string][]string{"duo_cli": {"duo"}}},
		in: []string{"[[wheel]]\nname = \"duo\"\npair = \"my-project-native\"\n", "[[wheel]]\nname = \"duo-cli\"\npair = \"duo\"\n",
			"to = \"duo/libduo.so\"", "Its package imports duo, so it requires \"duo\" at exactly this version (pair)."},
	}, {
		name:  "pure python package",
		files: map[string]string{"pkg/__init__.py": "", "README.md": "# hi\n", "CHANGELOG.md": "## 0.1.0\n"},
		host:  linux,
		want:  Project{Name: "my-project", Version: "0.1.0", Readme: "README.md", Changelog: "CHANGELOG.md", Packages: []string{"pkg"}},
		in:    []string{`platform_tag = "any"`, `install_platform = "manylinux_2_17_x86_64"`, `readme = "README.md"`},
		out:   []string{"[[build.step]]", "[[toolchain]]", "pair ="},
	}, {
		name:  "nothing to build",
		files: map[string]string{"notes.txt": "hello"},
		host:  linux,
		want:  Project{Name: "my-project", Version: "0.1.0"},
		in:    []string{EditMe + ": nothing to build was found"},
		out:   []string{"[[wheel.include]]", "[bundle]"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			p, err := Detect(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*p, tc.want) {
				t.Errorf("Detect:\n got %+v\nwant %+v", *p, tc.want)
				if p.Go != nil && tc.want.Go != nil {
					t.Errorf("Go: got %+v, want %+v", *p.Go, *tc.want.Go)
				}
			}
			toml := ReleaseTOML(p, tc.host)
			flat := flatComments(toml)
			for _, s := range tc.in {
				if !strings.Contains(toml, s) && !strings.Contains(flat, s) {
					t.Errorf("release.toml lacks %q:\n%s", s, toml)
				}
			}
			for _, s := range tc.out {
				if strings.Contains(toml, s) {
					t.Errorf("release.toml holds %q:\n%s", s, toml)
				}
			}
			_, err = config.Parse("release.toml", dir, []byte(toml))
			switch {
			case tc.checkErr == "" && err != nil:
				t.Errorf("release.toml does not load: %v\n%s", err, toml)
			case tc.checkErr != "" && (err == nil || !strings.Contains(err.Error(), tc.checkErr)):
				t.Errorf("load error %v, want one naming %s", err, tc.checkErr)
			}
			if tc.checkErr != "" && strings.Count(toml, EditMe) < 1 {
				t.Errorf("an invalid release.toml must say what to edit")
			}
		})
	}
}

// flatComments joins each paragraph of comment lines of a rendered
// release.toml into one line, so that a test finds a sentence wherever
// the comment wraps.
func flatComments(toml string) string {
	var b strings.Builder
	inComment := false
	for _, line := range strings.Split(toml, "\n") {
		text, ok := strings.CutPrefix(line, "# ")
		switch {
		case ok && inComment:
			b.WriteString(" " + text)
		case ok:
			b.WriteString("# " + text)
		default:
			if inComment {
				b.WriteString("\n")
			}
			b.WriteString(line + "\n")
		}
		inComment = ok
	}
	return b.String()
}

// set is a set of strings, as Pyproject holds its keys.
func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

func TestDetectRefusesBrokenFiles(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"pyproject": {"pyproject.toml": "[project\nname="},
		"go.mod":    {"go.mod": "go 1.22\n"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Detect(writeTree(t, files))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("err = %v, want one naming %s", err, name)
			}
		})
	}
}

func TestMergeIgnore(t *testing.T) {
	want := []string{"/.mkrelease/", "/dist/"}
	tests := []struct{ old, want string }{
		{"", "/.mkrelease/\n/dist/\n"},
		{"*.o", "*.o\n/.mkrelease/\n/dist/\n"},
		{"dist/\n.mkrelease\n", "dist/\n.mkrelease\n"},
		{"# /dist/\n!/dist/\n/dist\n", "# /dist/\n!/dist/\n/dist\n/.mkrelease/\n"},
	}
	for _, tc := range tests {
		got := string(MergeIgnore([]byte(tc.old), want))
		if got != tc.want {
			t.Errorf("MergeIgnore(%q) = %q, want %q", tc.old, got, tc.want)
		}
		if again := string(MergeIgnore([]byte(got), want)); again != got {
			t.Errorf("a second merge changed %q to %q", got, again)
		}
	}
}

func TestWriteRefusesExistingFilesBeforeWriting(t *testing.T) {
	dir := writeTree(t, map[string]string{"Makefile": "libx.so:\n", "verifier/cases.py": "mine\n", ".gitignore": "/dist/\n"})
	p, err := Detect(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(p, linux)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Write(dir, files)
	var ee *ExistsError
	if !errors.As(err, &ee) || !reflect.DeepEqual(ee.Paths, []string{"verifier/cases.py"}) || ee.ExitCode() != 2 {
		t.Fatalf("Write: %v, want an ExistsError naming verifier/cases.py", err)
	}
	if !strings.Contains(err.Error(), "move it away") {
		t.Errorf("the refusal gives no remedy: %v", err)
	}
	for _, f := range []string{"release.toml", "CHANGELOG.md", "verifier/worker.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written although init refused", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(b) != "/dist/\n" {
		t.Errorf(".gitignore changed although init refused: %q", b)
	}

	os.Remove(filepath.Join(dir, "verifier/cases.py"))
	written, err := Write(dir, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != len(files) {
		t.Errorf("wrote %v, want all of %d files", written, len(files))
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if strings.Count(string(b), "/dist/") != 1 || !strings.Contains(string(b), "/.mkrelease/") {
		t.Errorf(".gitignore = %q", b)
	}
	cl, _ := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if !strings.Contains(string(cl), "## 0.1.0\n") {
		t.Errorf("CHANGELOG.md has no section for 0.1.0: %q", cl)
	}
}

func TestUntracked(t *testing.T) {
	p := &Project{Make: &Native{File: "Makefile"}, Packages: []string{"pkg"}}
	h := Host{Tracked: map[string]bool{"Makefile": true}}
	if got := Untracked(p, h); !reflect.DeepEqual(got, []string{"pkg/__init__.py"}) {
		t.Errorf("Untracked = %v", got)
	}
	if got := Untracked(p, Host{}); got != nil {
		t.Errorf("outside git: Untracked = %v, want none", got)
	}
}

// FuzzMergeIgnore: merging keeps the old file as its prefix, adds every
// wanted line at most once, and a second merge changes nothing.
func FuzzMergeIgnore(f *testing.F) {
	for _, s := range []string{"", "*.o", "dist/\n.mkrelease\n", "# x\n!/dist/\n/dist", "/published/\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, old string) {
		got := MergeIgnore([]byte(old), Ignored)
		if !strings.HasPrefix(string(got), old) {
			t.Fatalf("old content not kept: %q -> %q", old, got)
		}
		for _, w := range Ignored {
			if n := strings.Count("\n"+string(got[len(old):]), "\n"+w+"\n"); n > 1 {
				t.Fatalf("%s added %d times", w, n)
			}
		}
		if again := MergeIgnore(got, Ignored); string(again) != string(got) {
			t.Fatalf("not idempotent: %q -> %q", got, again)
		}
	})
}

func TestMakeCFlags(t *testing.T) {
	tests := []struct{ makefile, want string }{
		{"CFLAGS ?= -O2\nlib.so:\n", "-O2"},
		{"CC = gcc\n  CFLAGS?=-O2 -g   # tuned\r\n", "-O2 -g"},
		{"CFLAGS ?= -O3\nCFLAGS ?= -O1\n", "-O3"},
		{"# CFLAGS ?= -O2\n", ""},
		{"CFLAGS = -O2\n", ""},    // a plain assignment: make ignores the environment's
		{"CFLAGS += -fPIC\n", ""}, // added to the exported CFLAGS by make itself
		{"CFLAGS ?= $(OPT) -g\n", ""},
		{"CFLAGS ?= -O2 \\\n\t-g\n", ""},
		{"CFLAGS ?=\n", ""},
		{"all:\n\tCFLAGS ?= -O2 true\n", ""},
		{"MYCFLAGS ?= -O2\n", ""},
	}
	for _, tt := range tests {
		if got := makeCFlags([]byte(tt.makefile)); got != tt.want {
			t.Errorf("makeCFlags(%q) = %q, want %q", tt.makefile, got, tt.want)
		}
	}
}

// FuzzNativeLibrary: whatever a Makefile or CMakeLists.txt holds, the
// library read from it is empty or a plain lib*.so file name.
func FuzzNativeLibrary(f *testing.F) {
	for _, s := range []string{"libx.so: x.c\n", "# libold.so\nall:\n", "add_library(fast SHARED a.c)", "ADD_LIBRARY ( a-b SHARED", "lib/.so libä.so"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		for _, lib := range []string{makeLibrary([]byte(data)), cmakeLibrary([]byte(data))} {
			if lib != "" && (!strings.HasPrefix(lib, "lib") || !strings.HasSuffix(lib, ".so") || strings.ContainsAny(lib, "/ \t\n\"\\")) {
				t.Fatalf("library %q from %q", lib, data)
			}
		}
		if fl := makeCFlags([]byte(data)); fl != strings.TrimSpace(fl) || strings.ContainsAny(fl, "$\\\r\n") || !utf8.ValidString(fl) {
			t.Fatalf("CFLAGS %q from %q", fl, data)
		}
	})
}

func TestInspectGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := writeTree(t, map[string]string{"Makefile": "libx.so:\n", "sub/Makefile": "liby.so:\n"})
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=Dev Eloper", "-c", "user.email=dev@example.invalid"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	noPython := func(string) string { return "" } // no PATH, no managers: no interpreter probed
	ctx := context.Background()
	p := &Project{}

	if h := Inspect(ctx, dir, "linux", "amd64", p, noPython); h.Commit != "" || h.EnclosingRepo || h.Tracked != nil {
		t.Errorf("outside git: %+v", h)
	}
	run("init", "-q")
	if h := Inspect(ctx, dir, "linux", "amd64", p, noPython); h.Commit != "" || h.EnclosingRepo {
		t.Errorf("no commit yet: %+v", h)
	}
	run("add", "Makefile")
	run("commit", "-q", "-m", "v1")
	h := Inspect(ctx, dir, "linux", "amd64", p, noPython)
	if len(h.Commit) != 40 || h.EnclosingRepo || !reflect.DeepEqual(h.Tracked, map[string]bool{"Makefile": true}) {
		t.Errorf("at the top of a work tree: %+v", h)
	}
	if h := Inspect(ctx, filepath.Join(dir, "sub"), "linux", "amd64", p, noPython); h.Commit != "" || !h.EnclosingRepo {
		t.Errorf("in a subfolder of a work tree: %+v", h)
	}
}

func TestCCSupplier(t *testing.T) {
	for out, want := range map[string]string{
		"cc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022": "Organization: Debian",
		"gcc (Ubuntu 13.2.0-4ubuntu3) 13.2.0\n":                    "Organization: Ubuntu",
		"Apple clang version 15.0.0 (clang-1500.1.0.2.5)\n":        "Organization: Apple Inc.",
		"gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)\n":           "",
		"clang version 17.0.6\n":                                   "",
		"":                                                         "",
		"x (Debian\n":                                              "",
	} {
		if got := CCSupplier(out); got != want {
			t.Errorf("CCSupplier(%q) = %q, want %q", out, got, want)
		}
	}
}

// init never writes through a symbolic link: not the project folder, not a
// folder on the way to a file (verifier/), not a file it merges or would
// create (.gitignore, CHANGELOG.md). It refuses before writing anything,
// naming the link, and nothing appears where the link points.
func TestWriteRefusesLinks(t *testing.T) {
	for _, tc := range []struct {
		name string
		link string // the link, relative to the project folder ("." is the folder)
		dir  bool   // whether it points at a folder
	}{
		{"verifier folder", "verifier", true},
		{".gitignore", ".gitignore", false},
		// A link to an existing changelog is the project's changelog,
		// which init keeps and does not write; a dangling one it would
		// write through.
		{"a dangling CHANGELOG.md", "CHANGELOG.md", false},
		{"a file in verifier", "verifier/cases.py", false},
		{"the project folder", ".", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := writeTree(t, map[string]string{"Makefile": "libx.so:\n"})
			outside := t.TempDir()
			target := filepath.Join(outside, "target")
			if tc.dir {
				if err := os.Mkdir(target, 0o755); err != nil {
					t.Fatal(err)
				}
			} else if !strings.Contains(tc.name, "dangling") {
				if err := os.WriteFile(target, []byte("theirs\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir, want := proj, tc.link
			if tc.link == "." {
				dir = filepath.Join(t.TempDir(), "link")
				want = "the project folder " + dir
			} else if err := os.MkdirAll(filepath.Dir(filepath.Join(proj, tc.link)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(proj, tc.link)); err != nil && tc.link != "." {
				t.Fatal(err)
			}
			if tc.link == "." {
				if err := os.Symlink(proj, dir); err != nil {
					t.Fatal(err)
				}
			}
			p, err := Detect(proj)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Files(p, linux)
			if err != nil {
				t.Fatal(err)
			}
			written, err := Write(dir, files)
			var le *LinkError
			if !errors.As(err, &le) || le.ExitCode() != 2 || !strings.HasPrefix(err.Error(), want+" is a symbolic link") {
				t.Fatalf("Write = %v, %v; want a LinkError naming %s", written, err, want)
			}
			if !strings.Contains(err.Error(), "hint: replace") {
				t.Errorf("the refusal gives no remedy: %v", err)
			}
			if len(written) != 0 {
				t.Errorf("wrote %v before refusing", written)
			}
			for _, f := range []string{"release.toml", "verifier"} {
				if _, err := os.Lstat(filepath.Join(proj, f)); err == nil && f != tc.link && !strings.HasPrefix(tc.link, f+"/") {
					t.Errorf("%s written although init refused", f)
				}
			}
			var outsideNow []string
			filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
				if err == nil && p != outside && p != target {
					outsideNow = append(outsideNow, p)
				}
				return nil
			})
			if len(outsideNow) > 0 {
				t.Errorf("written outside the project: %v", outsideNow)
			}
			if b, err := os.ReadFile(target); err == nil && string(b) != "theirs\n" {
				t.Errorf("the link's target changed: %q", b)
			}
		})
	}
}

// A version that is not PEP 440 as written (a newline, surrounding space,
// or no version at all) is refused by Detect, naming pyproject.toml,
// before anything is written; Files refuses it too.
func TestDetectRefusesBadVersion(t *testing.T) {
	for _, v := range []string{
		"1.0\n[evil]\nx = 1",
		"1.0\n",
		" 1.0",
		"1.0\n\n## 9.9\n- not a release",
		"1.0-final",
	} {
		t.Run(strings.ReplaceAll(v, "\n", `\n`), func(t *testing.T) {
			toml := "[project]\nname = \"demo\"\nversion = " + tomlString(v) + "\n"
			dir := writeTree(t, map[string]string{"pyproject.toml": toml})
			_, err := Detect(dir)
			if err == nil || !strings.Contains(err.Error(), "pyproject.toml: [project] version: invalid version") {
				t.Fatalf("Detect = %v, want a refusal naming pyproject.toml's version", err)
			}
			if _, err := Files(&Project{Name: "demo", Version: v}, linux); err == nil {
				t.Errorf("Files accepted version %q", v)
			}
		})
	}
}

// What init writes into release.toml stays data: values holding quotes,
// backslashes or newlines (a license expression, git's user.name, the
// folder of a Go program a comment quotes, a file a license hint names)
// read back as they were, and add no key.
func TestReleaseTOMLKeepsValuesData(t *testing.T) {
	p := &Project{Name: "demo", Version: "1.0",
		License:     `MIT" \ x`,
		LicenseFrom: "the SPDX-License-Identifier line of a\n[evil]\nb.c",
		Go:          &GoModule{Path: "example.com/demo", Mains: []string{"cmd/x\n[injected]\nkey = 1"}},
	}
	h := linux
	h.AuthorName = "Dev \"Q\"\nEloper"
	h.AuthorEmail = "dev@example.invalid\r\nbad = true"
	h.Commit = ""
	out := ReleaseTOML(p, h)
	var doc map[string]any
	if err := toml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("release.toml does not parse: %v\n%s", err, out)
	}
	for _, k := range []string{"injected", "evil"} {
		if _, ok := doc[k]; ok {
			t.Errorf("a value added the table %s:\n%s", k, out)
		}
	}
	project := doc["project"].(map[string]any)
	if project["license"] != p.License {
		t.Errorf("license = %q, want %q", project["license"], p.License)
	}
	authors := project["authors"].([]any)[0].(map[string]any)
	if authors["name"] != h.AuthorName || authors["email"] != h.AuthorEmail {
		t.Errorf("authors = %q, want %q and %q", authors, h.AuthorName, h.AuthorEmail)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "key = ") || strings.HasPrefix(line, "bad") || strings.HasPrefix(line, "b.c") {
			t.Errorf("a value became a line of its own: %q", line)
		}
	}
	for _, l := range Summary(p, h) {
		if strings.ContainsAny(l, "\r\n") {
			t.Errorf("a summary line holds a line break: %q", l)
		}
	}
}
