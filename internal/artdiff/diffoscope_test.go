package artdiff

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeDiffoscope puts a shell script called diffoscope first on PATH.
func fakeDiffoscope(t *testing.T, script string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell script")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "diffoscope"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func twoFiles(t *testing.T) (string, string) {
	dir := t.TempDir()
	return write(t, dir, "a/RELEASE_NOTES.md", []byte("one\ntwo\n")), write(t, dir, "b/RELEASE_NOTES.md", []byte("one\nthree\n"))
}

func TestDiffoscopeNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	a, b := twoFiles(t)
	report, ok, err := Diffoscope(context.Background(), a, b, 1000)
	if report != "" || ok || err != nil {
		t.Fatalf("Diffoscope = %q, %v, %v; want not installed", report, ok, err)
	}
}

func TestDiffoscopeInstalled(t *testing.T) {
	if _, err := exec.LookPath("diffoscope"); err != nil {
		t.Skip("diffoscope is not installed")
	}
	a, b := twoFiles(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	report, ok, err := Diffoscope(ctx, a, b, 64<<10)
	if !ok || err != nil || !strings.Contains(report, "three") {
		t.Fatalf("Diffoscope = %q, %v, %v", report, ok, err)
	}
}

func TestDiffoscopeFake(t *testing.T) {
	a, b := twoFiles(t)
	tests := []struct {
		name     string
		script   string
		timeout  time.Duration
		max      int
		want     string // report, or its prefix when cut
		cut      bool
		wantErr  string
		deadline bool
	}{
		{name: "differences", script: "echo \"report: $*\"\nexit 1\n", max: 1000,
			want: "report: --no-progress --text - --max-text-report-size 1000 -- " + a + " " + b + "\n"},
		{name: "identical", script: "exit 0\n", max: 1000, want: ""},
		{name: "cut", script: "i=0\nwhile [ $i -lt 10000 ]; do echo 0123456789; i=$((i+1)); done\nexit 1\n", max: 25,
			want: "0123456789\n0123456789\n012", cut: true},
		{name: "failure", script: "echo partial\necho 'no such option' >&2\nexit 2\n", max: 1000,
			want: "partial\n", wantErr: "no such option"},
		{name: "timeout", script: "echo started\nexec sleep 30\n", max: 1000, timeout: 300 * time.Millisecond,
			want: "started\n", deadline: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeDiffoscope(t, tt.script)
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			report, ok, err := Diffoscope(ctx, a, b, tt.max)
			if !ok {
				t.Fatal("Diffoscope: not installed")
			}
			if tt.cut {
				if !strings.HasPrefix(report, tt.want) || !strings.HasSuffix(report, "[diffoscope report cut at 25 bytes]\n") || len(report) > tt.max+50 {
					t.Errorf("report = %q, want %q then a notice", report, tt.want)
				}
			} else if report != tt.want {
				t.Errorf("report = %q, want %q", report, tt.want)
			}
			switch {
			case tt.deadline:
				if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
					t.Errorf("err = %v after %v, want the deadline soon", err, time.Since(start))
				}
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			}
		})
	}
	if _, _, err := Diffoscope(context.Background(), a, b, 0); err == nil {
		t.Error("Diffoscope with maxBytes 0: no error")
	}
}
