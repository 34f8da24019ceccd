package procgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// setGroup starts cmd in a new console process group, so that a Ctrl+C
// meant for mkrelease is not also delivered to it (mkrelease stops it
// itself), as a process group does on Unix.
func setGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= syscall.CREATE_NEW_PROCESS_GROUP
}

// killGroup kills cmd's process tree with taskkill /T /F. Windows has no
// process groups to kill as one: taskkill follows parent process ids, so
// a process whose parent already exited is not reached. When taskkill
// cannot run or fails, cmd's own process is still killed, and the error
// says the processes it started may remain.
func killGroup(cmd *exec.Cmd) error {
	taskkill := "taskkill.exe"
	if root := os.Getenv("SystemRoot"); root != "" {
		taskkill = filepath.Join(root, "System32", "taskkill.exe")
	}
	tk := exec.Command(taskkill, "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	var out bytes.Buffer
	tk.Stdout, tk.Stderr = &out, &out
	tkErr := tk.Run()
	if tkErr == nil {
		return nil
	}
	switch err := cmd.Process.Kill(); {
	case errors.Is(err, os.ErrProcessDone):
		return nil // it had ended: taskkill found nothing to kill
	case err != nil:
		return fmt.Errorf("taskkill: %v: %s; kill: %w", tkErr, strings.TrimSpace(out.String()), err)
	}
	return fmt.Errorf("only the process itself was killed, the processes it started may remain (taskkill: %w: %s)", tkErr, strings.TrimSpace(out.String()))
}
