package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// laneHost is a sandboxed lane's host name, whatever the machine's.
const laneHost = "mkrelease-lane"

// laneSandbox is how the lanes of one run are isolated.
//
// A verifier lane runs code mkrelease does not control (the verifier, the
// wheels under test and whatever they load) on the machine that holds the
// project and its signing keys, so on Linux every command of a lane runs
// in a bubblewrap sandbox (package sandbox), as build steps do. It sees,
// read-only, the system folders, the base interpreter its virtualenv was
// made from (that installation's prefix alone, even where it lies in the
// user's home), the virtualenv (pip ran before the lane; Python writes no
// bytecode there, PYTHONDONTWRITEBYTECODE being set) and the verifier
// sources; writable, the lane's own folder (its HOME, TMPDIR, working
// folder and cases file); a /tmp of its own. All of them are at their host
// paths: a virtualenv's scripts and pyvenv.cfg name it and its interpreter
// by path. It does not see the project folder, the keys, the user's home,
// the caches, other processes or host sockets, and has no network unless
// the lane declares network = true. Each command runs in PID namespaces
// of its own that end with it (bubblewrap's, inside one that bubblewrap
// starts in, see [sandbox.Bwrap.Attr]): whatever a worker started ends
// when it does or is stopped, as procgroup.Containment otherwise ensures.
//
// Where there is no sandbox (no bubblewrap, a kernel that refuses its
// namespaces, another system than Linux), lanes run as the user, with a
// warning, and crossover workers in a procgroup.Containment. The run
// identity records which it was ([store.Isolation]).
type laneSandbox struct {
	// bwrap is the bubblewrap the lanes run in; its Path is empty when
	// they run without a sandbox, for reason.
	bwrap  sandbox.Bwrap
	reason string
	// shown are the host paths every lane sees read-only besides the
	// system folders: the interpreter's, the verifier.
	shown []string
	// etc holds each lane's account files (not shown to the lanes).
	etc string
}

// newLaneSandbox finds how the lanes of the run can be isolated: in the
// sandbox of the bubblewrap at bwrapPath (empty: "bwrap" on PATH) when it
// works here, showing the interpreter of the virtualenv venv and the
// verifier folder (when there is one), and never a whole folder of
// protected (the user's home, the project); else not at all, with the
// reason. It logs which.
func newLaneSandbox(ctx context.Context, log *slog.Logger, bwrapPath, venv, verifier, etc string, protected []string) (laneSandbox, error) {
	bw, err := sandbox.Probe(ctx, bwrapPath)
	if err != nil {
		log.Warn("verifier lanes run NOT sandboxed: each can read whatever this user can (the project, its keys, the home folder), see other processes and use the network", "reason", err.Error())
		return laneSandbox{reason: err.Error()}, nil
	}
	shown, err := interpreterPaths(ctx, venv, protected)
	if err != nil {
		return laneSandbox{}, fmt.Errorf("evidence: the lanes' sandbox: %w", err)
	}
	if _, err := os.Stat(verifier); err == nil {
		shown = append(shown, verifier)
	}
	log.Info("verifier lanes run sandboxed", "sandbox", bw.Version, "namespaces", strings.Join(sandbox.Namespaces(false), ","))
	if bw.Caveat != "" {
		log.Warn("the lanes' sandbox is weaker here", "caveat", bw.Caveat)
	}
	return laneSandbox{bwrap: bw, shown: shown, etc: etc}, nil
}

// sandboxed reports whether the lanes run in the sandbox.
func (s laneSandbox) sandboxed() bool { return s.bwrap.Path != "" }

// lane returns the sandbox of lane l, whose virtualenv is venv and whose
// own folder is own (HOME is home below it), or nil without a sandbox.
func (s laneSandbox) lane(l config.Lane, venv, own, home string) *laneBox {
	if !s.sandboxed() {
		return nil
	}
	var mounts []sandbox.Mount
	for _, p := range append(slices.Clone(s.shown), venv) {
		mounts = append(mounts, sandbox.Mount{Host: p, Inside: p})
	}
	mounts = append(mounts, sandbox.Mount{Host: own, Inside: own, Writable: true})
	return &laneBox{bwrap: s.bwrap, spec: sandbox.Spec{
		Hostname: laneHost, Account: "verifier", Gecos: "mkrelease verifier lane", Home: home,
		Etc: filepath.Join(s.etc, l.Name), Network: l.Network, Mounts: mounts,
	}}
}

// isolation is what the run identity records of s for lanes; a reason is
// sanitised as any recorded text. The zero laneSandbox (no lane ran)
// records nothing.
func (s laneSandbox) isolation(lanes []config.Lane, private sanitize.Private) store.Isolation {
	switch {
	case !s.sandboxed() && s.reason == "":
		return store.Isolation{}
	case !s.sandboxed():
		return store.Isolation{Level: store.IsolationNone, Reason: private.String(s.reason)}
	}
	iso := store.Isolation{Level: store.IsolationSandbox, Sandbox: s.bwrap.Version, Namespaces: sandbox.Namespaces(false)}
	for _, l := range lanes {
		if l.Network {
			iso.NetworkLanes = append(iso.NetworkLanes, l.Name)
		}
	}
	return iso
}

