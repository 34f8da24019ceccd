package executor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// wrapper is how steps are wrapped on Linux.
type wrapper struct {
	bwrap string // the bubblewrap binary, when sandbox.Isolated
	// pidns says bubblewrap starts in a PID namespace of mkrelease's
	// (see [sandbox.Bwrap.Attr]).
	pidns bool
	// netns says the fallback may use a network namespace.
	netns bool
}

// New probes what the host allows and returns an executor: the bubblewrap
// sandbox when bubblewrap is installed and the kernel lets it create its
// namespaces, else a network namespace alone, else nothing; [Sandbox]
// says which and why.
func New(ctx context.Context, o Options) *Executor {
	e := &Executor{}
	bw, err := sandbox.Probe(ctx, o.Bwrap)
	if err == nil {
		e.bwrap, e.pidns = bw.Path, bw.PIDNamespace
		e.sandbox = Sandbox{Isolated: true, Network: true, Name: bw.Version, Namespaces: sandbox.Namespaces(false), Caveat: bw.Caveat}
		return e
	}
	e.sandbox.Reason = err.Error()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "exit 0")
	cmd.SysProcAttr = netnsAttr()
	procgroup.Group(cmd)
	cmd.Env = []string{}
	if err := cmd.Run(); err != nil {
		e.sandbox.Reason += fmt.Sprintf("; the kernel refused a network namespace too (%v)", err)
		return e
	}
	e.netns = true
	e.sandbox.Network = true
	return e
}

// command returns the command that runs inner (argv) for action a.
func (e *Executor) command(a Action, v view, env map[string]string, dir string, inner []string) (*exec.Cmd, error) {
	sandbox.CloseInherited()
	if !e.sandbox.Isolated {
		cmd := exec.Command(inner[0], inner[1:]...)
		cmd.Dir = dir
		if e.netns {
			cmd.SysProcAttr = netnsAttr()
		}
		procgroup.Group(cmd)
		return cmd, nil
	}
	args, err := bwrapArgs(a, v, env, dir)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(e.bwrap, append(args, inner...)...)
	cmd.SysProcAttr = sandbox.Bwrap{PIDNamespace: e.pidns}.Attr()
	procgroup.Group(cmd)
	return cmd, nil
}

// bwrapArgs composes bubblewrap's arguments for a step, up to and including
// the "--" before the command (see [sandbox.Args]). Besides the system
// folders, the step sees, read-only, the installation folders of its
// toolchains at their host paths; its own folders (v) at the fixed places
// [insideView] gives, writable but for the further sources; and a /tmp
// and a /var/tmp of its own, empty at the start (its scratch's tmp
// folder, the same folder as $TMPDIR). Nothing else of the host: not
// /run, the host's /tmp, /var or /home, the project, the action cache or
// the keys.
func bwrapArgs(a Action, v view, env map[string]string, dir string) ([]string, error) {
	var mounts []sandbox.Mount
	home, _ := os.UserHomeDir()
	for _, root := range toolRoots(a.Tools, env["PATH"], home) {
		mounts = append(mounts, sandbox.Mount{Host: root, Inside: root})
		// A toolchain's folder may hold its credentials (CARGO_HOME's
		// credentials.toml): they are not the step's to read.
		for _, name := range credentialFiles {
			if st, err := os.Lstat(filepath.Join(root, name)); err == nil && !st.IsDir() {
				mounts = append(mounts, sandbox.Mount{Host: "/dev/null", Inside: filepath.Join(root, name)})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.host.Sources)) {
		mounts = append(mounts, sandbox.Mount{Host: v.host.Sources[name], Inside: v.inside.Sources[name]})
	}
	mounts = append(mounts,
		sandbox.Mount{Host: v.host.Workspace, Inside: v.inside.Workspace, Writable: true},
		sandbox.Mount{Host: v.host.Out, Inside: v.inside.Out, Writable: true},
		sandbox.Mount{Host: v.host.Scratch, Inside: v.inside.Scratch, Writable: true},
		sandbox.Mount{Host: v.cache, Inside: v.insideCache, Writable: true})
	for i, c := range v.caches {
		mounts = append(mounts, sandbox.Mount{Host: c, Inside: v.insideCaches[i], Writable: true})
	}
	return sandbox.Args(sandbox.Spec{
		Hostname: stepHost, Account: "builder", Gecos: "mkrelease build step", Home: v.inside.Scratch + "/home",
		Etc: filepath.Join(v.host.Scratch, "etc"), Tmp: filepath.Join(v.host.Scratch, "tmp"), Mounts: mounts, Dir: dir,
	})
}

// netnsAttr is the fallback's isolation: a network namespace, and a PID
// namespace so that the step's processes end with its first one (which
// [procgroup.Group] makes end with mkrelease).
func netnsAttr() *syscall.SysProcAttr {
	return procgroup.NamespacesAttr(syscall.CLONE_NEWNET | syscall.CLONE_NEWPID)
}
