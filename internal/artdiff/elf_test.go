package artdiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// buildELF builds a tiny Go program into dir with main.v set to value.
func buildELF(t *testing.T, dir, value string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	src := filepath.Join(dir, "src")
	write(t, src, "go.mod", []byte("module elfdemo\n\ngo 1.21\n"))
	write(t, src, "main.go", []byte("package main\n\nvar v = \"unset\"\n\nfunc main() { println(v) }\n"))
	out := filepath.Join(dir, "libvexl-"+value+".so")
	cmd := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags=-X main.v="+value, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

func TestCompareELF(t *testing.T) {
	dir := t.TempDir()
	a := buildELF(t, dir, "aaaaaaaa")
	b := buildELF(t, dir, "bbbbbbbb")
	bytesA, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	bytesB, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	detail := regexp.MustCompile(`^first difference at byte \d+, in ELF section \.[a-z.]+; sections that differ: .*\.rodata`)

	t.Run("files", func(t *testing.T) {
		d, err := Compare("build/linux-x86_64/libvexl.so", a, b)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil || len(d.Path) != 0 || d.What != "content" || !detail.MatchString(d.Detail) {
			t.Fatalf("Compare = %#v, want content with %s", d, detail)
		}
		t.Log(d)
		if d, err := Compare("libvexl.so", a, a); d != nil || err != nil {
			t.Fatalf("Compare(same) = %v, %v", d, err)
		}
	})

	// The same ELF files in a wheel in a bundle: read through streams.
	t.Run("in a wheel in a bundle", func(t *testing.T) {
		bundle := func(lib []byte) []byte {
			wheel := mkzip(zipOpts{}, zmember{name: "vexl_plugin/__init__.py"}, zmember{name: "vexl_plugin/lib/libvexl.so", body: string(lib)})
			return mktgz(tarOpts{}, testBundle(wheel, manifest)...)
		}
		d, err := compareBytes(t, "vexl-0.3.0-linux-x86_64.tar.gz", bundle(bytesA), bundle(bytesB))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{root + "wheels/" + wheelName, "vexl_plugin/lib/libvexl.so"}
		if d == nil || !slices.Equal(d.Path, want) || d.What != "content" || !detail.MatchString(d.Detail) {
			t.Fatalf("Compare = %#v, want content of %q with %s", d, want, detail)
		}
		t.Log(d)
	})

	t.Run("damaged on one side", func(t *testing.T) {
		damaged := slices.Clone(bytesB[:4096])
		d, err := compareBytes(t, "libvexl.so", bytesA, damaged)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil || d.What != "unreadable" || !regexp.MustCompile(`^rebuilt: `).MatchString(d.Detail) {
			t.Fatalf("Compare = %#v, want unreadable rebuilt", d)
		}
	})
}
