package workdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a run that creates a folder and is killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("WORKDIR_TEST_HOLD"); parent != "" {
		d, err := Create(parent, "run-*")
		if err != nil {
			os.Exit(3)
		}
		os.WriteFile(filepath.Join(parent, "ready"), []byte(d.Path), 0o644)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSweepRemovesWhatADeadRunLeft(t *testing.T) {
	parent := t.TempDir()
	live, err := Create(parent, "run-*")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Remove()

	// A run in another process, killed with SIGKILL while it holds its folder.
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "WORKDIR_TEST_HOLD="+parent)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dead string
	for i := 0; i < 200 && dead == ""; i++ {
		if b, err := os.ReadFile(filepath.Join(parent, "ready")); err == nil {
			dead = string(b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if dead == "" {
		cmd.Process.Kill()
		t.Fatal("the helper run never created its folder")
	}
	// While it lives, its folder is not swept.
	if removed, err := Sweep(parent, "run-"); err != nil || len(removed) != 0 {
		t.Fatalf("Sweep while both runs live = %v, %v; want nothing removed", removed, err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	other := filepath.Join(parent, "other-dir")
	os.Mkdir(other, 0o755)
	removed, err := Sweep(parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != dead {
		t.Errorf("Sweep removed %v, want just the dead run's %s", removed, dead)
	}
	for _, p := range []string{live.Path, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

func TestCreateAndRemove(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "new")
	d, err := Create(parent, ".dist.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(d.Path)
	if err != nil || st.Mode().Perm() != 0o755 || !strings.HasPrefix(filepath.Base(d.Path), ".dist.tmp-") {
		t.Fatalf("folder %s: %v %v", d.Path, st, err)
	}
	// A released folder is left over: Sweep takes it.
	d.Close()
	if removed, _ := Sweep(parent, ".dist.tmp-"); len(removed) != 1 {
		t.Errorf("Sweep after Close removed %v", removed)
	}
	if removed, err := Sweep(filepath.Join(parent, "absent"), "x"); err != nil || removed != nil {
		t.Errorf("Sweep of a missing folder = %v, %v", removed, err)
	}
}
