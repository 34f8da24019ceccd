// Package scaffold provides what `mkrelease init` writes into a project: it
// detects how the project builds (a Go module with a main or c-shared
// package, a Makefile, a CMake project, Python packages, a pyproject.toml)
// and renders a commented release.toml, a CHANGELOG.md, a verifier skeleton
// with one cases lane and one crossover lane, and the .gitignore lines that
// keep mkrelease's own folders out of git. It never writes over a file.
package scaffold

import (
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	toml "github.com/pelletier/go-toml/v2"
	"golang.org/x/mod/modfile"
)

// Project is what [Detect] found in a project folder. Paths are
// slash-separated and relative to the project folder.
type Project struct {
	// Name is the release name (PEP 503 normalised): from pyproject.toml,
	// else the Go module path's last element, else the folder's name.
	Name string
	// Version is pyproject.toml's version, else "0.1.0".
	Version string
	// Summary is pyproject.toml's description ("" when none).
	Summary string
	// RequiresPython is pyproject.toml's requires-python ("" when none).
	RequiresPython string
	// Pyproject is set when pyproject.toml has a [project] table.
	Pyproject bool
	// Readme, License and Changelog are the files found at the top of
	// the project ("" when none).
	Readme, License, Changelog string
	// Go is the Go module at the top of the project, nil when none.
	Go *GoModule
	// Make is the Makefile's native library, nil without a Makefile.
	Make *Native
	// CMake is the CMake project's native library, nil without a
	// CMakeLists.txt.
	CMake *Native
	// Packages are the Python packages (folders with __init__.py) at the
	// top of the project or under src/, in order.
	Packages []string
}

// GoModule is a Go module and its main packages.
type GoModule struct {
	// Path is the module path of go.mod.
	Path string
	// Mains are the folders of the main packages built as programs
	// ("cmd/tool", or "." for the module's root).
	Mains []string
	// CShared are the folders of the main packages that import "C" and
	// //export functions: built with -buildmode=c-shared.
	CShared []string
	// NeedsVendor is set when go.mod requires modules and there is no
	// vendor folder: build steps have no network to download them.
	NeedsVendor bool
}

// Native is a C or C++ project's build file and the shared library it
// builds.
type Native struct {
	// File is the build file (Makefile, CMakeLists.txt).
	File string
	// Library is the shared library it builds ("libfoo.so"), "" when it
	// names none that could be read.
	Library string
	// CFlags is a Makefile's default C flags (the VALUE of a
	// `CFLAGS ?= VALUE` line), "" when it has none or one that refers to
	// other variables. A build step exports CFLAGS (the path-mapping
	// flags), which takes the place of that default, so init gives it to
	// the step.
	CFlags string
}

// Natives reports whether the project builds anything native.
func (p *Project) Natives() bool {
	return p.Make != nil || p.CMake != nil || (p.Go != nil && len(p.Go.Mains)+len(p.Go.CShared) > 0)
}

// skipped are folders never searched: mkrelease's own, version control,
// build output, tests and the verifier.
var skipped = map[string]bool{
	".git": true, ".mkrelease": true, "dist": true, "build": true, "published": true, "vendor": true,
	"testdata": true, "node_modules": true, "verifier": true, "tests": true, "test": true,
	"docs": true, "examples": true, "__pycache__": true,
}

// Detect inspects the project folder dir. It reads files only.
func Detect(dir string) (*Project, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("project folder: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("project folder %s is not a folder", dir)
	}
	p := &Project{Version: "0.1.0"}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("project folder: %w", err)
	}
	p.Name = normalizeName(filepath.Base(abs))
	if err := p.pyproject(dir); err != nil {
		return nil, err
	}
	if err := p.goModule(dir); err != nil {
		return nil, err
	}
	if b, err := os.ReadFile(filepath.Join(dir, "Makefile")); err == nil {
		p.Make = &Native{File: "Makefile", Library: makeLibrary(b), CFlags: makeCFlags(b)}
	} else if b, err := os.ReadFile(filepath.Join(dir, "GNUmakefile")); err == nil {
		p.Make = &Native{File: "GNUmakefile", Library: makeLibrary(b), CFlags: makeCFlags(b)}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "CMakeLists.txt")); err == nil {
		p.CMake = &Native{File: "CMakeLists.txt", Library: cmakeLibrary(b)}
	}
	p.Packages = pythonPackages(dir)
	p.Readme = firstFile(dir, "README.md", "README.rst", "README.txt", "README")
	p.License = firstFile(dir, "LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING")
	p.Changelog = firstFile(dir, "CHANGELOG.md", "CHANGES.md")
	return p, nil
}

func firstFile(dir string, names ...string) string {
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			return n
		}
	}
	return ""
}

// normalizeName turns a folder or module name into a valid PEP 503 name:
// lower case, runs of other characters as one "-"; "project" when nothing
// is left.
func normalizeName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "project"
	}
	return b.String()
}

// CheckVersion returns why v cannot be the release's version: init writes
// it into release.toml and as CHANGELOG.md's heading, so it must be a PEP
// 440 version exactly as written, without the surrounding white space PEP
// 440 lets readers strip (a newline in it would end the heading and start
// lines of the user's choosing).
func CheckVersion(v string) error {
	if _, err := pep440.Parse(v); err != nil {
		return err
	}
	if strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return fmt.Errorf("invalid version %q: it holds white space or a control character (PEP 440 versions are written without them, e.g. 1.2.0)", v)
	}
	return nil
}

