//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// setGroup makes cmd lead a new process group (its id is cmd's pid) and,
// where the system has one, die with mkrelease (see dieWithParent).
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = 0
	dieWithParent(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to cmd's process group. A group already gone is
// not an error, as for os.Process.Kill after the process ended.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}
