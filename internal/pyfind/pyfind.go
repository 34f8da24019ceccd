// Package pyfind finds CPython interpreters on this machine, by the rules
// of [LayoutFor]: on PATH (python3, python3.X), then in the folders of
// common managers, which shims do not expose: pyenv ($PYENV_ROOT or
// ~/.pyenv, versions/*/bin/python3.X) and uv
// (~/.local/share/uv/python/*/bin/python3.X). On Windows the names are
// python.exe, python3.exe and python3.X.exe, and the managers' folders
// pyenv-win's (%PYENV_ROOT% or %USERPROFILE%\.pyenv\pyenv-win,
// versions\*\python.exe) and uv's (%APPDATA%\uv\python\*\python.exe).
//
// The rules are data ([Layout]) so that a bundle's install.sh, written by
// package bundle for the target's system, follows them exactly as `mkrelease
// install` does:
//
//   - candidates: each PATH folder in order, and in it each [Layout].OnPath
//     pattern in order, the names a pattern matches in byte order; then
//     every interpreter of every manager, all together in byte order of
//     their paths;
//   - a folder (a PATH entry, a manager's root) that is not an absolute path
//     is skipped: a relative one would find a program of the current folder,
//     which os/exec refuses to run by that lookup too;
//   - a candidate ending in "-config", seen before, missing, a folder or not
//     executable is skipped;
//   - each other candidate is run once to ask its implementation and
//     version ([Probe]); one that does not start (a version manager's shim
//     for a version it cannot run) or is not CPython 3 is skipped, and the
//     first candidate of each X.Y is kept.
package pyfind

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/internal/procgroup"
)

// Interpreter is a Python found on the machine.
type Interpreter struct {
	Path           string
	Major, Minor   int
	Version        string // full, e.g. "3.11.7"
	Implementation string // "cpython"
}

// MinorVersion renders "3.11".
func (i Interpreter) MinorVersion() string { return fmt.Sprintf("%d.%d", i.Major, i.Minor) }

// Layout says where the interpreters of one operating system are looked
// for and under which names. Patterns are path.Match patterns, folders
// slash-separated.
type Layout struct {
	// OnPath are the name patterns tried in each PATH folder, in order.
	OnPath []string
	// Managers are the version managers' folders, searched after PATH.
	Managers []Manager
	// ExeSuffix, when set, is what makes a file a program (Windows: a file
	// named .exe); when empty, any execute bit does.
	ExeSuffix string
}

// Manager is a version manager's folder of interpreters.
type Manager struct {
	// Name names the manager, e.g. "pyenv".
	Name string
	// RootEnv names the variable that sets the manager's folder, e.g.
	// PYENV_ROOT; "" when none does.
	RootEnv string
	// HomeEnv and Default give the folder when RootEnv is unset or empty:
	// Default under the folder the variable HomeEnv names (nothing when
	// that is unset or empty).
	HomeEnv, Default string
	// Glob is the pattern of the interpreters under the folder.
	Glob string
}

// LayoutFor returns the layout of the operating system goos (a GOOS value):
// Windows's, or the Unix one for any other.
func LayoutFor(goos string) Layout {
	if goos == "windows" {
		// The python3.exe of WindowsApps is an alias that offers to
		// install Python from the Store: asked its version, it fails, and
		// is skipped.
		return Layout{
			OnPath: []string{"python.exe", "python3.exe", "python3.[0-9].exe", "python3.[0-9][0-9].exe"},
			Managers: []Manager{
				{Name: "pyenv", RootEnv: "PYENV_ROOT", HomeEnv: "USERPROFILE", Default: ".pyenv/pyenv-win", Glob: "versions/*/python.exe"},
				{Name: "uv", HomeEnv: "APPDATA", Default: "uv/python", Glob: "*/python.exe"},
			},
			ExeSuffix: ".exe",
		}
	}
	return Layout{
		// Only the names of interpreters: on PATH a version manager's
		// shims folder also holds python3.X-config, python3.X-gdb.py and
		// python3.Xm, each a script that takes about half a second to run.
		OnPath: []string{"python3", "python3.[0-9]", "python3.[0-9][0-9]"},
		Managers: []Manager{
			{Name: "pyenv", RootEnv: "PYENV_ROOT", HomeEnv: "HOME", Default: ".pyenv", Glob: "versions/*/bin/python3.[0-9]*"},
			{Name: "uv", HomeEnv: "HOME", Default: ".local/share/uv/python", Glob: "*/bin/python3.[0-9]*"},
		},
	}
}

// Root is the manager's folder with the environment getenv reads, "" when
// it has none or it is not an absolute path.
func (m Manager) Root(getenv func(string) string) string {
	root := ""
	if m.RootEnv != "" {
		root = getenv(m.RootEnv)
	}
	if root == "" && m.HomeEnv != "" {
		if home := getenv(m.HomeEnv); home != "" {
			root = filepath.Join(home, filepath.FromSlash(m.Default))
		}
	}
	if !filepath.IsAbs(root) {
		return ""
	}
	return root
}

// Options say where to look; the zero value looks in the usual places.
type Options struct {
	// Getenv reads PATH and the variables of the managers (Unix: HOME,
	// PYENV_ROOT; Windows: USERPROFILE, PYENV_ROOT, APPDATA); default
	// os.Getenv.
	Getenv func(string) string
}