type pyprojectFile struct {
	Project *struct {
		Name           string `toml:"name"`
		Version        string `toml:"version"`
		Description    string `toml:"description"`
		RequiresPython string `toml:"requires-python"`
	} `toml:"project"`
}

func (p *Project) pyproject(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "pyproject.toml"))
	if err != nil {
		return nil
	}
	var f pyprojectFile
	if err := toml.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("pyproject.toml: %w (fix it, or move it away while running init)", err)
	}
	if f.Project == nil {
		return nil
	}
	p.Pyproject = true
	if f.Project.Name != "" && pyname.Valid(f.Project.Name) == nil {
		p.Name = pyname.Normalize(f.Project.Name)
	}
	if f.Project.Version != "" {
		if err := CheckVersion(f.Project.Version); err != nil {
			return fmt.Errorf("pyproject.toml: [project] version: %w (fix it in pyproject.toml, then run init again)", err)
		}
		p.Version = f.Project.Version
	}
	p.Summary = strings.Join(strings.Fields(f.Project.Description), " ")
	p.RequiresPython = f.Project.RequiresPython
	return nil
}

var (
	exportRE = regexp.MustCompile(`(?m)^//export [A-Za-z_]`)
	// versionSuffixRE is a module path's major version element (/v2).
	versionSuffixRE = regexp.MustCompile(`^v[0-9]+$`)
)

func (p *Project) goModule(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil
	}
	mod := modfile.ModulePath(b)
	if mod == "" {
		return fmt.Errorf("go.mod: no module line (fix go.mod, or move it away while running init)")
	}
	g := &GoModule{Path: mod}
	if f, err := modfile.ParseLax("go.mod", b, nil); err == nil && len(f.Require) > 0 {
		if st, err := os.Stat(filepath.Join(dir, "vendor")); err != nil || !st.IsDir() {
			g.NeedsVendor = true
		}
	}
	elems := strings.Split(mod, "/")
	last := elems[len(elems)-1]
	if versionSuffixRE.MatchString(last) && len(elems) > 1 {
		last = elems[len(elems)-2]
	}
	if !p.Pyproject {
		p.Name = normalizeName(last)
	}
	type pkg struct{ main, cgo, export bool }
	pkgs := map[string]*pkg{}
	err = filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, name)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (skipped[d.Name()] || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(name, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.ImportsOnly)
		if err != nil || f.Name.Name != "main" {
			return nil
		}
		k := path.Dir(rel)
		if pkgs[k] == nil {
			pkgs[k] = &pkg{}
		}
		pk := pkgs[k]
		pk.main = true
		for _, im := range f.Imports {
			if v, _ := strconv.Unquote(im.Path.Value); v == "C" {
				pk.cgo = true
			}
		}
		if exportRE.Match(src) && bytes.Contains(src, []byte(`"C"`)) {
			pk.export = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("go module: %w", err)
	}
	for k, pk := range pkgs {
		if pk.cgo && pk.export {
			g.CShared = append(g.CShared, k)
		} else {
			g.Mains = append(g.Mains, k)
		}
	}
	sort.Strings(g.Mains)
	sort.Strings(g.CShared)
	p.Go = g
	return nil
}

var (
	// makeLibRE finds a literal shared library a Makefile names.
	makeLibRE = regexp.MustCompile(`\blib[A-Za-z0-9_+-]+\.so\b`)
	// cmakeLibRE finds add_library(NAME SHARED ...).
	cmakeLibRE = regexp.MustCompile(`(?i)add_library\s*\(\s*([A-Za-z0-9_+-]+)\s+SHARED\b`)
)

// makeLibrary returns the first literal libNAME.so a Makefile names, "" when
// none.
func makeLibrary(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if m := makeLibRE.FindString(line); m != "" {
			return m
		}
	}
	return ""
}

// makeCFlagsRE reads a Makefile's `CFLAGS ?= VALUE` (a default that an
// exported CFLAGS replaces).
var makeCFlagsRE = regexp.MustCompile(`^\s*CFLAGS\s*\?=\s*(.*?)\s*$`)

// makeCFlags returns the value of the first `CFLAGS ?= VALUE` line of a
// Makefile, "" when there is none, or when the value is empty, refers to
// a variable or function ($), or continues on the next line (\), none of
// which the step's environment could hold as written.
func makeCFlags(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(line, "\t") {
			continue // a recipe's shell command
		}
		if m := makeCFlagsRE.FindStringSubmatch(line); m != nil {
			if strings.ContainsAny(m[1], "$\\\r") || !utf8.ValidString(m[1]) {
				return ""
			}
			return m[1]
		}
	}
	return ""
}

// cmakeLibrary returns the library of the first add_library(NAME SHARED),
// "" when none.
func cmakeLibrary(b []byte) string {
	if m := cmakeLibRE.FindSubmatch(b); m != nil {
		return "lib" + string(m[1]) + ".so"
	}
	return ""
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// pythonPackages lists the folders holding __init__.py at the top of dir
// and under src/, skipping tests, docs, examples and the verifier.
func pythonPackages(dir string) []string {
	var out []string
	for _, base := range []string{"", "src"} {
		entries, err := os.ReadDir(filepath.Join(dir, base))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || skipped[e.Name()] || !identRE.MatchString(e.Name()) {
				continue
			}
			rel := path.Join(base, e.Name())
			if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel), "__init__.py")); err == nil && st.Mode().IsRegular() {
				out = append(out, rel)
			}
		}
	}
	return out
}
