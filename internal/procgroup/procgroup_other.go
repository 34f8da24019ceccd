//go:build !unix && !windows

package procgroup

import (
	"errors"
	"os/exec"
)

// setGroup does nothing: this platform has no process groups.
func setGroup(cmd *exec.Cmd) {}

// killGroup kills cmd's own process only: without process groups the
// processes it started cannot be found, and the error says so.
func killGroup(cmd *exec.Cmd) error {
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	return errors.New("only the process itself was killed: this platform has no process groups")
}
