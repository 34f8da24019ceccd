package executor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/sandbox"
)

// sandboxExec is macOS's command that runs a program under a Seatbelt
// profile (deprecated by Apple, still shipped and working).
const sandboxExec = "/usr/bin/sandbox-exec"

// seatbeltProfile lets a step do everything but use the network: no
// connection, no listening, no name lookup (the resolver is a socket too).
// Unix sockets are allowed only inside the step's scratch folder (its HOME
// and TMPDIR), where the step's own processes may talk to each other; a
// host daemon's socket (ssh-agent, docker) is refused. The folder is given
// twice, as the step sees it (SCRATCH) and with its links resolved
// (SCRATCH_REAL, /private/var for /var), since Seatbelt may match either.
const seatbeltProfile = `(version 1)
(allow default)
(deny network*)
(allow network-bind network-inbound
  (local unix-socket (subpath (param "SCRATCH")))
  (local unix-socket (subpath (param "SCRATCH_REAL"))))
(allow network-outbound
  (remote unix-socket (subpath (param "SCRATCH")))
  (remote unix-socket (subpath (param "SCRATCH_REAL"))))
`

// wrapper is how steps are wrapped on macOS.
type wrapper struct {
	seatbelt string // sandbox-exec, when it cuts steps off the network
}

// macReason is what a step under sandbox-exec is not protected from.
const macReason = "on macOS steps run with sandbox-exec denying network only; they see the whole file system (the user's home included) and the user's other processes, with no namespaces"

// New returns an executor: steps run under sandbox-exec with
// [seatbeltProfile] when /usr/bin/sandbox-exec exists and applies it, else
// with the composed environment alone; [Sandbox] says which and why.
// There is no sandbox on macOS like Linux's bubblewrap: [Sandbox.Isolated]
// is always false, [Sandbox.Network] true with sandbox-exec.
func New(ctx context.Context, o Options) *Executor {
	e := &Executor{}
	if _, err := os.Stat(sandboxExec); err != nil {
		e.sandbox.Reason = "on macOS steps would run under sandbox-exec to deny them the network, but " + sandboxExec + " is missing: they run with the composed environment alone, network included"
		return e
	}
	if err := probeSeatbelt(ctx); err != nil {
		e.sandbox.Reason = fmt.Sprintf("on macOS steps would run under sandbox-exec to deny them the network, but it refused the profile (%v): they run with the composed environment alone, network included", err)
		return e
	}
	e.seatbelt = sandboxExec
	e.sandbox = Sandbox{Network: true, Reason: macReason}
	return e
}

// probeSeatbelt runs a trivial command under the step profile.
func probeSeatbelt(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "mkrelease-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args, err := seatbeltArgs(dir)
	if err != nil {
		return err
	}
	return sandbox.RunProbe(ctx, nil, sandboxExec, append(args, "/bin/sh", "-c", "exit 0")...)
}

// seatbeltArgs are sandbox-exec's arguments for a step whose scratch
// folder is scratch, up to the command.
func seatbeltArgs(scratch string) ([]string, error) {
	abs, err := filepath.Abs(scratch)
	if err != nil {
		return nil, fmt.Errorf("resolve the scratch folder for sandbox-exec: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolve the scratch folder for sandbox-exec: %w", err)
	}
	return []string{"-D", "SCRATCH=" + abs, "-D", "SCRATCH_REAL=" + real, "-p", seatbeltProfile}, nil
}

// command returns the command that runs inner (argv) for action a: under
// sandbox-exec when it applies, in a process group of its own. Unlike on
// Linux nothing kills the step if mkrelease itself is killed (macOS has no
// parent-death signal); a cancel or timeout kills the whole group.
func (e *Executor) command(a Action, v view, env map[string]string, dir string, inner []string) (*exec.Cmd, error) {
	sandbox.CloseInherited()
	var cmd *exec.Cmd
	if e.seatbelt != "" {
		args, err := seatbeltArgs(v.host.Scratch)
		if err != nil {
			return nil, err
		}
		cmd = exec.Command(e.seatbelt, append(args, inner...)...)
	} else {
		cmd = exec.Command(inner[0], inner[1:]...)
	}
	cmd.Dir = dir
	procgroup.Group(cmd)
	return cmd, nil
}