// Find returns one CPython interpreter per minor version, oldest first,
// by the rules of LayoutFor(runtime.GOOS) the package documentation spells
// out.
func Find(ctx context.Context, o Options) []Interpreter {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	l := LayoutFor(runtime.GOOS)
	seen := map[string]bool{}
	var probe []string
	for _, c := range Candidates(l, getenv) {
		if strings.HasSuffix(c, "-config") || seen[c] {
			continue
		}
		seen[c] = true
		if executable(l, c) {
			probe = append(probe, c)
		}
	}
	// Every candidate is probed, a few at a time (a version manager's shim
	// is a script that takes about half a second to start or to refuse),
	// and the answers are read in the candidates' order: the result is the
	// one a probe after another would give.
	found := make([]Interpreter, len(probe))
	ok := make([]bool, len(probe))
	sem := make(chan struct{}, probeParallelism())
	var wg sync.WaitGroup
	for i, c := range probe {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			in, err := Probe(ctx, c)
			found[i], ok[i] = in, err == nil && in.Implementation == "cpython" && in.Major == 3
		}()
	}
	wg.Wait()
	byMinor := map[int]Interpreter{}
	for i, in := range found {
		if !ok[i] {
			continue
		}
		if _, seen := byMinor[in.Minor]; !seen {
			byMinor[in.Minor] = in
		}
	}
	var out []Interpreter
	for _, in := range byMinor {
		out = append(out, in)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Minor < out[j].Minor })
	return out
}

// Candidates lists the paths Find tries with the layout l and the
// environment getenv reads, in its order: PATH's, then the managers' (the
// package documentation gives the rules). A name without metacharacters is
// listed whether or not it exists; Find skips what is not there.
func Candidates(l Layout, getenv func(string) string) []string {
	var out []string
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue
		}
		for _, pat := range l.OnPath {
			out = append(out, match(dir, pat)...)
		}
	}
	var managed []string
	for _, m := range l.Managers {
		if root := m.Root(getenv); root != "" {
			managed = append(managed, match(root, m.Glob)...)
		}
	}
	sort.Strings(managed)
	return append(out, managed...)
}

// match lists the paths under dir that the slash-separated pattern
// matches, level by level in byte order of the names. The pattern's
// metacharacters are those of path.Match; dir is taken literally. A
// pattern element without metacharacters is joined as it is (the file
// system decides whether it exists, and how it compares case), as
// filepath.Glob does.
func match(dir, pattern string) []string {
	paths := []string{dir}
	for _, elem := range strings.Split(pattern, "/") {
		var next []string
		for _, p := range paths {
			if !strings.ContainsAny(elem, `*?[\`) {
				next = append(next, filepath.Join(p, elem))
				continue
			}
			entries, err := os.ReadDir(p) // sorted by name
			if err != nil {
				continue
			}
			for _, e := range entries {
				if ok, _ := path.Match(elem, e.Name()); ok {
					next = append(next, filepath.Join(p, e.Name()))
				}
			}
		}
		paths = next
	}
	return paths
}

// executable reports whether the file at p can be run by the rules of l.
func executable(l Layout, p string) bool {
	st, err := os.Stat(p)
	if err != nil || st.IsDir() {
		return false
	}
	if l.ExeSuffix != "" {
		return strings.EqualFold(filepath.Ext(p), l.ExeSuffix)
	}
	return st.Mode()&0o111 != 0
}

// Probe runs an interpreter to read its version and implementation.
func Probe(ctx context.Context, path string) (Interpreter, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-I", "-c",
		"import sys; print(sys.implementation.name, '%d.%d.%d' % sys.version_info[:3])")
	// A stand-in that hangs, or leaves a process holding its output open,
	// is ended whole at the timeout.
	procgroup.KillOnCancel(cmd)
	out, err := cmd.Output()
	if err != nil {
		return Interpreter{}, fmt.Errorf("%s: %w", path, err)
	}
	f := strings.Fields(string(out))
	if len(f) != 2 {
		return Interpreter{}, fmt.Errorf("%s: unexpected answer %q", path, out)
	}
	parts := strings.Split(f[1], ".")
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return Interpreter{}, fmt.Errorf("%s: unexpected version %q", path, f[1])
	}
	return Interpreter{Path: path, Major: major, Minor: minor, Version: f[1], Implementation: f[0]}, nil
}

// probeParallelism is how many probes [Find] runs at a time: twice the
// processors Go may use (a probe waits on a process start as much as it
// computes), at least 2 and at most 8.
func probeParallelism() int {
	return min(max(2*runtime.GOMAXPROCS(0), 2), 8)
}

// ProbeTimeout bounds one run of [Probe].
const ProbeTimeout = 20 * time.Second

// Pick returns the newest interpreter whose X.Y is in allowed (all when
// allowed is empty).
func Pick(found []Interpreter, allowed []string) (Interpreter, bool) {
	for i := len(found) - 1; i >= 0; i-- {
		if len(allowed) == 0 || contains(allowed, found[i].MinorVersion()) {
			return found[i], true
		}
	}
	return Interpreter{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
