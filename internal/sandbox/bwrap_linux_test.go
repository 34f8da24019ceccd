package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestProbe: a bubblewrap that works is found with its version; one that
// cannot run, or none, is refused with the reason and the remedy.
func TestProbe(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err == nil {
		b, err := Probe(context.Background(), "")
		if err != nil {
			t.Skipf("bubblewrap cannot run here: %v", err)
		}
		if !strings.HasPrefix(b.Version, "bubblewrap ") || b.Path == "" {
			t.Errorf("Probe found %+v", b)
		}
	}
	if _, err := Probe(context.Background(), "/bin/false"); err == nil || !strings.Contains(err.Error(), "bubblewrap (/bin/false) could not create the sandbox's namespaces") {
		t.Errorf("a bubblewrap that fails: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Probe(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") {
		t.Errorf("no bubblewrap: %v", err)
	}
}

// TestProbeWithoutPIDNamespace: a bubblewrap that cannot start as the
// first process of a PID namespace still makes sandboxes, with a caveat
// that names why.
func TestProbeWithoutPIDNamespace(t *testing.T) {
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("needs bubblewrap")
	}
	if _, err := Probe(context.Background(), real); err != nil {
		t.Skipf("bubblewrap cannot run here: %v", err)
	}
	fake := filepath.Join(t.TempDir(), "bwrap")
	script := "#!/bin/sh\nif [ $$ -eq 1 ]; then echo 'no PID namespace for you' >&2; exit 1; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := Probe(context.Background(), fake)
	if err != nil || b.PIDNamespace || !strings.Contains(b.Caveat, "no PID namespace for you") || b.Attr() != nil {
		t.Errorf("Probe = %+v, %v: want the sandbox without the PID namespace, and why", b, err)
	}
}
