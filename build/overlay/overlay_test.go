package overlay

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/treehash"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var base = map[string]string{
	"main.go":    "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"lib/a.go":   "package lib\n\n// A is one.\nconst A = 1\n",
	"old.txt":    "to be renamed\nwith two lines\n",
	"gone.txt":   "deleted\n",
	"run.sh":     "#!/bin/sh\necho run\n",
	"long/f.txt": strings.Repeat("line\n", 40) + "target\n" + strings.Repeat("tail\n", 5),
	"noeol.txt":  "no newline at end",
}

// makePatch returns a git-format patch from base to the result of change,
// and the h1 of the changed tree as git has it.
func makePatch(t *testing.T, change func(dir string)) ([]byte, string) {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write(t, dir, base)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	change(dir)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "change")
	patch := git(t, dir, "format-patch", "-M", "--stdout", "HEAD~1")
	sum, err := treehash.Hash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(patch), sum.H1
}

func baseTree(t *testing.T) string {
	dir := t.TempDir()
	write(t, dir, base)
	return dir
}

func TestApplyMatchesGit(t *testing.T) {
	patch, want := makePatch(t, func(dir string) {
		write(t, dir, map[string]string{
			"main.go":    "package main\n\nfunc main() {\n\tprintln(\"hello, fused\")\n}\n",
			"lib/new.go": "package lib\n\nconst B = 2\n",
			"long/f.txt": strings.Repeat("line\n", 40) + "changed\n" + strings.Repeat("tail\n", 5),
			"noeol.txt":  "no newline at end, still",
		})
		os.Remove(filepath.Join(dir, "gone.txt"))
		os.Rename(filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt"))
		os.Chmod(filepath.Join(dir, "run.sh"), 0o755)
	})
	ws := baseTree(t)
	if err := ApplyPatch(context.Background(), "o", "o.patch", patch, ws); err != nil {
		t.Fatal(err)
	}
	got, err := treehash.Hash(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	if got.H1 != want {
		t.Errorf("tree after apply %s, git has %s", got.H1, want)
	}
	if st, _ := os.Stat(filepath.Join(ws, "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("mode change not applied: %v", st.Mode())
	}
}

func TestApplyIsExact(t *testing.T) {
	patch, _ := makePatch(t, func(dir string) {
		write(t, dir, map[string]string{"long/f.txt": strings.Repeat("line\n", 40) + "changed\n" + strings.Repeat("tail\n", 5)})
	})
	cases := map[string]struct {
		change func(ws string)
		want   string
	}{
		"context changed": {func(ws string) {
			write(t, ws, map[string]string{"long/f.txt": strings.Repeat("line\n", 40) + "target\n" + "TAIL\n" + strings.Repeat("tail\n", 4)})
		}, "long/f.txt: hunk 1"},
		// patch(1) would apply this with an offset; mkrelease refuses.
		"offset needed": {func(ws string) {
			write(t, ws, map[string]string{"long/f.txt": "extra\n" + strings.Repeat("line\n", 40) + "target\n" + strings.Repeat("tail\n", 5)})
		}, "long/f.txt"},
		"file missing": {func(ws string) { os.Remove(filepath.Join(ws, "long/f.txt")) }, "does not exist"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ws := baseTree(t)
			tc.change(ws)
			err := ApplyPatch(context.Background(), "fused", "overlays/0001.patch", patch, ws)
			var oe *Error
			if !errors.As(err, &oe) {
				t.Fatalf("ApplyPatch = %v, want *Error", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "overlay fused (overlays/0001.patch)") || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "mkrelease lock") {
				t.Errorf("error = %q, want overlay, file, %q and the remedy", msg, tc.want)
			}
		})
	}
}

func TestApplyChecksBlobIDs(t *testing.T) {
	patch, _ := makePatch(t, func(dir string) {
		write(t, dir, map[string]string{"lib/a.go": "package lib\n\n// A is one.\nconst A = 11\n"})
	})
	// A file that the hunk matches, but that is not the blob the patch was
	// made against (a trailing line outside the hunk's context differs).
	ws := baseTree(t)
	write(t, ws, map[string]string{"lib/a.go": "package lib\n\n// A is one.\nconst A = 1\n// extra\n"})
	err := ApplyPatch(context.Background(), "o", "o.patch", patch, ws)
	if err == nil || !strings.Contains(err.Error(), "not the one the patch was made against") {
		t.Errorf("ApplyPatch = %v, want blob id refusal", err)
	}
}

func TestApplyRefusesUnsafePaths(t *testing.T) {
	for _, p := range []string{"../escape.txt", "/etc/passwd", ".git/hooks/pre-commit", "a/../../b"} {
		patch := "diff --git a/" + p + " b/" + p + "\nnew file mode 100644\n--- /dev/null\n+++ b/" + p + "\n@@ -0,0 +1 @@\n+x\n"
		ws := baseTree(t)
		err := ApplyPatch(context.Background(), "o", "o.patch", []byte(patch), ws)
		if err == nil {
			t.Errorf("patch creating %q applied", p)
		}
		if _, serr := os.Stat(filepath.Join(filepath.Dir(ws), "escape.txt")); serr == nil {
			t.Fatalf("patch wrote outside the workspace")
		}
	}
}

// A patch reaches the workspace's files through the workspace alone: a
// symbolic link in a folder the tree leaves out (a source's __pycache__,
// which may hold anything) takes neither its writes nor its reads outside.
func TestApplyStaysInTheWorkspace(t *testing.T) {
	for _, tc := range []struct{ name, patch string }{
		{"a new file through a linked folder", "diff --git a/__pycache__/out/new.txt b/__pycache__/out/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/__pycache__/out/new.txt\n@@ -0,0 +1 @@\n+x\n"},
		{"a change through a linked folder", "diff --git a/__pycache__/out/victim.txt b/__pycache__/out/victim.txt\n--- a/__pycache__/out/victim.txt\n+++ b/__pycache__/out/victim.txt\n@@ -1 +1 @@\n-outside\n+changed\n"},
		{"a change of a linked file", "diff --git a/__pycache__/victim.txt b/__pycache__/victim.txt\n--- a/__pycache__/victim.txt\n+++ b/__pycache__/victim.txt\n@@ -1 +1 @@\n-outside\n+changed\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			ws := filepath.Join(top, "ws")
			write(t, ws, base)
			outside := filepath.Join(top, "outside")
			write(t, outside, map[string]string{"victim.txt": "outside\n"})
			os.MkdirAll(filepath.Join(ws, "__pycache__"), 0o755)
			if err := os.Symlink(outside, filepath.Join(ws, "__pycache__", "out")); err != nil {
				t.Skip("symbolic links:", err)
			}
			os.Symlink(filepath.Join(outside, "victim.txt"), filepath.Join(ws, "__pycache__", "victim.txt"))
			if err := ApplyPatch(context.Background(), "o", "o.patch", []byte(tc.patch), ws); err == nil {
				t.Error("applied")
			}
			if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
				t.Error("the patch wrote outside the workspace")
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "victim.txt")); string(b) != "outside\n" {
				t.Errorf("the patch changed a file outside the workspace: %q", b)
			}
		})
	}
	// Negative control: the same patch applies to a real folder.
	ws := baseTree(t)
	write(t, ws, map[string]string{"__pycache__/out/victim.txt": "outside\n"})
	patch := "diff --git a/__pycache__/out/victim.txt b/__pycache__/out/victim.txt\n--- a/__pycache__/out/victim.txt\n+++ b/__pycache__/out/victim.txt\n@@ -1 +1 @@\n-outside\n+changed\n"
	if err := ApplyPatch(context.Background(), "o", "o.patch", []byte(patch), ws); err != nil {
		t.Fatalf("ApplyPatch on a real folder: %v", err)
	}
}

func TestApplyRefusesGarbage(t *testing.T) {
	for name, patch := range map[string]string{
		"empty":      "",
		"prose":      "this is not a patch\n",
		"bad hunk":   "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,2 +1,2 @@\n-package main\n",
		"new exists": "diff --git a/main.go b/main.go\nnew file mode 100644\n--- /dev/null\n+++ b/main.go\n@@ -0,0 +1 @@\n+x\n",
	} {
		t.Run(name, func(t *testing.T) {
			if err := ApplyPatch(context.Background(), "o", "o.patch", []byte(patch), baseTree(t)); err == nil {
				t.Error("applied")
			}
		})
	}
}

func FuzzApplyPatch(f *testing.F) {
	f.Add([]byte("diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-package main\n+package other\n"))
	f.Fuzz(func(t *testing.T, patch []byte) {
		root := t.TempDir()
		ws := filepath.Join(root, "ws")
		write(t, ws, base)
		_ = ApplyPatch(context.Background(), "o", "o.patch", patch, ws)
		entries, _ := os.ReadDir(root)
		if len(entries) != 1 {
			t.Fatalf("patch wrote outside the workspace: %v", entries)
		}
	})
}
