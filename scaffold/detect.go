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
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
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
	// RequiresPython is pyproject.toml's requires-python ("" when none):
	// init offers the interpreters it allows.
	RequiresPython string
	// Pyproject is what init read of pyproject.toml's [project] table, nil
	// without one. release.toml reads its metadata from there (from).
	Pyproject *Pyproject
	// Readme and Changelog are the files found at the top of the project
	// ("" when none).
	Readme, Changelog string
	// LicenseFiles are the license files the wheels ship: the one at the
	// top of the project (LICENSE, COPYING, ...) and those pyproject.toml's
	// license-files match.
	LicenseFiles []string
	// License is the release's SPDX license expression: pyproject.toml's,
	// else the one the license file's text and the sources'
	// SPDX-License-Identifier lines agree on ("" when unknown).
	License string
	// LicenseFrom says where License was read, as a noun phrase
	// ("pyproject.toml", "the text of LICENSE").
	LicenseFrom string
	// LicenseHint says why License is unknown although something was
	// found ("LICENSE is the GNU GPL version 3: ..."), "" otherwise.
	LicenseHint string
	// Go is the Go module at the top of the project, nil when none.
	Go *GoModule
	// Make is the Makefile's native library, nil without a Makefile.
	Make *Native
	// CMake is the CMake project's native library, nil without a
	// CMakeLists.txt.
	CMake *Native
	// Cargo is set when the project has a Cargo.toml, which init writes
	// no build step for.
	Cargo bool
	// Packages are the Python packages (folders with __init__.py) at the
	// top of the project or under src/, in order.
	Packages []string
	// Imports are, for each package that imports others of Packages, those
	// it imports (nil when there is one package).
	Imports map[string][]string
}

// Pyproject is what init reads of a pyproject.toml's [project] table: which
// fields it sets, so that release.toml writes only the others.
type Pyproject struct {
	// Set are the keys [project] writes; Dynamic those it lists in
	// dynamic (computed by its build backend, which mkrelease does not
	// run).
	Set, Dynamic map[string]bool
	// LicenseTable is set when license is the table of PEP 621 before PEP
	// 639 ({ file = ... } or { text = ... }), which is no SPDX expression.
	LicenseTable bool
}

// gives reports whether the pyproject.toml gives field statically.
func (pp *Pyproject) gives(field string) bool {
	return pp != nil && pp.Set[field] && !(field == "license" && pp.LicenseTable)
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
	licenseGlobs, err := p.pyproject(dir)
	if err != nil {
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
	if st, err := os.Stat(filepath.Join(dir, "Cargo.toml")); err == nil && st.Mode().IsRegular() {
		p.Cargo = true
	}
	p.Packages = pythonPackages(dir)
	p.Imports = packageImports(dir, p.Packages)
	p.Readme = firstFile(dir, "README.md", "README.rst", "README.txt", "README")
	p.Changelog = firstFile(dir, "CHANGELOG.md", "CHANGES.md")
	top := firstFile(dir, "LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING")
	if top != "" {
		p.LicenseFiles = append(p.LicenseFiles, top)
	}
	for _, f := range licenseFileGlobs(dir, licenseGlobs) {
		if !slices.Contains(p.LicenseFiles, f) {
			p.LicenseFiles = append(p.LicenseFiles, f)
		}
	}
	if p.License == "" {
		p.detectLicense(dir, top)
	}
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

// pyproject reads the [project] table of dir's pyproject.toml, when there
// is one, into p, and returns its license-files patterns. It refuses a
// name or version init cannot write a release for, naming the file.
func (p *Project) pyproject(dir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "pyproject.toml"))
	if err != nil {
		return nil, nil
	}
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("pyproject.toml: %w (fix it, or move it away while running init)", err)
	}
	raw, ok := doc["project"]
	if !ok {
		return nil, nil
	}
	proj, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("pyproject.toml: project is not a table (PEP 621 wants a [project] table: fix it, or move the file away while running init)")
	}
	pp := &Pyproject{Set: map[string]bool{}, Dynamic: map[string]bool{}}
	for k := range proj {
		pp.Set[k] = true
	}
	if list, ok := proj["dynamic"].([]any); ok {
		for _, d := range list {
			if s, ok := d.(string); ok {
				pp.Dynamic[s] = true
			}
		}
	}
	name, _ := proj["name"].(string)
	if name == "" {
		return nil, fmt.Errorf("pyproject.toml: [project] has no name (PEP 621 requires one, written statically: add name = \"...\", then run init again)")
	}
	if err := pyname.Valid(name); err != nil {
		return nil, fmt.Errorf("pyproject.toml: [project] name: %w (fix it in pyproject.toml, then run init again)", err)
	}
	p.Name = pyname.Normalize(name)
	if v, ok := proj["version"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("pyproject.toml: [project] version is not a string (write it quoted, e.g. version = \"1.2.0\", then run init again)")
		}
		if err := CheckVersion(s); err != nil {
			return nil, fmt.Errorf("pyproject.toml: [project] version: %w (fix it in pyproject.toml, then run init again)", err)
		}
		p.Version = s
	}
	switch l := proj["license"].(type) {
	case string:
		p.License, p.LicenseFrom = l, "pyproject.toml"
	case map[string]any:
		pp.LicenseTable = true
	}
	p.RequiresPython, _ = proj["requires-python"].(string)
	var globs []string
	if list, ok := proj["license-files"].([]any); ok {
		for _, g := range list {
			if s, ok := g.(string); ok {
				globs = append(globs, s)
			}
		}
	}
	p.Pyproject = pp
	return globs, nil
}

