//go:build unix

package pyfind

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestProbeEndsWhatItStarted: a candidate that hangs while a process it
// started holds its output open (a broken shim, a stand-in) does not keep
// Probe waiting past its context.
func TestProbeEndsWhatItStarted(t *testing.T) {
	py := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(py, []byte("#!/bin/sh\nsleep 30 &\nwait\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Probe(ctx, py); err == nil {
		t.Fatal("Probe of a candidate that never answers succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Probe returned %v after its context ended: what the candidate started kept it waiting", d.Round(time.Second))
	}
}
