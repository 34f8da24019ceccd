package source

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRepository checks which repository a project folder is named by:
// one of [project] urls that a remote of its work tree is, spelt as
// release.toml spells it, with the project's folder in the work tree.
func TestRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	urls := map[string]string{
		"Homepage": "https://example.org/vexl",
		"Source":   "https://github.com/vexl-dev/release",
	}
	// work makes a work tree with the given remotes, and the project in
	// its folder sub ("" at the top).
	work := func(t *testing.T, sub string, remotes ...string) string {
		t.Helper()
		top := t.TempDir()
		git := func(args ...string) {
			t.Helper()
			cmd := exec.Command("git", append([]string{"-C", top}, args...)...)
			cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		git("init", "-q")
		for i, r := range remotes {
			git("remote", "add", []string{"origin", "upstream"}[i], r)
		}
		dir := filepath.Join(top, filepath.FromSlash(sub))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, tc := range []struct {
		name     string
		sub      string
		remotes  []string
		repo, in string
	}{
		{"ssh remote at the top", "", []string{"git@github.com:vexl-dev/release.git"}, "https://github.com/vexl-dev/release", ""},
		{"https remote, project in a folder", "packaging/vexl", []string{"https://github.com/vexl-dev/release.git"}, "https://github.com/vexl-dev/release", "packaging/vexl"},
		{"a fork first, the project's second", "p", []string{"https://github.com/someone/release", "https://github.com/vexl-dev/release"}, "https://github.com/vexl-dev/release", "p"},
		{"a remote [project] urls does not name", "", []string{"https://github.com/someone/release"}, "", ""},
		{"no remote", "", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, in := Repository(context.Background(), work(t, tc.sub, tc.remotes...), urls)
			if repo != tc.repo || in != tc.in {
				t.Errorf("Repository = %q, %q; want %q, %q", repo, in, tc.repo, tc.in)
			}
		})
	}
	t.Run("not a work tree", func(t *testing.T) {
		if repo, in := Repository(context.Background(), t.TempDir(), urls); repo != "" || in != "" {
			t.Errorf("Repository = %q, %q; want none", repo, in)
		}
	})
}