// licenseFileGlobs returns the regular files that the license-files
// patterns of pyproject.toml match in dir, slash-separated and sorted. A
// pattern that is absolute, leaves the folder or uses a backslash matches
// nothing (the configuration's loader says what is wrong with it).
func licenseFileGlobs(dir string, globs []string) []string {
	var out []string
	for _, g := range globs {
		if g == "" || path.IsAbs(g) || strings.Contains(g, "\\") || slices.Contains(strings.Split(g, "/"), "..") {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(dir, filepath.FromSlash(g)))
		sort.Strings(matches)
		for _, m := range matches {
			st, err := os.Lstat(m)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			rel, err := filepath.Rel(dir, m)
			if err != nil {
				continue
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
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
	if p.Pyproject == nil {
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

var (
	// fromImportRE reads the module of `from MODULE import ...`.
	fromImportRE = regexp.MustCompile(`^\s*from\s+([A-Za-z_][A-Za-z0-9_]*)`)
	// importRE reads the modules of `import A, B as C`.
	importRE = regexp.MustCompile(`^\s*import\s+(.+)`)
)

const (
	// maxImportFiles bounds the .py files read per package for imports.
	maxImportFiles = 500
	// maxImportBytes bounds what is read of each.
	maxImportBytes = 256 << 10
)

// readSources calls fn with the first maxBytes of each regular file below
// root that keep accepts, in walk order, for at most maxFiles files. It
// skips the folders a project's sources never are in (skipped, and hidden
// ones below root), and files it cannot read: what it reads is a hint for
// what init writes, never a refusal.
func readSources(root string, keep func(name string) bool, maxFiles int, maxBytes int64, fn func(name string, head []byte)) {
	n := 0
	_ = filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if name != root && (skipped[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !keep(name) {
			return nil
		}
		if n++; n > maxFiles {
			return filepath.SkipAll
		}
		f, err := os.Open(name)
		if err != nil {
			return nil
		}
		head, _ := io.ReadAll(io.LimitReader(f, maxBytes))
		f.Close()
		fn(name, head)
		return nil
	})
}

// packageImports returns, for each of the packages (folders) that imports
// another of them by its top-level name, the folders of those it imports,
// in the order of packages. It reads the packages' .py files line by line:
// an import inside a string or behind a condition counts as well.
func packageImports(dir string, packages []string) map[string][]string {
	if len(packages) < 2 {
		return nil
	}
	byName := map[string]string{}
	for _, pkg := range packages {
		byName[pkgBase(pkg)] = pkg
	}
	out := map[string][]string{}
	for _, pkg := range packages {
		seen := map[string]bool{}
		root := filepath.Join(dir, filepath.FromSlash(pkg))
		readSources(root, func(name string) bool { return filepath.Ext(name) == ".py" }, maxImportFiles, maxImportBytes, func(_ string, src []byte) {
			for _, line := range strings.Split(string(src), "\n") {
				var mods []string
				if m := fromImportRE.FindStringSubmatch(line); m != nil {
					mods = []string{m[1]}
				} else if m := importRE.FindStringSubmatch(line); m != nil {
					for _, part := range strings.Split(m[1], ",") {
						mod, _, _ := strings.Cut(strings.TrimSpace(part), ".")
						mod, _, _ = strings.Cut(mod, " ")
						mods = append(mods, mod)
					}
				}
				for _, mod := range mods {
					if other, ok := byName[mod]; ok && other != pkg {
						seen[other] = true
					}
				}
			}
		})
		for _, other := range packages {
			if seen[other] {
				out[pkg] = append(out[pkg], other)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
