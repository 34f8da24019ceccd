package lock

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample() *Lock {
	return &Lock{
		Sources: []Source{{Name: "vexl", Kind: "local", Location: "backend/src", Tree: "h1:abc=",
			Files: []string{strings.Repeat("a", 64) + "  go.mod", strings.Repeat("b", 64) + "  main.go"}}},
		Overlays:   []Overlay{{Name: "fix", Source: "vexl", Kind: "patch", Path: "p/0001.patch", Digest: "sha256:" + strings.Repeat("c", 64), Result: "h1:def="}},
		Toolchains: []Toolchain{{Name: "go", Version: "go version go1.26.8 linux/amd64"}, {Name: "cc", Target: "linux-aarch64", Version: "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0"}},
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "release.lock")
	if err := sample().Write(path); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	l, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Sources[0].Files[1] != sample().Sources[0].Files[1] || l.Toolchains[1].Target != "linux-aarch64" || l.Version != FormatVersion {
		t.Errorf("read back %+v", l)
	}
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Errorf("rewrite changed the bytes:\n%s\n---\n%s", first, second)
	}
	if !strings.HasPrefix(string(first), "# release.lock") {
		t.Errorf("lock lacks its header:\n%s", first)
	}
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"unknown key":  "version = 1\nextra = true\n",
		"bad syntax":   "version = \n",
		"wrong format": "version = 7\n",
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			os.WriteFile(p, []byte(content), 0o644)
			_, err := Read(p)
			var le *Error
			if !errors.As(err, &le) || le.ExitCode() != 2 || !strings.Contains(err.Error(), "mkrelease lock") {
				t.Errorf("Read = %v, want *Error (exit 2) with the remedy", err)
			}
		})
	}
	_, err := Read(filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "run `mkrelease lock`") {
		t.Errorf("Read(missing) = %v", err)
	}
}

func TestDriftErrorNamesEverything(t *testing.T) {
	e := &DriftError{LockFile: "release.lock", Relock: "mkrelease lock", Drifts: []Drift{
		{Entry: "source vexl", File: "backend/src/lang/parse.go", What: "the pinned tree changed", Expected: "h1:a", Found: "h1:b",
			Details: []string{"backend/src/lang/parse.go: changed"}},
		{Entry: "toolchain go", What: "the toolchain version changed", Expected: "go1.26.8", Found: "go1.26.9"},
	}}
	msg := e.Error()
	for _, want := range []string{"2 findings", "source vexl: backend/src/lang/parse.go", "locked: h1:a", "found:  h1:b", "toolchain go", "run `mkrelease lock`"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if e.ExitCode() != 1 {
		t.Errorf("exit %d", e.ExitCode())
	}
}
