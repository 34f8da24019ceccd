// Package procgroup runs a command so that stopping it stops everything it
// started: on Unix the command leads a process group of its own and the
// whole group is killed; on Windows the command's process tree is killed
// (taskkill /T), which reaches the processes it started unless they have
// been reparented or started detached. On Linux the command also dies
// with mkrelease, SIGKILL included, and a [Containment] confines it to a
// PID namespace of its own, which a process that left its group cannot
// leave.
package procgroup

import (
	"fmt"
	"os/exec"
	"time"
)

// Group makes cmd (not yet started) start in a process group of its own,
// for [Kill]. Any SysProcAttr already set is kept, with the group added.
func Group(cmd *exec.Cmd) {
	setGroup(cmd)
}

// KillOnCancel is [Group], and makes the end of cmd's context [Kill] the
// whole group rather than cmd's process alone. A process that left the
// group (setsid) and still holds cmd's output open would keep Wait
// waiting for it, so unless cmd.WaitDelay is set, KillOnCancel sets it to
// [WaitDelay]. cmd must come from exec.CommandContext (exec refuses a
// Cancel on any other command).
func KillOnCancel(cmd *exec.Cmd) {
	setGroup(cmd)
	cmd.Cancel = func() error { return Kill(cmd) }
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = WaitDelay
	}
}

// WaitDelay is how long, after its context ended, a command that
// [KillOnCancel] set up still has its output read.
const WaitDelay = 5 * time.Second

// Kill kills the started cmd and every process of its group (on Windows,
// of its process tree).
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return fmt.Errorf("kill %s: not started", cmd.Path)
	}
	if err := killGroup(cmd); err != nil {
		return fmt.Errorf("kill %s (pid %d) and the processes it started: %w", cmd.Path, cmd.Process.Pid, err)
	}
	return nil
}
