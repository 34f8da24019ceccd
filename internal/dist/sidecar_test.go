package dist

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
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
	rep, err := VerifySidecar(context.Background(), side)
	if err != nil || !rep.OK() || len(rep.Verified) != 1 || rep.Verified[0] != filepath.Base(art) {
		t.Fatalf("%v %v %v", rep.Err(), err, rep.Verified)
	}
	problem := func(rep checksum.Report) checksum.Problem {
		if len(rep.Findings) != 1 {
			t.Fatalf("findings %v", rep.Findings)
		}
		return checksum.Problem(rep.Findings[0].Check)
	}
	os.WriteFile(art, []byte("tampered"), 0o644)
	if rep, _ := VerifySidecar(context.Background(), side); problem(rep) != checksum.Mismatch {
		t.Errorf("tampered: %v", rep.Findings)
	}
	os.Remove(art)
	if rep, _ := VerifySidecar(context.Background(), side); problem(rep) != checksum.Missing {
		t.Errorf("missing: %v", rep.Findings)
	}
	// A sidecar copied beside another artifact names the wrong file.
	other := filepath.Join(dir, "vexl_plugin-0.3.0-py3-none-any.whl")
	b, _ := os.ReadFile(side)
	os.WriteFile(SidecarPath(other), b, 0o644)
	if rep, err := VerifySidecar(context.Background(), SidecarPath(other)); err != nil || problem(rep) != checksum.WrongName {
		t.Errorf("wrong name: %v %v", rep.Findings, err)
	}
	two := filepath.Join(dir, "two.sha256")
	os.WriteFile(two, []byte(sha+"  two\n"+sha+"  three\n"), 0o644)
	if _, err := VerifySidecar(context.Background(), two); err == nil || !strings.Contains(err.Error(), "lists 2 files") {
		t.Errorf("two lines: %v", err)
	}
	if _, err := VerifySidecar(context.Background(), filepath.Join(dir, "x.md5")); err == nil || !strings.Contains(err.Error(), SidecarSuffix) {
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

// TestCheckSidecar shows that comparing a sidecar with a known digest
// reports exactly what hashing the artifact reports, and that the
// artifact is not read: a wrong digest is what the mismatch names.
func TestCheckSidecar(t *testing.T) {
	const name = "vexl-0.3.0-linux-x86_64.tar.gz"
	content := []byte("bundle")
	sha := checksum.Bytes(content)
	wrong := checksum.Bytes([]byte("another bundle"))
	for _, tc := range []struct {
		name string
		// setup writes the case into dir and returns the sidecar.
		setup   func(t *testing.T, dir string) string
		problem checksum.Problem // of the one finding; "" for none
		err     string           // in both errors; "" for none
	}{
		{name: "good", setup: func(t *testing.T, dir string) string {
			return writeCase(t, dir, name, content, sha)
		}},
		{name: "upper-case sidecar", setup: func(t *testing.T, dir string) string {
			return writeCase(t, dir, name, content, strings.ToUpper(sha))
		}},
		{name: "tampered", problem: checksum.Mismatch, setup: func(t *testing.T, dir string) string {
			return writeCase(t, dir, name, []byte("tampered"), sha)
		}},
		{name: "empty artifact", problem: checksum.Mismatch, setup: func(t *testing.T, dir string) string {
			return writeCase(t, dir, name, []byte{}, sha)
		}},
		{name: "missing artifact", problem: checksum.Missing, setup: func(t *testing.T, dir string) string {
			side := writeCase(t, dir, name, content, sha)
			os.Remove(filepath.Join(dir, name))
			return side
		}},
		{name: "folder", problem: checksum.NotRegular, setup: func(t *testing.T, dir string) string {
			side := writeCase(t, dir, name, content, sha)
			os.Remove(filepath.Join(dir, name))
			os.Mkdir(filepath.Join(dir, name), 0o755)
			return side
		}},
		{name: "wrong name", problem: checksum.WrongName, setup: func(t *testing.T, dir string) string {
			writeCase(t, dir, name, content, sha)
			other := SidecarPath(filepath.Join(dir, "vexl_plugin-0.3.0-py3-none-any.whl"))
			b, _ := os.ReadFile(SidecarPath(filepath.Join(dir, name)))
			os.WriteFile(other, b, 0o644)
			return other
		}},
		{name: "two lines", err: "lists 2 files", setup: func(t *testing.T, dir string) string {
			two := filepath.Join(dir, "two.sha256")
			os.WriteFile(two, []byte(sha+"  two\n"+sha+"  three\n"), 0o644)
			return two
		}},
		{name: "malformed", err: "line 1", setup: func(t *testing.T, dir string) string {
			side := writeCase(t, dir, name, content, sha)
			os.WriteFile(side, []byte("not a sum\n"), 0o644)
			return side
		}},
		{name: "no sidecar", err: "no such file", setup: func(t *testing.T, dir string) string {
			return SidecarPath(filepath.Join(dir, name))
		}},
		{name: "wrong suffix", err: SidecarSuffix, setup: func(t *testing.T, dir string) string {
			return filepath.Join(dir, "x.md5")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			side := tc.setup(t, dir)
			art := strings.TrimSuffix(side, SidecarSuffix)
			known := sha // what a caller that hashed the artifact holds
			if b, err := os.ReadFile(art); err == nil {
				known = checksum.Bytes(b)
			}
			hashed, herr := VerifySidecar(context.Background(), side)
			given, gerr := CheckSidecar(context.Background(), side, strings.ToUpper(known))
			if tc.err != "" {
				if herr == nil || gerr == nil || !strings.Contains(herr.Error(), tc.err) || herr.Error() != gerr.Error() {
					t.Fatalf("errors: hashing %v, known digest %v; want both to say %q", herr, gerr, tc.err)
				}
				return
			}
			if herr != nil || gerr != nil {
				t.Fatalf("errors: hashing %v, known digest %v", herr, gerr)
			}
			if !reflect.DeepEqual(hashed, given) {
				t.Errorf("known digest reports %+v, hashing %+v", given, hashed)
			}
			if tc.problem == "" {
				if !given.OK() || len(given.Verified) != 1 || given.Verified[0] != name {
					t.Errorf("want %s verified, got %+v", name, given)
				}
				return
			}
			if len(given.Findings) != 1 || checksum.Problem(given.Findings[0].Check) != tc.problem {
				t.Errorf("want one %v finding, got %+v", tc.problem, given.Findings)
			}
		})
	}

	t.Run("known digest is not re-hashed", func(t *testing.T) {
		dir := t.TempDir()
		side := writeCase(t, dir, name, content, sha)
		rep, err := CheckSidecar(context.Background(), side, wrong)
		if err != nil || len(rep.Findings) != 1 {
			t.Fatalf("%+v %v", rep, err)
		}
		f := rep.Findings[0]
		if checksum.Problem(f.Check) != checksum.Mismatch || f.Got != wrong || f.Want != sha || !strings.Contains(checksum.Describe(f), wrong) {
			t.Errorf("want a mismatch naming %s, got %s", wrong, f)
		}
		if rep, err := VerifySidecar(context.Background(), side); err != nil || !rep.OK() {
			t.Errorf("the artifact itself still verifies: %+v %v", rep, err)
		}
	})
	t.Run("malformed digest", func(t *testing.T) {
		dir := t.TempDir()
		side := writeCase(t, dir, name, content, sha)
		for _, d := range []string{sha[:63], sha[:63] + "g"} {
			if _, err := CheckSidecar(context.Background(), side, d); err == nil || !strings.Contains(err.Error(), side) {
				t.Errorf("%q: %v", d, err)
			}
		}
	})
	t.Run("no digest hashes the artifact", func(t *testing.T) {
		dir := t.TempDir()
		side := writeCase(t, dir, name, content, sha)
		got, err := CheckSidecar(context.Background(), side, "")
		want, werr := VerifySidecar(context.Background(), side)
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) || !got.OK() {
			t.Errorf("CheckSidecar(%s, \"\") = %+v %v, VerifySidecar %+v %v", side, got, err, want, werr)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("changed"), 0o644); err != nil {
			t.Fatal(err)
		}
		if rep, _ := CheckSidecar(context.Background(), side, ""); rep.OK() {
			t.Error("a changed artifact passed: the empty digest did not hash it")
		}
	})
	t.Run("cancelled before hashing", func(t *testing.T) {
		dir := t.TempDir()
		side := writeCase(t, dir, name, content, sha)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if rep, err := CheckSidecar(ctx, side, ""); err == nil && rep.OK() {
			t.Errorf("a cancelled check passed: %+v", rep)
		}
	})
}

// writeCase writes the artifact name holding content into dir, and its
// sidecar listing sha.
func writeCase(t *testing.T, dir, name string, content []byte, sha string) string {
	t.Helper()
	art := filepath.Join(dir, name)
	if err := os.WriteFile(art, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteSidecar(art, sha); err != nil {
		t.Fatal(err)
	}
	return SidecarPath(art)
}
