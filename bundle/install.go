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
	"runtime"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/pyfind"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel/platform"
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
// pip --no-index with every wheel pinned by hash, then pip check. It takes
// nothing from outside the bundle: it refuses a bundle whose checks did not
// all pass, or whose requirements.txt changed since, or that is for another
// platform; Python runs isolated (-I) and pip with --isolated and no
// configuration file, with PIP_*, PYTHON* and VIRTUAL_ENV removed from
// their environment (see [CleanEnv]). The interpreter is chosen and checked
// before a virtualenv is created, and a virtualenv it created is removed
// again when the install fails, so a failure leaves nothing behind.
func Install(ctx context.Context, o *Opened, opts InstallOptions) (*Installed, error) {
	if o.Manifest == nil || o.Manifest.Bundle == nil || o.requirements == "" {
		return nil, &InstallError{Msg: "the bundle has not passed its checks: nothing installed", Hint: "run mkrelease verify on it to see why"}
	}
	b := o.Manifest.Bundle
	if !platform.RunsOn(b.PlatformTag, runtime.GOOS, runtime.GOARCH) {
		return nil, &InstallError{Msg: fmt.Sprintf("the bundle is for %s (%s); this machine is %s/%s: nothing installed", b.Target, b.PlatformTag, runtime.GOOS, runtime.GOARCH),
			Hint: "fetch the bundle built for this platform"}
	}
	reqPath := filepath.Join(o.Root, "requirements.txt")
	if sha, _, err := checksum.File(reqPath); err != nil || sha != o.requirements {
		return nil, &InstallError{Msg: "requirements.txt changed after the bundle was checked: nothing installed", Hint: "install from the bundle file again"}
	}
	boundary := b.Pythons
	venv, err := filepath.Abs(opts.Venv)
	if err != nil {
		return nil, &InstallError{Msg: "the virtualenv " + opts.Venv, Err: err}
	}
	env := append(CleanEnv(os.Environ()), "PIP_CONFIG_FILE="+os.DevNull)
	res := &Installed{Venv: venv}
	vpy := VenvPython(venv)
	if _, err := os.Stat(vpy); err == nil {
		in, err := pyfind.Probe(ctx, vpy)
		if err != nil {
			return nil, &InstallError{Msg: "the virtualenv " + venv + " has no working python", Err: err}
		}
		if in.Implementation != "cpython" || !slices.Contains(boundary, in.MinorVersion()) {
			return nil, &InstallError{Msg: fmt.Sprintf("the virtualenv %s uses %s %s, outside the bundle's support boundary (CPython %s)", venv, in.Implementation, in.Version, strings.Join(boundary, ", ")),
				Hint: "install into a new virtualenv (--venv DIR) made with a supported Python"}
		}
		res.Python = in.Path
	} else {
		if _, err := os.Lstat(venv); err == nil {
			return nil, &InstallError{Msg: venv + " exists and is not a virtualenv", Hint: "name a new folder or an existing virtualenv with --venv"}
		}
		py, err := choosePython(ctx, opts, boundary)
		if err != nil {
			return nil, err
		}
		res.Python = py
		cmd := exec.CommandContext(ctx, py, "-I", "-m", "venv", venv)
		// The end of ctx (an interrupted install, a lane's timeout) ends
		// what the command started too; it also dies with mkrelease.
		procgroup.KillOnCancel(cmd)
		cmd.Env = env
		res.Created = true
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(venv)
			return nil, &InstallError{Msg: "could not create the virtualenv " + venv, Err: fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))}
		}
	}
	fail := func(e *InstallError) (*Installed, error) {
		if res.Created {
			os.RemoveAll(venv)
		}
		return nil, e
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	pip := func(out io.Writer, args ...string) error {
		cmd := exec.CommandContext(ctx, vpy, append([]string{"-I", "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input"}, args...)...)
		procgroup.KillOnCancel(cmd) // as venv's
		cmd.Dir = o.Root
		cmd.Env = env
		var buf bytes.Buffer
		if out == nil {
			out = io.MultiWriter(log, &buf)
		}
		cmd.Stdout, cmd.Stderr = out, io.MultiWriter(log, &buf)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%v\n%s", err, lastLines(buf.String(), 15))
		}
		return nil
	}
	if err := pip(nil, "install", "--no-index", "--no-cache-dir", "--only-binary", ":all:", "--find-links", "wheels", "--find-links", "dependencies",
		"--require-hashes", "-r", "requirements.txt"); err != nil {
		return fail(&InstallError{Msg: "pip could not install the bundle", Err: err})
	}
	if err := pip(nil, "check"); err != nil {
		return fail(&InstallError{Msg: "pip check found broken requirements after the install", Err: err})
	}
	var list bytes.Buffer
	if err := pip(&list, "list", "--format=json"); err != nil {
		return fail(&InstallError{Msg: "pip list failed after the install", Err: err})
	}
	var pkgs []struct{ Name, Version string }
	if err := json.Unmarshal(list.Bytes(), &pkgs); err != nil {
		return fail(&InstallError{Msg: "pip list printed no JSON", Err: err})
	}
	want := map[string]bool{}
	for _, t := range o.Manifest.Targets {
		for _, w := range t.Wheels {
			want[w.Name] = true
		}
	}
	for _, d := range b.Dependencies {
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

// CleanEnv returns environ without what would let the environment steer
// pip or Python: every PIP_* variable (PIP_FIND_LINKS, PIP_INDEX_URL,
// PIP_REQUIREMENT, PIP_CONFIG_FILE, PIP_TARGET, ...), every PYTHON*
// variable (PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONUSERBASE, ...),
// VIRTUAL_ENV and __PYVENV_LAUNCHER__. Names are compared as Windows does,
// ignoring case.
func CleanEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		if strings.HasPrefix(u, "PIP_") || strings.HasPrefix(u, "PYTHON") || u == "VIRTUAL_ENV" || u == "__PYVENV_LAUNCHER__" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// VenvBin is the folder of a virtualenv's programs on this machine:
// Scripts on Windows, bin elsewhere.
func VenvBin(venv string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(venv, "Scripts")
	}
	return filepath.Join(venv, "bin")
}

// VenvPython is the interpreter of a virtualenv on this machine.
func VenvPython(venv string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(VenvBin(venv), "python.exe")
	}
	return filepath.Join(VenvBin(venv), "python")
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