// laneBox is the sandbox one lane's commands run in.
type laneBox struct {
	bwrap sandbox.Bwrap
	spec  sandbox.Spec
}

// command returns the command that runs argv in the sandbox, in the
// folder dir (as the lane sees it), killed whole when ctx ends.
func (b *laneBox) command(ctx context.Context, argv []string, dir string) (*exec.Cmd, error) {
	spec := b.spec
	spec.Dir = dir
	args, err := sandbox.Args(spec)
	if err != nil {
		return nil, fmt.Errorf("prepare the lane's sandbox: %w", err)
	}
	cmd := exec.CommandContext(ctx, b.bwrap.Path, append(args, argv...)...)
	cmd.SysProcAttr = b.bwrap.Attr()
	procgroup.KillOnCancel(cmd) // keeps the attributes, adds the group and the parent-death signal
	return cmd, nil
}

// interpreterScript prints what a virtualenv's python needs of its base
// installation: the prefixes, and, for a prefix that may not be shown
// whole, the standard library and the shared libpython by both its names
// (the link the build names and the file the program loads: without the
// latter the dynamic linker would load the system's libpython).
const interpreterScript = `import json, os, sys, sysconfig
v = sysconfig.get_config_vars()
libs = [os.path.join(v["LIBDIR"], v[n]) for n in ("LDLIBRARY", "INSTSONAME") if v.get("Py_ENABLE_SHARED") and v.get("LIBDIR") and v.get(n)]
print(json.dumps({"prefixes": [sys.base_prefix, sys.base_exec_prefix],
                  "narrow": [p for p in [sysconfig.get_path("stdlib"), sysconfig.get_path("platstdlib")] + libs if p]}))
`

// interpreterPaths returns the host paths a sandboxed lane must see to
// run the python of the virtualenv venv, outside the system folders: the
// prefixes of its base installation (sys.base_prefix), and the files on
// the way from the virtualenv's python to the program it links to. A
// prefix that is a folder of protected, or holds one (Python installed
// into the home folder itself), is not shown whole: only its standard
// library and shared libpython are.
func interpreterPaths(ctx context.Context, venv string, protected []string) ([]string, error) {
	python := bundle.VenvPython(venv)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-I", "-c", interpreterScript)
	cmd.Env = []string{"LC_ALL=C.UTF-8"}
	procgroup.KillOnCancel(cmd)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ask %s where its installation is: %w", python, err)
	}
	var found struct{ Prefixes, Narrow []string }
	if err := json.Unmarshal(out, &found); err != nil {
		return nil, fmt.Errorf("ask %s where its installation is: %w (it said %.200q)", python, err, out)
	}
	var paths []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		p = filepath.Clean(p)
		if !sandbox.InSystemDirs(p) && !sandbox.Within(p, venv) {
			paths = append(paths, p)
		}
	}
	for _, p := range found.Prefixes {
		if exposes(p, protected) {
			for _, n := range found.Narrow {
				add(n)
			}
			continue
		}
		add(p)
	}
	// The virtualenv's python links to the base program, perhaps through
	// further links: each must resolve in the sandbox.
	p := python
	for range 40 {
		target, err := os.Readlink(p)
		if err != nil {
			break
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
		add(p)
	}
	return outermost(paths), nil
}

// exposes reports whether showing folder p would show one of protected
// whole: p is one of them or holds one, by its path or with links
// resolved.
func exposes(p string, protected []string) bool {
	cands := []string{filepath.Clean(p)}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		cands = append(cands, r)
	}
	for _, c := range cands {
		for _, d := range protected {
			if d != "" && sandbox.Within(d, c) {
				return true
			}
		}
	}
	return false
}

// outermost sorts paths and drops those that lie inside another, so that
// each is shown once and a folder before what lies below it.
func outermost(paths []string) []string {
	slices.Sort(paths)
	var out []string
	for _, p := range paths {
		if len(out) > 0 && sandbox.Within(p, out[len(out)-1]) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// protectedDirs are the folders a lane's sandbox never shows whole: the
// user's home (as the system and HOME name it), the project folder, the
// user's cache folder and the temporary folder (which holds the run's own
// folders), each also with its links resolved.
func protectedDirs(getenv func(string) string, project string) []string {
	var dirs []string
	add := func(p string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		dirs = append(dirs, filepath.Clean(p))
		if r, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, r)
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		add(h)
	}
	if getenv != nil {
		add(getenv("HOME"))
	}
	if c, err := os.UserCacheDir(); err == nil {
		add(c)
	}
	add(os.TempDir())
	add(project)
	return dirs
}
