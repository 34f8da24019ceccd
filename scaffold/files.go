package scaffold

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyfind"
)

//go:embed skeleton/*.tmpl
var skeleton embed.FS

// File is one file init writes, its path relative to the project folder.
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
	// Merge marks .gitignore: lines are added to an existing file, never
	// duplicated, instead of refusing it.
	Merge bool
}

// Ignored are the .gitignore lines init adds: mkrelease's own folder (it
// holds the development private key), the output folder and its staging
// folders, and the channel (a link to its current generation) with its
// generations and lock.
var Ignored = []string{"/.mkrelease/", "/dist/", "/.dist.tmp-*", "/published", "/.published.generations/", "/.published.lock"}

// Files returns everything init writes for project p on host h: release.toml,
// CHANGELOG.md when the project has no changelog, the verifier skeleton and
// .gitignore.
//
// It refuses a version that is not a PEP 440 version as written
// ([CheckVersion]) before rendering anything.
func Files(p *Project, h Host) ([]File, error) {
	if err := CheckVersion(p.Version); err != nil {
		return nil, fmt.Errorf("project version: %w", err)
	}
	files := []File{{Path: "release.toml", Data: []byte(ReleaseTOML(p, h)), Mode: 0o644}}
	if p.Changelog == "" {
		files = append(files, File{Path: "CHANGELOG.md", Mode: 0o644, Data: []byte(
			"# Changelog\n\n## " + p.Version + "\n\n- First release with mkrelease.\n")})
	}
	data := struct{ Name, Checks, Imports string }{Name: p.Name, Checks: pyChecks(p, h), Imports: pyList(imports(p))}
	for _, f := range []struct{ tmpl, path string }{
		{"README.md.tmpl", "verifier/README.md"},
		{"cases.py.tmpl", "verifier/cases.py"},
		{"worker.py.tmpl", "verifier/worker.py"},
	} {
		t, err := template.ParseFS(skeleton, "skeleton/"+f.tmpl)
		if err != nil {
			return nil, fmt.Errorf("verifier skeleton %s: %w", f.tmpl, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("verifier skeleton %s: %w", f.tmpl, err)
		}
		files = append(files, File{Path: f.path, Data: b.Bytes(), Mode: 0o644})
	}
	files = append(files, File{Path: ".gitignore", Data: []byte(strings.Join(Ignored, "\n") + "\n"), Mode: 0o644, Merge: true})
	return files, nil
}

func imports(p *Project) []string {
	var out []string
	for _, pkg := range p.Packages {
		out = append(out, pkgBase(pkg))
	}
	return out
}

// pyChecks renders the smoke cases as a Python list literal.
func pyChecks(p *Project, h Host) string {
	var checks []string
	for _, m := range imports(p) {
		checks = append(checks, "(\"import\", "+strconv.Quote(m)+")")
	}
	pl := newPlan(p, h)
	for _, o := range pl.outs {
		if o.lib {
			checks = append(checks, "(\"library\", "+strconv.Quote(path.Join(pl.libDir, o.file))+")")
		} else {
			checks = append(checks, "(\"program\", "+strconv.Quote(o.file)+")")
		}
	}
	if len(checks) == 0 {
		return "[]"
	}
	return "[\n    " + strings.Join(checks, ",\n    ") + ",\n]"
}

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// ExistsError is a file init would write that is already there.
type ExistsError struct{ Paths []string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already exist%s; init writes nothing over a file\n\thint: move %s away and run init again, or edit the existing files by hand",
		strings.Join(e.Paths, ", "), map[bool]string{true: "s", false: ""}[len(e.Paths) == 1], map[bool]string{true: "it", false: "them"}[len(e.Paths) == 1])
}

// ExitCode is 2: the project folder is not one init can write into.
func (e *ExistsError) ExitCode() int { return 2 }

// LinkError is a symbolic link where init would write: the project
// folder itself, a folder on the way to a file (verifier/), or the file
// (.gitignore, CHANGELOG.md). init writes only into the project folder, never
// through a link, wherever it points.
type LinkError struct {
	// Path is the link: "." for the project folder, else relative to it.
	Path string
	// Dir is the project folder as given.
	Dir string
	// Target is where the link points ("" when it cannot be read).
	Target string
}

func (e *LinkError) Error() string {
	what := e.Path
	if e.Path == "." {
		what = "the project folder " + e.Dir
	}
	to := ""
	if e.Target != "" {
		to = " (to " + e.Target + ")"
	}
	return fmt.Sprintf("%s is a symbolic link%s; init writes only into the project folder itself, never through a link\n\thint: replace %s with a real folder or file (or remove it), or run init in the folder the link points to",
		what, to, what)
}

// ExitCode is 2: the project folder is not one init can write into.
func (e *LinkError) ExitCode() int { return 2 }

