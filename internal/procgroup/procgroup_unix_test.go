//go:build unix

package procgroup

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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

// TestCancelDoesNotWaitForAnEscapee: a process that left the command's
// group (setsid) cannot be killed with it, and holds the command's output
// open; once the context ended, Wait stops reading after WaitDelay, which
// KillOnCancel sets, instead of waiting for that process to end.
func TestCancelDoesNotWaitForAnEscapee(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid here")
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `setsid sleep 60 & echo $! > "$0.tmp" && mv "$0.tmp" "$0"; wait`, pidFile)
	KillOnCancel(cmd)
	if cmd.WaitDelay != WaitDelay {
		t.Fatalf("WaitDelay = %v, want %v", cmd.WaitDelay, WaitDelay)
	}
	var out bytes.Buffer
	cmd.Stdout = &out // read by a goroutine of exec's, which Wait waits for
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var escapee int
	for deadline := time.Now().Add(10 * time.Second); escapee == 0; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			escapee, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the escapee did not start within 10 s")
		}
	}
	defer syscall.Kill(escapee, syscall.SIGKILL)
	cancel()
	start := time.Now()
	cmd.Wait()
	if d := time.Since(start); d > WaitDelay+10*time.Second {
		t.Errorf("Wait returned %v after the cancel: it waited for the escapee", d.Round(time.Second))
	}
	// A WaitDelay the caller set is kept.
	own := exec.CommandContext(ctx, "true")
	own.WaitDelay = time.Second
	if KillOnCancel(own); own.WaitDelay != time.Second {
		t.Errorf("KillOnCancel replaced a WaitDelay of 1s with %v", own.WaitDelay)
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
