//go:build !linux

package executor

import (
	"context"
	"os/exec"
	"runtime"
)

// New returns an executor. Outside Linux there is no sandbox: steps run
// with the composed environment alone, and [Sandbox] says so.
func New(ctx context.Context, o Options) *Executor {
	return &Executor{sandbox: Sandbox{Reason: "build steps are sandboxed on Linux only (bubblewrap); on " + runtime.GOOS + " they run with the composed environment alone"}}
}

// command returns the command that runs inner (argv) for action a.
func (e *Executor) command(a Action, p Paths, env map[string]string, dir string, inner []string) (*exec.Cmd, error) {
	cmd := exec.Command(inner[0], inner[1:]...)
	cmd.Dir = dir
	return cmd, nil
}

// killGroup kills the command.
func killGroup(cmd *exec.Cmd) {
	cmd.Process.Kill()
}
