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
		Overlays: []Overlay{{Name: "fix", Source: "vexl", Kind: "patch", Path: "p/0001.patch", Digest: "sha256:" + strings.Repeat("c", 64), Result: "h1:def="}},
		Toolchains: []Toolchain{{Name: "go", Version: "go version go1.26.8 linux/amd64", SHA256: strings.Repeat("d", 64)},
			{Name: "cc", Target: "linux-aarch64", Version: "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0", SHA256: strings.Repeat("e", 64),
				Executable: "/usr/bin/aarch64-linux-gnu-gcc-12"}},
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
	// A toolchain is its version line and the digest of its executable;
	// where the executable lies on the machine that locked is not written.
	want := "[[toolchain]]\nname = 'cc'\ntarget = 'linux-aarch64'\nversion = 'aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0'\nsha256 = '" + strings.Repeat("e", 64) + "'\n"
	if !strings.Contains(string(first), want) || strings.Contains(string(first), "/usr/bin") {
		t.Errorf("the lock does not record the toolchain as\n%s\nit has:\n%s", want, first)
	}
	if got := l.Toolchains[1]; got.SHA256 != strings.Repeat("e", 64) || got.Executable != "" {
		t.Errorf("toolchain read back as %+v", got)
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

// A lock's keys are read exactly: a second spelling of a key is refused
// rather than read in place of the first.
func TestReadRefusesCaseVariants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "release.lock")
	if err := sample().Write(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, tc := range []struct{ old, new, want string }{
		{"tree = 'h1:abc='", "tree = 'h1:abc='\nTree = 'h1:forged='", "source[0].Tree: unknown key (keys are case-sensitive)"},
		{"version = 1", "Version = 1", "Version: unknown key (keys are case-sensitive)"},
		{"[[overlay]]", "[[Overlay]]", "Overlay: unknown key (keys are case-sensitive)"},
	} {
		if !strings.Contains(string(data), tc.old) {
			t.Fatalf("test bug: %q not in\n%s", tc.old, data)
		}
		p := filepath.Join(t.TempDir(), "release.lock")
		os.WriteFile(p, []byte(strings.Replace(string(data), tc.old, tc.new, 1)), 0o644)
		_, err := Read(p)
		var le *Error
		if !errors.As(err, &le) || le.ExitCode() != 2 || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "re-run the command") {
			t.Errorf("%s: Read = %v, want %q", tc.new, err, tc.want)
		}
	}
}

// The archive size round-trips, and a lock written before it existed reads
// as before (size 0: not recorded).
func TestArchiveSize(t *testing.T) {
	l := sample()
	l.Sources = append(l.Sources, Source{Name: "vendor", Kind: "archive", Location: "https://example.invalid/v.tar.gz",
		SHA256: strings.Repeat("d", 64), Size: 123456, Tree: "h1:xyz="})
	path := filepath.Join(t.TempDir(), "release.lock")
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "\nsize = 123456\n") {
		t.Errorf("size not written:\n%s", data)
	}
	if strings.Count(string(data), "size =") != 1 {
		t.Errorf("size written for a source without one:\n%s", data)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := got.Source("vendor"); s.Size != 123456 {
		t.Errorf("size read back as %d", s.Size)
	}
	old := filepath.Join(t.TempDir(), "release.lock")
	os.WriteFile(old, []byte(strings.Replace(string(data), "size = 123456\n", "", 1)), 0o644)
	got, err = Read(old)
	if err != nil {
		t.Fatalf("a lock without sizes: %v", err)
	}
	if s, _ := got.Source("vendor"); s.Size != 0 {
		t.Errorf("size = %d, want 0 (not recorded)", s.Size)
	}
}
