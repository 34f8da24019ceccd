package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
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
	// Log receives pip's output, and the note that a virtualenv left by
	// an interrupted install is being recreated.
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
// again when the install fails or ctx ends, so a failure leaves nothing
// behind.
//
// A kill (SIGKILL, a power cut) leaves no chance to remove anything, so a
// virtualenv Install creates carries the file .mkrelease-installing, naming
// the folder, from before Python populates it until the install has
// completed. The next Install into a folder holding that file removes the
// folder and creates the virtualenv again, saying so on opts.Log; it
// refuses instead when the folder is a symbolic link, the file names
// another folder, or the folder is (or holds) a file system root or the
// home folder. A virtualenv Install did not create is never removed: one
// without a working pip is refused, naming it.
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
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	// Python and pip run confined where the host allows it: the end of
	// ctx (an interrupted install, a lane's timeout) ends what they
	// started too, and so does the death of mkrelease, even by SIGKILL.
	// Otherwise a process ensurepip started (it runs pip as a child of
	// its own) would go on writing into a virtualenv that a killed install
	// left, while the next install removes and recreates it.
	contain := procgroup.ProbeContainment(ctx)
	pip := func(out io.Writer, args ...string) error {
		cmd := exec.CommandContext(ctx, vpy, append([]string{"-I", "-m", "pip", "--isolated", "--disable-pip-version-check", "--no-input"}, args...)...)
		contain.KillOnCancel(cmd)
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
	// abandoned is the real path of a virtualenv an interrupted install
	// created and did not complete: it is removed and created again.
	var abandoned string
	if _, err := os.Lstat(filepath.Join(venv, installMarker)); err == nil {
		if abandoned, err = leftByInterruptedInstall(venv, protectedDirs(opts.Getenv)); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(vpy); err == nil {
		in, err := pyfind.Probe(ctx, vpy)
		if err != nil {
			return nil, &InstallError{Msg: "the virtualenv " + venv + " has no working python", Err: err,
				Hint: "mkrelease did not create it, so it leaves it as it is: remove it and install again, or name another folder with --venv"}
		}
		if in.Implementation != "cpython" || !slices.Contains(boundary, in.MinorVersion()) {
			return nil, &InstallError{Msg: fmt.Sprintf("the virtualenv %s uses %s %s, outside the bundle's support boundary (CPython %s)", venv, in.Implementation, in.Version, strings.Join(boundary, ", ")),
				Hint: "install into a new virtualenv (--venv DIR) made with a supported Python"}
		}
		if err := pip(nil, "--version"); err != nil {
			return nil, &InstallError{Msg: "the virtualenv " + venv + " has no working pip: nothing installed", Err: err,
				Hint: "mkrelease did not create it, so it leaves it as it is: repair it (" + vpy + " -m ensurepip) or remove it, and install again; or name another folder with --venv"}
		}
		res.Python = in.Path
	} else if _, err := os.Lstat(venv); err == nil {
		return nil, &InstallError{Msg: venv + " exists and is not a virtualenv", Hint: "name a new folder or an existing virtualenv with --venv"}
	}
	if res.Python == "" {
		py, err := choosePython(ctx, opts, boundary)
		if err != nil {
			return nil, err
		}
		if abandoned != "" {
			fmt.Fprintf(log, "mkrelease: the virtualenv %s was left by an interrupted install; recreating it\n", venv)
			if err := removeVenv(abandoned); err != nil {
				return nil, &InstallError{Msg: "could not remove the virtualenv " + venv + ", left by an interrupted install", Err: err,
					Hint: "remove it yourself and install again"}
			}
		}
		res.Python = py
		res.Created = true
		if err := createVenv(ctx, contain, py, venv, env); err != nil {
			return nil, &InstallError{Msg: "could not create the virtualenv " + venv, Err: err}
		}
	}
	fail := func(e *InstallError) (*Installed, error) {
		if res.Created {
			removeVenv(venv)
		}
		return nil, e
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
	if res.Created {
		// The last step: from here on the virtualenv is complete.
		if err := os.Remove(filepath.Join(venv, installMarker)); err != nil {
			return fail(&InstallError{Msg: "could not mark the virtualenv " + venv + " complete", Err: err})
		}
		if err := atomicfile.SyncDir(venv); err != nil {
			return fail(&InstallError{Msg: "could not mark the virtualenv " + venv + " complete", Err: err})
		}
	}
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

// installMarker is the file a virtualenv Install creates carries from
// before Python populates it until the install has completed (pip install,
// pip check and pip list passed). A virtualenv holding it was left by an
// install that was killed (SIGKILL, a power cut: nothing could remove the
// virtualenv then), and the next install recreates it.
const installMarker = ".mkrelease-installing"

// markerContent is what installMarker holds in the virtualenv whose real
// path (symbolic links resolved) is real: the next install removes a
// virtualenv only when its marker names the folder where it finds it.
func markerContent(real string) []byte {
	return []byte("mkrelease install is creating a virtualenv in this folder. Until it removes this\n" +
		"file the install has not completed, and the next mkrelease install into this\n" +
		"folder removes it and creates it again.\n" +
		"venv: " + real + "\n")
}

// createVenv creates the virtualenv venv with the interpreter py. The
// folder appears with installMarker already in it: it is assembled beside
// venv and renamed into place, so a kill at any moment leaves either no
// venv or one the next install recognises as its own. Only then does
// Python populate it. When Python fails the folder is removed again.
func createVenv(ctx context.Context, contain procgroup.Containment, py, venv string, env []string) error {
	parent := filepath.Dir(venv)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	realParent, err := filepath.EvalSymlinks(parent)
	if err != nil {
		return err
	}
	real := filepath.Join(realParent, filepath.Base(venv))
	sweepStaged(venv, real)
	staged, err := atomicfile.TempDir(venv)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(staged, installMarker), markerContent(real), 0o644); err != nil {
		os.RemoveAll(staged)
		return err
	}
	// A rename does not replace a folder that appeared meanwhile unless it
	// is empty.
	if err := os.Rename(staged, venv); err != nil {
		os.RemoveAll(staged)
		return err
	}
	if err := atomicfile.SyncDir(parent); err != nil {
		removeVenv(venv)
		return err
	}
	cmd := exec.CommandContext(ctx, py, "-I", "-m", "venv", venv)
	// As pip's: the end of ctx, or of mkrelease, ends it and what it
	// started (ensurepip's pip).
	contain.KillOnCancel(cmd)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		removeVenv(venv)
		return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// sweepStaged removes the folders createVenv assembles beside venv that a
// kill left before it renamed them into place: each holds only the marker
// naming real, and nothing else is removed.
func sweepStaged(venv, real string) {
	staged, _ := filepath.Glob(filepath.Join(filepath.Dir(venv), "."+globEscape(filepath.Base(venv))+".tmp-*"))
	for _, dir := range staged {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 1 || entries[0].Name() != installMarker {
			continue
		}
		if data, ok := readMarker(filepath.Join(dir, installMarker)); ok && bytes.Equal(data, markerContent(real)) {
			os.Remove(filepath.Join(dir, installMarker))
			os.Remove(dir)
		}
	}
}

// globEscape escapes the metacharacters of filepath.Match in s.
func globEscape(s string) string {
	if runtime.GOOS == "windows" {
		// '\\' separates paths there and cannot escape: a name with a
		// metacharacter is matched by none of the staged folders.
		if strings.ContainsAny(s, "*?[") {
			return "\x00"
		}
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// readMarker reads a marker file that is a regular file of at most 4 KiB.
func readMarker(p string) ([]byte, bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return nil, false
	}
	data, err := os.ReadFile(p)
	return data, err == nil
}

// leftByInterruptedInstall checks that venv, which holds installMarker, is
// a virtualenv an interrupted install created in this very place, and
// returns its real path for removal. It refuses (naming the folder and
// what to do) a symbolic link, a marker that is no regular file or names
// another folder (the virtualenv was moved or copied, or the file was
// written by something else), and a folder that is, or holds, a file
// system root or one of protected.
func leftByInterruptedInstall(venv string, protected []string) (string, error) {
	refuse := func(why, hint string) (string, error) {
		return "", &InstallError{Msg: fmt.Sprintf("the virtualenv %s carries %s, the mark of an interrupted mkrelease install, but %s: nothing installed or removed", venv, installMarker, why), Hint: hint}
	}
	fi, err := os.Lstat(venv)
	if err != nil {
		return "", &InstallError{Msg: "the virtualenv " + venv, Err: err}
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := filepath.EvalSymlinks(venv)
		return refuse("it is a symbolic link (to "+target+"), and mkrelease removes nothing through a link",
			"remove "+target+" yourself and install again, or pass that folder itself with --venv")
	}
	real, err := filepath.EvalSymlinks(venv)
	if err != nil {
		return "", &InstallError{Msg: "the virtualenv " + venv, Err: err}
	}
	data, ok := readMarker(filepath.Join(venv, installMarker))
	if !ok {
		return refuse("that is not a regular file of at most 4 KiB", "remove "+venv+" yourself if it is yours to remove, and install again")
	}
	if !bytes.Equal(data, markerContent(real)) {
		return refuse("it does not name this folder ("+real+"): it was moved or copied here, or written by something else",
			"mkrelease removes only a virtualenv it created in this place: remove "+venv+" yourself if it is yours to remove, and install again")
	}
	if why := protectedReason(real, protected); why != "" {
		return refuse(why, "name another folder with --venv")
	}
	return real, nil
}

// protectedReason says why the folder real must never be removed: it is a
// file system root, or it is or holds one of protected. It is empty when
// nothing forbids it.
func protectedReason(real string, protected []string) string {
	if filepath.Dir(real) == real {
		return "it is the root of a file system"
	}
	for _, p := range protected {
		if within(p, real) {
			return "it is (or holds) " + p
		}
	}
	return ""
}

// protectedDirs are the folders a recreated virtualenv must never be nor
// hold: the user's home folder, by os.UserHomeDir and by getenv, with
// symbolic links resolved.
func protectedDirs(getenv func(string) string) []string {
	var dirs []string
	add := func(p string) {
		if p == "" {
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if abs, err := filepath.Abs(p); err == nil {
			dirs = append(dirs, abs)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h)
	}
	if getenv != nil {
		add(getenv("HOME"))
		add(getenv("USERPROFILE"))
	}
	return dirs
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// removeVenv removes a virtualenv Install created, its marker last, so
// that a kill while it runs leaves the marker, and the next install
// finishes the removal. It removes nothing through a symbolic link: venv
// must be a folder itself.
func removeVenv(venv string) error {
	fi, err := os.Lstat(venv)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder (%v): nothing removed", venv, fi.Mode().Type())
	}
	entries, err := os.ReadDir(venv)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() != installMarker {
			if err := os.RemoveAll(filepath.Join(venv, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(filepath.Join(venv, installMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Remove(venv)
}
