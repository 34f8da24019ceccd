// Package pyfind finds CPython interpreters on this machine: on PATH
// (python3, python3.X), and in the folders of common managers, which shims
// do not expose: pyenv ($PYENV_ROOT or ~/.pyenv, versions/*/bin/python3.X)
// and uv (~/.local/share/uv/python/*/bin/python3.X). On Windows the names
// are python.exe, python3.exe and python3.X.exe, and the managers' folders
// pyenv-win's (%PYENV_ROOT% or %USERPROFILE%\.pyenv\pyenv-win,
// versions\*\python.exe) and uv's (%APPDATA%\uv\python\*\python.exe).
// Each candidate is run once to ask its version; one interpreter per X.Y
// is kept, PATH first.
package pyfind

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
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

// Options say where to look; the zero value looks in the usual places.
type Options struct {
	// Getenv reads PATH, HOME, PYENV_ROOT (on Windows PATH, USERPROFILE,
	// PYENV_ROOT, APPDATA); default os.Getenv.
	Getenv func(string) string
}

// Find returns one CPython interpreter per minor version, oldest first.
func Find(ctx context.Context, o Options) []Interpreter {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var candidates []string
	for _, dir := range filepath.SplitList(getenv("PATH")) {
		candidates = append(candidates, onPath(dir)...)
	}
	managed := managedCandidates(getenv)
	sort.Strings(managed)
	candidates = append(candidates, managed...)

	seen := map[string]bool{}
	byMinor := map[int]Interpreter{}
	for _, c := range candidates {
		if strings.HasSuffix(c, "-config") || seen[c] {
			continue
		}
		seen[c] = true
		if st, err := os.Stat(c); err != nil || !executable(c, st) {
			continue
		}
		in, err := Probe(ctx, c)
		if err != nil || in.Implementation != "cpython" || in.Major != 3 {
			continue
		}
		if _, ok := byMinor[in.Minor]; !ok {
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

// Probe runs an interpreter to read its version and implementation.
func Probe(ctx context.Context, path string) (Interpreter, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-I", "-c",
		"import sys; print(sys.implementation.name, '%d.%d.%d' % sys.version_info[:3])")
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
