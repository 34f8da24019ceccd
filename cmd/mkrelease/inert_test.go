package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputIsInert: what mkrelease prints is inert on a terminal. A path
// that holds escape sequences (as a case id or a wheel's metadata may) is
// named in verify's refusal escaped, on stdout and stderr alike. The
// control runs the same command with raw streams: the sequences are
// there, so the check can fail.
func TestOutputIsInert(t *testing.T) {
	evil := filepath.Join(t.TempDir(), "denied\x1b[1A\x1b[2K\x1b[32mpublished\rok")
	args := []string{"verify", evil}

	var stdout, stderr bytes.Buffer
	code := runInert(context.Background(), secrets{}, strings.NewReader(""), &stdout, &stderr, args)
	if code == 0 {
		t.Fatalf("verify of a missing path exited 0")
	}
	all := stdout.String() + stderr.String()
	if strings.ContainsAny(all, "\x1b\r") {
		t.Errorf("mkrelease printed raw control characters:\n%q", all)
	}
	if !strings.Contains(all, `denied\x1b[1A\x1b[2K\x1b[32mpublished\rok`) {
		t.Errorf("the refusal does not name the path escaped:\n%s", all)
	}

	// The control.
	var rawOut, rawErr bytes.Buffer
	f := &Factory{IO: &IOStreams{In: strings.NewReader(""), Out: &rawOut, ErrOut: &rawErr}, Getenv: os.Getenv, LookupEnv: os.LookupEnv}
	run(context.Background(), f, args)
	if !strings.Contains(rawOut.String()+rawErr.String(), "\x1b[2K") {
		t.Fatalf("the control printed no escape sequence: the test proves nothing:\n%q", rawOut.String()+rawErr.String())
	}
}
