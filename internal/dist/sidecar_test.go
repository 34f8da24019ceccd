package dist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func TestSidecar(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(dir, "vexl-0.3.0-linux-x86_64.tar.gz")
	os.WriteFile(art, []byte("bundle"), 0o644)
	sha := checksum.Bytes([]byte("bundle"))
	if err := WriteSidecar(art, strings.ToUpper(sha)); err != nil {
		t.Fatal(err)
	}
	side := SidecarPath(art)
	rep, err := VerifySidecar(side)
	if err != nil || !rep.OK() || len(rep.Verified) != 1 || rep.Verified[0] != filepath.Base(art) {
		t.Fatalf("%v %v %v", rep.Err(), err, rep.Verified)
	}
	problem := func(rep checksum.Report) checksum.Problem {
		if len(rep.Findings) != 1 {
			t.Fatalf("findings %v", rep.Findings)
		}
		return rep.Findings[0].Problem
	}
	os.WriteFile(art, []byte("tampered"), 0o644)
	if rep, _ := VerifySidecar(side); problem(rep) != checksum.Mismatch {
		t.Errorf("tampered: %v", rep.Findings)
	}
	os.Remove(art)
	if rep, _ := VerifySidecar(side); problem(rep) != checksum.Missing {
		t.Errorf("missing: %v", rep.Findings)
	}
	// A sidecar copied beside another artifact names the wrong file.
	other := filepath.Join(dir, "vexl_plugin-0.3.0-py3-none-any.whl")
	b, _ := os.ReadFile(side)
	os.WriteFile(SidecarPath(other), b, 0o644)
	if rep, err := VerifySidecar(SidecarPath(other)); err != nil || problem(rep) != checksum.WrongName {
		t.Errorf("wrong name: %v %v", rep.Findings, err)
	}
	two := filepath.Join(dir, "two.sha256")
	os.WriteFile(two, []byte(sha+"  two\n"+sha+"  three\n"), 0o644)
	if _, err := VerifySidecar(two); err == nil || !strings.Contains(err.Error(), "lists 2 files") {
		t.Errorf("two lines: %v", err)
	}
	if _, err := VerifySidecar(filepath.Join(dir, "x.md5")); err == nil || !strings.Contains(err.Error(), SidecarSuffix) {
		t.Errorf("wrong suffix: %v", err)
	}
	// Writing refuses what is not a regular file, and leaves nothing.
	if err := WriteSidecar(filepath.Join(dir, "absent"), sha); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("absent artifact: %v", err)
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	if err := WriteSidecar(filepath.Join(dir, "d"), sha); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("folder: %v", err)
	}
	for _, n := range []string{"absent.sha256", "d.sha256"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s left behind", n)
		}
	}
}
