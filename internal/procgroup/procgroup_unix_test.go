//go:build unix

package procgroup

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancelKillsTheGroup starts a shell that starts a child and waits;
// ending the context must kill the child too, not only the shell.
func TestCancelKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", "sleep 60 & echo $!; wait")
	KillOnCancel(cmd)
	cmd.WaitDelay = 5 * time.Second
	child := startForPid(t, cmd)
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("the cancelled command succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatal("the shell's child survived the cancel")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestKillAfterExitIsNotAnError(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "exit 0")
	Group(cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if err := Kill(cmd); err != nil {
		t.Errorf("kill after exit: %v", err)
	}
	if err := Kill(exec.Command("true")); err == nil || errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill of a command never started: %v", err)
	}
}

// startForPid starts cmd, which prints the pid of a process it started as
// its first line, and returns that pid; a cmd that prints none is killed.
func startForPid(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, convErr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || convErr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the pid %s printed %q: %v %v", cmd.Path, line, err, convErr)
	}
	return pid
}
