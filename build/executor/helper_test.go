package executor

import (
	"os"
	"os/exec"
)

func runHelperOnHost(exe, addr string) (string, error) {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "EXECUTOR_TEST_HELPER=dial", "EXECUTOR_TEST_ADDR="+addr)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
