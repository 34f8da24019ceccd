package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
	"time"
)

// A live process is Running and found by its marker; once it has ended
// (reaped or not) it is neither.
func TestRunningAndWithMarker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux's /proc")
	}
	if !Running(os.Getpid()) {
		t.Fatal("the test itself is not Running")
	}
	const marker = "617.25"
	cmd := exec.Command("sleep", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !Running(pid) || !slices.Contains(WithMarker(marker), pid) {
		t.Fatalf("a live sleep: Running %v, WithMarker %v", Running(pid), WithMarker(marker))
	}
	cmd.Process.Kill()
	// Not yet reaped: a zombie, which runs no longer.
	for deadline := time.Now().Add(5 * time.Second); Running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped process is still Running after 5 s")
		}
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
		t.Fatalf("the zombie is gone before it was reaped: %v", err)
	}
	if got := WithMarker(marker); slices.Contains(got, pid) {
		t.Errorf("WithMarker lists the zombie %d", pid)
	}
	cmd.Wait()
	if Running(pid) {
		t.Error("a reaped process is Running")
	}
}
