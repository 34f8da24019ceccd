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
)

// wrapper is how steps are wrapped on Linux.
type wrapper struct {
	bwrap string // the bubblewrap binary, when sandbox.Isolated
	// pidns says bubblewrap starts in a PID namespace of mkrelease's
	// (see bwrapAttr).
	pidns bool
	// netns says the fallback may use a network namespace.
	netns bool
}

// namespaces are the namespaces bubblewrap gives each step.
var namespaces = []string{"user", "mount", "pid", "ipc", "uts", "network"}

// New probes what the host allows and returns an executor: the bubblewrap
// sandbox when bubblewrap is installed and the kernel lets it create its
// namespaces, else a network namespace alone, else nothing; [Sandbox]
// says which and why.
func New(ctx context.Context, o Options) *Executor {
	e := &Executor{}
	bwrap := o.Bwrap
	if bwrap == "" {
		bwrap, _ = exec.LookPath("bwrap")
	}
	var reason string
	if bwrap == "" {
		reason = "bubblewrap (bwrap) is not installed; scripts/bootstrap installs it (Debian: apt-get install bubblewrap)"
	} else if pidns, caveat, err := probeBwrap(ctx, bwrap); err != nil {
		reason = fmt.Sprintf("bubblewrap (%s) could not create the sandbox's namespaces: %v", bwrap, err)
	} else {
		e.bwrap, e.pidns = bwrap, pidns
		e.sandbox = Sandbox{Isolated: true, Network: true, Name: bwrapVersion(bwrap), Namespaces: namespaces, Caveat: caveat}
		return e
	}
	e.sandbox.Reason = reason
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

// probeBwrap finds how bubblewrap can run steps here: in a PID namespace
// of its own (pidns), else as it is, with the caveat that leaves. A host
// that refuses the extra namespace (a limit on nested user namespaces, a
// security module's policy) still gets the sandbox. err is why neither
// way works.
func probeBwrap(ctx context.Context, bwrap string) (pidns bool, caveat string, err error) {
	pidnsErr := probeBwrapWith(ctx, bwrap, true)
	if pidnsErr == nil {
		return true, "", nil
	}
	if err := probeBwrapWith(ctx, bwrap, false); err != nil {
		return false, "", err
	}
	return false, fmt.Sprintf("a step may outlive a mkrelease killed while bubblewrap sets up the step's sandbox: bubblewrap (%s) could not start in a PID namespace of mkrelease's (%v)", bwrap, pidnsErr), nil
}

// probeBwrapWith runs a trivial command in a sandbox made like a step's,
// bubblewrap started in a PID namespace of its own when pidns.
func probeBwrapWith(ctx context.Context, bwrap string, pidns bool) error {
	dir, err := os.MkdirTemp("", "mkrelease-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p := Paths{Workspace: filepath.Join(dir, "ws"), Out: filepath.Join(dir, "out"), Scratch: filepath.Join(dir, "scratch")}
	cache := filepath.Join(p.Scratch, "cache")
	for _, d := range []string{p.Workspace, p.Out, filepath.Join(p.Scratch, "tmp"), filepath.Join(p.Scratch, "home"), cache} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	v := insideView(p, cache, nil)
	args, err := bwrapArgs(Action{}, v, map[string]string{}, v.inside.Workspace)
	if err != nil {
		return err
	}
	return runProbe(ctx, bwrapAttr(pidns), bwrap, append(args, "/bin/sh", "-c", "exit 0")...)
}

// command returns the command that runs inner (argv) for action a.
func (e *Executor) command(a Action, v view, env map[string]string, dir string, inner []string) (*exec.Cmd, error) {
	closeInherited()
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
	cmd.SysProcAttr = bwrapAttr(e.pidns)
	procgroup.Group(cmd)
	return cmd, nil
}

// bwrapAttr, with pidns, starts bubblewrap as the first process of a PID
// namespace of its own; [procgroup.Group] makes mkrelease's death its own
// (a parent-death signal, set before it runs). When that process ends, the
// kernel ends every process of the namespace and of the step's namespace
// nested in it, whatever bubblewrap was doing. --die-with-parent alone
// leaves a window: the process bubblewrap clones into the step's
// namespaces binds its life to bubblewrap's only once the sandbox is set
// up, so a mkrelease killed during the set-up left a step that ran on
// unsupervised. What remains is the few system calls of Go's fork before
// the parent-death signal is set.
func bwrapAttr(pidns bool) *syscall.SysProcAttr {
	if !pidns {
		return nil
	}
	return procgroup.NamespacesAttr(syscall.CLONE_NEWPID)
}

// bwrapArgs composes bubblewrap's arguments for a step, up to and including
// the "--" before the command. The step sees, read-only, the system folders,
// the entries of /etc in etcFiles and the installation folders of its
// toolchains, all at their host paths; its own folders (v) at the fixed
// places [insideView] gives, writable but for the further sources; a /tmp
// and a /var/tmp of its own, empty at the start (its scratch's tmp folder);
// its own /proc, /dev (with a private /dev/shm) and account files; and
// nothing else of the host: not /run, the host's /tmp, /var or /home, the
// project, the action cache or the keys.
func bwrapArgs(a Action, v view, env map[string]string, dir string) ([]string, error) {
	args := []string{
		"--unshare-user", "--uid", sandboxUID, "--gid", sandboxUID,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try",
		"--hostname", stepHost,
		"--die-with-parent", "--new-session",
	}
	for _, d := range systemDirs {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			args = append(args, "--symlink", target, d)
		case st.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	for _, f := range etcFiles {
		args = append(args, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	// The step's own account and host: the same for every host user and
	// machine (the host's /etc/hosts names the machine).
	etc := filepath.Join(v.host.Scratch, "etc")
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, content string }{
		{"passwd", "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nbuilder:x:" + sandboxUID + ":" + sandboxUID + ":mkrelease build step:" + v.inside.Scratch + "/home:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		{"group", "root:x:0:\nbuilder:x:" + sandboxUID + ":\nnogroup:x:65534:\n"},
		{"hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t" + stepHost + "\n"},
	} {
		file := filepath.Join(etc, f.name)
		if err := os.WriteFile(file, []byte(f.content), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--ro-bind", file, "/etc/"+f.name)
	}
	// Its own /tmp and /var/tmp: one folder of its scratch, empty at the
	// start (the same folder as $TMPDIR). Mounted before anything that may
	// lie below /tmp on the host (a toolchain), so that nothing of the
	// host's /tmp is ever in view.
	tmp := filepath.Join(v.host.Scratch, "tmp")
	args = append(args, "--proc", "/proc", "--dev", "/dev", "--bind", tmp, "/tmp", "--bind", tmp, "/var/tmp")
	home, _ := os.UserHomeDir()
	for _, root := range toolRoots(a.Tools, env["PATH"], home) {
		args = append(args, "--ro-bind", root, root)
		// A toolchain's folder may hold its credentials (CARGO_HOME's
		// credentials.toml): they are not the step's to read.
		for _, name := range credentialFiles {
			if st, err := os.Lstat(filepath.Join(root, name)); err == nil && !st.IsDir() {
				args = append(args, "--ro-bind", "/dev/null", filepath.Join(root, name))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(v.host.Sources)) {
		args = append(args, "--ro-bind", v.host.Sources[name], v.inside.Sources[name])
	}
	args = append(args, "--bind", v.host.Workspace, v.inside.Workspace, "--bind", v.host.Out, v.inside.Out,
		"--bind", v.host.Scratch, v.inside.Scratch, "--bind", v.cache, v.insideCache)
	for i, c := range v.caches {
		args = append(args, "--bind", c, v.insideCaches[i])
	}
	// Nothing but the step's own folders stays writable: not the root, nor
	// the folders that hold the mount points of the step's own.
	args = append(args, "--remount-ro", "/", "--chdir", dir, "--")
	return args, nil
}

// netnsAttr is the fallback's isolation: a network namespace, and a PID
// namespace so that the step's processes end with its first one (which
// [procgroup.Group] makes end with mkrelease).
func netnsAttr() *syscall.SysProcAttr {
	return procgroup.NamespacesAttr(syscall.CLONE_NEWNET | syscall.CLONE_NEWPID)
}
