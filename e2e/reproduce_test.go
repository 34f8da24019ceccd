package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReproduce rebuilds a release from a fresh copy of its project and
// compares it bit for bit; refuses when an overlay changed without a
// re-lock or release.toml differs; and, with a non-determinism injected
// through the test-only hook, names the artifact and the member.
func TestReproduce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds twice")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	r := demoProject(t, nil, "")
	write(t, filepath.Join(r.dir, "py", "demo_app", "__init__.py"), "def answer():\n    return 42\n")
	write(t, filepath.Join(r.dir, "overlays", "0001-answer.patch"), `diff --git a/demo_app/__init__.py b/demo_app/__init__.py
--- a/demo_app/__init__.py
+++ b/demo_app/__init__.py
@@ -1,2 +1,2 @@
 def answer():
-    return 42
+    return 43
`)
	toml, _ := os.ReadFile(filepath.Join(r.dir, "release.toml"))
	toml = append(toml, []byte("\n[[overlay]]\nname = \"answer\"\nsource = \"py\"\npatch = \"overlays/0001-answer.patch\"\n")...)
	os.WriteFile(filepath.Join(r.dir, "release.toml"), toml, 0o644)
	r.mustMkrelease(t, "lock")
	r.mustMkrelease(t, "build")
	dist := filepath.Join(r.dir, "dist")

	// A fresh copy of the project, as another machine would have it.
	fresh := run{dir: filepath.Join(t.TempDir(), "clone"), umask: "077",
		env: []string{"HOME=" + t.TempDir(), "TZ=Asia/Tokyo", "LANG=C", "MKRELEASE_CACHE=" + t.TempDir()}}
	for _, p := range []string{"release.toml", "release.lock", "py", "overlays", "CHANGELOG.md"} {
		copyTree(t, filepath.Join(r.dir, p), filepath.Join(fresh.dir, p))
	}
	t.Run("identical", func(t *testing.T) {
		out := fresh.mustMkrelease(t, "reproduce", dist)
		if !strings.Contains(out, "reproduced") || strings.Contains(out, "DIFFERS") || !strings.Contains(out, "identical  demo-app-2.0-linux-x86_64.tar.gz") {
			t.Errorf("reproduce:\n%s", out)
		}
	})

	t.Run("an overlay changed and not re-locked", func(t *testing.T) {
		p := filepath.Join(fresh.dir, "overlays", "0001-answer.patch")
		orig, _ := os.ReadFile(p)
		defer os.WriteFile(p, orig, 0o644)
		os.WriteFile(p, []byte(strings.Replace(string(orig), "return 43", "return 44", 1)), 0o644)
		out, errOut, code := fresh.mkrelease(t, "reproduce", dist)
		if code != 1 || !strings.Contains(errOut, "overlay answer: overlays/0001-answer.patch: the overlay changed") || !strings.Contains(errOut, "mkrelease lock") {
			t.Errorf("exit %d:\n%s\n%s", code, out, errOut)
		}
	})

	t.Run("release.toml differs", func(t *testing.T) {
		p := filepath.Join(fresh.dir, "release.toml")
		orig, _ := os.ReadFile(p)
		defer os.WriteFile(p, orig, 0o644)
		os.WriteFile(p, append(orig, []byte("# a comment is a change\n")...), 0o644)
		_, errOut, code := fresh.mkrelease(t, "reproduce", dist)
		if code != 1 || !strings.Contains(errOut, "release.toml differs from the one the release was built from") {
			t.Errorf("exit %d:\n%s", code, errOut)
		}
	})

	t.Run("non-determinism is named", func(t *testing.T) {
		c := exec.Command(hookedMkrelease, "reproduce", dist)
		c.Dir = fresh.dir
		c.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, fresh.env...), "MKRELEASE_TEST_NONDETERMINISM=wheel-generator")
		out, err := c.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("reproduce with a non-deterministic wheel: %v\n%s", err, out)
		}
		for _, want := range []string{
			// the wheel, down to the member and line
			"DIFFERS    demo_app-2.0-py3-none-any.whl: demo_app-2.0.dist-info/WHEEL: line 2",
			// the bundle holding it: its first differing member in archive order
			"DIFFERS    demo-app-2.0-linux-x86_64.tar.gz: demo-app-2.0-linux-x86_64/SHA256SUMS: line",
			"identical  RELEASE_NOTES.md",
			"not reproduced",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("reproduce output lacks %q:\n%s", want, out)
			}
		}
	})
}