// Write writes files into dir. Before writing anything it refuses, with a
// [*LinkError], when dir, a folder on the way to one of the files or one
// of the files is a symbolic link, and with an [*ExistsError] when one of
// the files (other than a merged .gitignore) exists. Every write goes
// through an [os.Root] of dir, so that nothing is written outside it, even
// through a link made after the check. Each file is written atomically,
// and never over a file that appears after that check (the .gitignore
// excepted, which is merged). It returns the paths written.
func Write(dir string, files []File) (written []string, err error) {
	if err := checkNoLinks(dir, files); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the project folder: %w", err)
	}
	defer root.Close()
	var exist []string
	for _, f := range files {
		if f.Merge {
			continue
		}
		if _, err := root.Lstat(filepath.FromSlash(f.Path)); err == nil {
			exist = append(exist, f.Path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	if len(exist) > 0 {
		return nil, &ExistsError{Paths: exist}
	}
	for _, f := range files {
		name := filepath.FromSlash(f.Path)
		data := f.Data
		if f.Merge {
			old, err := root.ReadFile(name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return written, fmt.Errorf("%s: %w", f.Path, err)
			}
			data = MergeIgnore(old, strings.Split(strings.TrimSpace(string(f.Data)), "\n"))
			if bytes.Equal(data, old) {
				continue
			}
		}
		if d := filepath.Dir(name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return written, fmt.Errorf("%s: %w", f.Path, err)
			}
		}
		write := atomicfile.WriteNewIn // never over a file that appeared since the check
		if f.Merge {
			write = atomicfile.WriteFileIn
		}
		if err := write(root, name, data, f.Mode); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return written, &ExistsError{Paths: []string{f.Path}}
			}
			return written, fmt.Errorf("%s: %w", f.Path, err)
		}
		written = append(written, f.Path)
	}
	return written, nil
}

// checkNoLinks returns a *LinkError for the first symbolic link among dir
// and the paths init would write through: every folder on the way to a
// file, and the file.
func checkNoLinks(dir string, files []File) error {
	seen := map[string]bool{}
	check := func(rel string) error {
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		p := filepath.Join(dir, filepath.FromSlash(rel))
		st, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", rel, err)
		case st.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			return &LinkError{Path: rel, Dir: dir, Target: target}
		}
		return nil
	}
	if err := check("."); err != nil {
		return err
	}
	for _, f := range files {
		elems := strings.Split(f.Path, "/")
		for i := range elems {
			if err := check(strings.Join(elems[:i+1], "/")); err != nil {
				return err
			}
		}
	}
	return nil
}

// MergeIgnore returns the .gitignore old with the lines of want that it
// does not ignore yet appended. A folder counts as ignored when a line
// names it with or without the leading or trailing slash.
func MergeIgnore(old []byte, want []string) []byte {
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") {
			continue
		}
		have[strings.Trim(l, "/")] = true
	}
	out := append([]byte(nil), old...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	for _, w := range want {
		k := strings.Trim(w, "/")
		if have[k] {
			continue
		}
		have[k] = true
		out = append(out, w...)
		out = append(out, '\n')
	}
	return out
}

// MinPythonMinor is the oldest CPython 3 minor version init offers to
// support: older ones lack the wheel tags a manylinux wheel needs.
const MinPythonMinor = 8

// Inspect gathers the host facts for project folder dir: the platform
// (goos, goarch), the CPython versions found (3.8 and newer, within the
// project's requires-python), the glibc version on Linux, the supplier
// `cc --version` names when the project uses cc, git's user.name
// and user.email, and the HEAD commit of the work tree. A missing git,
// Python or getconf leaves those facts empty.
func Inspect(ctx context.Context, dir, goos, goarch string, p *Project, getenv func(string) string) Host {
	h := Host{GOOS: goos, GOARCH: goarch}
	var spec *pep440.Specifiers
	if p.RequiresPython != "" {
		if s, err := pep440.ParseSpecifiers(p.RequiresPython); err == nil {
			spec = &s
		}
	}
	for _, in := range pyfind.Find(ctx, pyfind.Options{Getenv: getenv}) {
		if in.Minor < MinPythonMinor {
			continue
		}
		if spec != nil {
			if v, err := pep440.Parse(in.Version); err == nil && !spec.Contains(v, true) {
				continue
			}
		}
		h.Pythons = append(h.Pythons, in.MinorVersion())
	}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if goos == "linux" {
		if out, err := exec.CommandContext(ctx, "getconf", "GNU_LIBC_VERSION").Output(); err == nil {
			h.Glibc = strings.TrimPrefix(strings.TrimSpace(string(out)), "glibc ")
		}
	}
	if p.Make != nil || p.CMake != nil || (p.Go != nil && len(p.Go.CShared) > 0) {
		if out, err := exec.CommandContext(ctx, "cc", "--version").Output(); err == nil {
			h.CCSupplier = CCSupplier(string(out))
		}
	}
	h.AuthorName = git("config", "user.name")
	h.AuthorEmail = git("config", "user.email")
	// Only a work tree whose top is the project folder: the git source
	// "." is the project.
	top := git("rev-parse", "--show-toplevel")
	abs, err := filepath.Abs(dir)
	if err == nil && top != "" && !sameDir(top, abs) {
		h.EnclosingRepo = true
	}
	if err == nil && top != "" && sameDir(top, abs) {
		h.Commit = git("rev-parse", "--verify", "-q", "HEAD^{commit}")
		if h.Commit != "" {
			h.Tracked = map[string]bool{}
			for _, f := range strings.Split(git("ls-tree", "-r", "--name-only", "-z", "HEAD"), "\x00") {
				if f != "" {
					h.Tracked[f] = true
				}
			}
		}
	}
	return h
}

func sameDir(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// Untracked lists the build inputs init detected that the HEAD commit does
// not hold: the git source would build without them.
func Untracked(p *Project, h Host) []string {
	if h.Tracked == nil {
		return nil
	}
	var inputs []string
	if p.Go != nil {
		inputs = append(inputs, "go.mod")
	}
	if p.Make != nil {
		inputs = append(inputs, p.Make.File)
	} else if p.CMake != nil {
		inputs = append(inputs, p.CMake.File)
	}
	for _, pkg := range p.Packages {
		inputs = append(inputs, pkg+"/__init__.py")
	}
	inputs = append(inputs, p.LicenseFiles...)
	var out []string
	for _, f := range inputs {
		if !h.Tracked[f] {
			out = append(out, f)
		}
	}
	return out
}
