package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pyfind"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// InstallOptions configure Install.
type InstallOptions struct {
	// Venv is the virtualenv to create or reuse.
	Venv string
	// Python is the interpreter for a new virtualenv; empty picks the
	// newest supported one found on the machine (PATH, pyenv, uv).
	Python string
	// Log receives pip's output.
	Log io.Writer
	// Getenv reads PATH and HOME for interpreter discovery.
	Getenv func(string) string
}

// Installed is what Install put into the virtualenv.
type Installed struct {
	Venv     string   `json:"venv"`
	Python   string   `json:"python"`
	Created  bool     `json:"created"`
	Packages []string `json:"packages"` // name==version, of the bundle
}

// InstallError is a refused or failed install. It maps to exit status 1.
type InstallError struct {
	Msg  string
	Hint string
	Err  error
}

// Error says what failed and what to do.
func (e *InstallError) Error() string {
	s := e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "\n\thint: " + e.Hint
	}
	return s
}

// Unwrap returns the cause.
func (e *InstallError) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *InstallError) ExitCode() int { return 1 }

// Install installs an opened, checked bundle into a virtualenv, offline:
// pip --no-index with every wheel pinned by hash, then pip check. A
// virtualenv it created is removed again when the install fails, so a
// failure leaves nothing behind.
func Install(ctx context.Context, o *Opened, opts InstallOptions) (*Installed, error) {
	if o.Manifest == nil || o.Manifest.Bundle == nil {
		return nil, &InstallError{Msg: "the bundle has no readable manifest"}
	}
	boundary := o.Manifest.Bundle.Pythons
	res := &Installed{Venv: opts.Venv}
	vpy := filepath.Join(opts.Venv, "bin", "python")
	if _, err := os.Stat(vpy); err == nil {
		in, err := pyfind.Probe(ctx, vpy)
		if err != nil {
			return nil, &InstallError{Msg: "the virtualenv " + opts.Venv + " has no working python", Err: err}
		}
		if in.Implementation != "cpython" || !slices.Contains(boundary, in.MinorVersion()) {
			return nil, &InstallError{Msg: fmt.Sprintf("the virtualenv %s uses %s %s, outside the bundle's support boundary (CPython %s)", opts.Venv, in.Implementation, in.Version, strings.Join(boundary, ", ")),
				Hint: "install into a new virtualenv (--venv DIR) made with a supported Python"}
		}
		res.Python = in.Path
	} else {
		if _, err := os.Stat(opts.Venv); err == nil {
			return nil, &InstallError{Msg: opts.Venv + " exists and is not a virtualenv", Hint: "name a new folder or an existing virtualenv with --venv"}
		}
		py, err := choosePython(ctx, opts, boundary)
		if err != nil {
			return nil, err
		}
		res.Python = py
		if out, err := exec.CommandContext(ctx, py, "-m", "venv", opts.Venv).CombinedOutput(); err != nil {
			os.RemoveAll(opts.Venv)
			return nil, &InstallError{Msg: "could not create the virtualenv " + opts.Venv, Err: fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))}
		}
		res.Created = true
	}
	fail := func(e *InstallError) (*Installed, error) {
		if res.Created {
			os.RemoveAll(opts.Venv)
		}
		return nil, e
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	pip := func(args ...string) error {
		cmd := exec.CommandContext(ctx, vpy, append([]string{"-m", "pip", "--disable-pip-version-check", "--no-input"}, args...)...)
		cmd.Dir = o.Root
		cmd.Env = append(os.Environ(), "PIP_NO_INDEX=1", "PIP_CONFIG_FILE=/dev/null")
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.MultiWriter(log, &buf), io.MultiWriter(log, &buf)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%v\n%s", err, lastLines(buf.String(), 15))
		}
		return nil
	}
	if err := pip("install", "--no-index", "--no-cache-dir", "--find-links", "wheels", "--find-links", "dependencies",
		"--require-hashes", "-r", "requirements.txt"); err != nil {
		return fail(&InstallError{Msg: "pip could not install the bundle", Err: err})
	}
	if err := pip("check"); err != nil {
		return fail(&InstallError{Msg: "pip check found broken requirements after the install", Err: err})
	}
	var list bytes.Buffer
	cmd := exec.CommandContext(ctx, vpy, "-m", "pip", "--disable-pip-version-check", "list", "--format=json")
	cmd.Stdout = &list
	if err := cmd.Run(); err != nil {
		return nil, &InstallError{Msg: "pip list failed after the install", Err: err}
	}
	var pkgs []struct{ Name, Version string }
	if err := json.Unmarshal(list.Bytes(), &pkgs); err != nil {
		return nil, &InstallError{Msg: "pip list printed no JSON", Err: err}
	}
	want := map[string]bool{}
	for _, t := range o.Manifest.Targets {
		for _, w := range t.Wheels {
			want[w.Name] = true
		}
	}
	for _, d := range o.Manifest.Bundle.Dependencies {
		name, _, _ := strings.Cut(d.Name, "==")
		want[name] = true
	}
	for _, p := range pkgs {
		if want[pyname.Normalize(p.Name)] {
			res.Packages = append(res.Packages, pyname.Normalize(p.Name)+"=="+p.Version)
		}
	}
	slices.Sort(res.Packages)
	return res, nil
}

func choosePython(ctx context.Context, opts InstallOptions, boundary []string) (string, error) {
	if opts.Python != "" {
		path, err := exec.LookPath(opts.Python)
		if err != nil {
			return "", &InstallError{Msg: "python " + opts.Python + " not found", Err: err}
		}
		in, err := pyfind.Probe(ctx, path)
		if err != nil {
			return "", &InstallError{Msg: "python " + opts.Python + " does not run", Err: err}
		}
		if in.Implementation != "cpython" || !slices.Contains(boundary, in.MinorVersion()) {
			return "", &InstallError{Msg: fmt.Sprintf("%s is %s %s, outside the bundle's support boundary (CPython %s)", opts.Python, in.Implementation, in.Version, strings.Join(boundary, ", ")),
				Hint: "pass a supported interpreter with --python"}
		}
		return path, nil
	}
	in, ok := pyfind.Pick(pyfind.Find(ctx, pyfind.Options{Getenv: opts.Getenv}), boundary)
	if !ok {
		return "", &InstallError{Msg: "no supported Python found (the bundle supports CPython " + strings.Join(boundary, ", ") + ")",
			Hint: "install one, or pass it with --python /path/to/python3.X"}
	}
	return in.Path, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
