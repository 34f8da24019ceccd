package procgroup

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/proctest"
)

// The test binary doubles as a stand-in for mkrelease: it starts a
// command in a group of its own, prints the command's pid and waits; or
// it is one of the helpers of containHelper.
func TestMain(m *testing.M) {
	switch h := os.Getenv("PROCGROUP_TEST_HELPER"); h {
	case "":
	case "parent":
		cmd := exec.Command("sleep", "600")
		Group(cmd)
		if err := cmd.Start(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		cmd.Wait()
		os.Exit(0)
	default:
		os.Exit(containHelper(h))
	}
	os.Exit(m.Run())
}

// TestCommandDiesWithParent: a command in a group of its own, which
// signals to the parent's group never reach, still ends when its parent is
// killed with SIGKILL.
func TestCommandDiesWithParent(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), "PROCGROUP_TEST_HELPER=parent")
	child := startForPid(t, parent)
	parent.Process.Signal(syscall.SIGKILL)
	parent.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for proctest.Running(child) {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatal("the command outlived its SIGKILLed parent by 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
