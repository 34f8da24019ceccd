//go:build !linux && !darwin

package executor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"

	"github.com/mkrelease/mkrelease/internal/procgroup"
)

// wrapper is how steps run here: under the POSIX shell found by New.
type wrapper struct {
	// shell replaces /bin/sh where there is none (Windows): the sh on
	// PATH, as Git for Windows and MSYS2 provide; "" when there is none.
	shell string
}

// New returns an executor. Outside Linux and macOS there is no isolation
// at all: steps run with the composed environment alone, network and the
// whole file system included, and [Sandbox] says so. Steps run under a
// POSIX shell: /bin/sh, else (Windows) the sh on PATH.
func New(ctx context.Context, o Options) *Executor {
	e := &Executor{sandbox: Sandbox{Reason: "on " + runtime.GOOS + " build steps run with no isolation at all (no sandbox, network included): only the composed environment is theirs; bubblewrap isolates them on Linux, sandbox-exec cuts their network on macOS"}}
	e.shell = "/bin/sh"
	if _, err := os.Stat(e.shell); err != nil {
		e.shell, _ = exec.LookPath("sh")
	}
	return e
}

// command returns the command that runs inner (argv, whose inner[0] is
// /bin/sh) for action a, with the shell New found, in a process group of
// its own (on Windows, killed as a process tree).
func (e *Executor) command(a Action, v view, env map[string]string, dir string, inner []string) (*exec.Cmd, error) {
	name := inner[0]
	if name == "/bin/sh" {
		if e.shell == "" {
			return nil, errors.New("build steps run under a POSIX shell, and there is neither /bin/sh nor an sh on PATH here (on Windows, Git for Windows or MSYS2 provides one)")
		}
		name = e.shell
	}
	cmd := exec.Command(name, inner[1:]...)
	cmd.Dir = dir
	procgroup.Group(cmd)
	return cmd, nil
}
