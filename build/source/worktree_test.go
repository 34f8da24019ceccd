package source

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
)

// worktreeRepo is a project that is a git repository with one commit: a
// local source in src/ (with an executable script, a link and an ignored
// build folder) and docs/ beside it.
func worktreeRepo(t *testing.T) (dir, head string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir = t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{
		"src/a.go": "package a\n", "src/sub/b.go": "package sub\n", "src/run.sh": "#!/bin/sh\n",
		"docs/guide.md": "# guide\n", ".gitignore": "build/\n", "release.toml": "# the project\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Chmod(filepath.Join(dir, "src", "run.sh"), 0o755))
	must(t, os.Symlink("a.go", filepath.Join(dir, "src", "link.go")))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "one")
	return dir, git(t, dir, "rev-parse", "HEAD")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorkTreeLocalSource: a local source in a repository is compared
// with HEAD below its folder only: every kind of change is found (and a
// change beside the source, an ignored file, or nothing, is not).
func TestWorkTreeLocalSource(t *testing.T) {
	cases := []struct {
		name string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{"clean", func(t *testing.T, dir string) {}, nil},
		{"content changed", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a // edited\n"), 0o644))
		}, []string{"src/a.go"}},
		{"same content rewritten", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n"), 0o644))
		}, nil},
		{"removed", func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "src", "sub", "b.go"))) }, []string{"src/sub/b.go"}},
		{"folder replaced by a file", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, "src", "sub")))
			must(t, os.WriteFile(filepath.Join(dir, "src", "sub"), nil, 0o644))
		}, []string{"src/sub", "src/sub/b.go"}},
		{"executable bit dropped", func(t *testing.T, dir string) { must(t, os.Chmod(filepath.Join(dir, "src", "run.sh"), 0o644)) }, []string{"src/run.sh"}},
		{"link retargeted", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, "src", "link.go")))
			must(t, os.Symlink("sub/b.go", filepath.Join(dir, "src", "link.go")))
		}, []string{"src/link.go"}},
		{"new file", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "src", "new.go"), []byte("package a\n"), 0o644))
		}, []string{"src/new.go"}},
		{"ignored file", func(t *testing.T, dir string) {
			must(t, os.MkdirAll(filepath.Join(dir, "src", "build"), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, "src", "build", "out.o"), []byte("x"), 0o644))
		}, nil},
		{"change beside the source", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "docs", "guide.md"), []byte("# edited\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "docs", "new.md"), []byte("new\n"), 0o644))
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, head := worktreeRepo(t)
			tc.edit(t, dir)
			f := &Fetcher{ProjectDir: dir}
			w, err := f.WorkTree(context.Background(), config.Source{Name: "app", Local: "src"}, "", filepath.Join(dir, "release.toml"))
			if err != nil {
				t.Fatal(err)
			}
			if w == nil {
				t.Fatal("no work tree found for a local source in a repository")
			}
			if w.Head != head || w.Path != "src" || !w.Current() {
				t.Errorf("head %s path %q current %v, want %s, src, true", w.Head, w.Path, w.Current(), head)
			}
			if !slices.Equal(w.Changed, tc.want) {
				t.Errorf("changed %q, want %q", w.Changed, tc.want)
			}
			probs := w.Problems()
			switch {
			case len(tc.want) == 0 && (len(probs) != 0 || w.State() != "clean"):
				t.Errorf("a clean tree: problems %q, state %s", probs, w.State())
			case len(tc.want) > 0 && (len(probs) != 1 || w.State() != "modified" ||
				!strings.Contains(probs[0], "source app: "+filepath.Join(dir, "src")+" has ") ||
				!strings.Contains(probs[0], tc.want[0]) || !strings.Contains(probs[0], "no commit holds them")):
				t.Errorf("problems %q, state %s", probs, w.State())
			}
		})
	}
}

// TestWorkTreeGitSource: a git source that is a repository path is
// compared with the pinned commit (HEAD past it, or elsewhere) and with its
// whole work tree.
func TestWorkTreeGitSource(t *testing.T) {
	dir, first := worktreeRepo(t)
	f := &Fetcher{ProjectDir: dir}
	src := config.Source{Name: "app", Git: ".", Commit: first}
	inspect := func() *WorkTree {
		t.Helper()
		w, err := f.WorkTree(context.Background(), src, first, filepath.Join(dir, "release.toml"), filepath.Join(dir, "release.lock"))
		if err != nil || w == nil {
			t.Fatalf("WorkTree = %v, %v", w, err)
		}
		return w
	}
	if w := inspect(); !w.Current() || !w.Clean() || len(w.Problems()) != 0 {
		t.Fatalf("at the pinned commit: %+v %q", w, w.Problems())
	}
	// Pinning a commit and committing the pin (release.toml and
	// release.lock) moves HEAD, and changes nothing the build reads.
	config := filepath.Join(dir, "release.toml")
	must(t, os.WriteFile(config, []byte("# commit = \""+first+"\"\n"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "pin")
	must(t, os.WriteFile(config, []byte("# edited, not committed\n"), 0o644))
	if w := inspect(); !w.Current() || !w.Clean() || w.Ahead != 0 || w.Head == first {
		t.Fatalf("after committing the pin: %+v", w)
	}
	must(t, os.WriteFile(config, []byte("# commit = \""+first+"\"\n"), 0o644))

	must(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a // two\n"), 0o644))
	git(t, dir, "commit", "-qam", "two")
	must(t, os.WriteFile(filepath.Join(dir, "docs", "guide.md"), []byte("# three\n"), 0o644))
	git(t, dir, "commit", "-qam", "three")
	head := git(t, dir, "rev-parse", "HEAD")
	w := inspect()
	if w.Current() || w.Ahead != 2 || w.Diverged || !w.Clean() {
		t.Fatalf("two commits later: %+v", w)
	}
	probs := w.Problems()
	if len(probs) != 1 || !strings.Contains(probs[0], "HEAD of "+dir+" is commit "+head+"; 2 commits since the pinned commit "+first+" change its files") ||
		!strings.Contains(probs[0], `set commit = "`+head+`" for source app in release.toml and run `+"`mkrelease lock`") {
		t.Errorf("problems %q", probs)
	}

	// An uncommitted edit anywhere in the repository: the build, which
	// reads the pinned commit, does not see it.
	must(t, os.WriteFile(filepath.Join(dir, "docs", "guide.md"), []byte("# four\n"), 0o644))
	w = inspect()
	probs = w.Problems()
	if !slices.Equal(w.Changed, []string{"docs/guide.md"}) || len(probs) != 2 || !strings.Contains(probs[1], "uncommitted change (docs/guide.md) that the build does not see: it reads commit "+first) {
		t.Errorf("changed %q, problems %q", w.Changed, probs)
	}

	// HEAD elsewhere: a branch from before the pinned commit.
	git(t, dir, "checkout", "-q", "--", ".")
	git(t, dir, "checkout", "-q", "--orphan", "other")
	git(t, dir, "commit", "-q", "-m", "other root")
	w = inspect()
	if !w.Diverged || len(w.Problems()) != 1 || !strings.Contains(w.Problems()[0], "which does not descend from the pinned commit "+first) {
		t.Errorf("diverged: %+v %q", w, w.Problems())
	}
}

// TestWorkTreeNone: a source read from no work tree gives none, and
// neither does a project that lies in a repository that does not track it
// (a home folder kept in git), which the control shows would otherwise
// report every file.
func TestWorkTreeNone(t *testing.T) {
	home, _ := worktreeRepo(t)
	project := filepath.Join(home, "projects", "app")
	must(t, os.MkdirAll(filepath.Join(project, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(project, "release.toml"), []byte("# untracked\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(project, "src", "a.go"), []byte("package a\n"), 0o644))
	inHome := &Fetcher{ProjectDir: project}
	if w, err := inHome.WorkTree(context.Background(), config.Source{Name: "app", Local: "src"}, "", filepath.Join(project, "release.toml")); w != nil || err != nil {
		t.Errorf("a project inside a repository that does not track it: %+v, %v; want none", w, err)
	}
	git(t, home, "add", "projects/app/release.toml")
	git(t, home, "commit", "-q", "-m", "track the project")
	if w, err := inHome.WorkTree(context.Background(), config.Source{Name: "app", Local: "src"}, "", filepath.Join(project, "release.toml")); err != nil || w == nil || !slices.Equal(w.Changed, []string{"projects/app/src/a.go"}) {
		t.Errorf("control, the project tracked: %+v, %v; want its untracked source file", w, err)
	}

	plain := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(plain, "src"), 0o755))
	f := &Fetcher{ProjectDir: plain}
	for _, s := range []config.Source{
		{Name: "local", Local: "src"},
		{Name: "url", Git: "https://example.invalid/r.git", Commit: strings.Repeat("a", 40)},
		{Name: "archive", Archive: "https://example.invalid/a.tar.gz", SHA256: strings.Repeat("b", 64)},
	} {
		if w, err := f.WorkTree(context.Background(), s, s.Commit); w != nil || err != nil {
			t.Errorf("%s: %+v, %v; want none", s.Name, w, err)
		}
	}
}

// TestWorkTreeRunsNothingTheRepositoryConfigures: a repository's own
// configuration names commands that git status runs (a clean filter for
// a changed file, the fsmonitor hook). Comparing the work tree runs
// neither; the control shows that git status does. A filtered file is not
// compared, and counted.
func TestWorkTreeRunsNothingTheRepositoryConfigures(t *testing.T) {
	dir, _ := worktreeRepo(t)
	marks := t.TempDir()
	filter := filepath.Join(marks, "filter-ran")
	monitor := filepath.Join(marks, "fsmonitor-ran")
	hook := filepath.Join(marks, "fsmonitor.sh")
	must(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+monitor+"\n"), 0o755))
	git(t, dir, "config", "filter.evil.clean", "touch "+filter+"; cat")
	git(t, dir, "config", "core.fsmonitor", hook)
	must(t, os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.txt filter=evil\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src", "data.txt"), []byte("one\n"), 0o644))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "data")
	os.Remove(filter)
	os.Remove(monitor)
	must(t, os.WriteFile(filepath.Join(dir, "src", "data.txt"), []byte("two\n") /* the same size: git must read it */, 0o644))

	w, err := (&Fetcher{ProjectDir: dir}).WorkTree(context.Background(), config.Source{Name: "app", Local: "src"}, "", filepath.Join(dir, "release.toml"))
	if err != nil || w == nil {
		t.Fatalf("WorkTree = %v, %v", w, err)
	}
	for _, p := range []string{filter, monitor} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("comparing the work tree ran what the repository configures: %s exists", p)
		}
	}
	if len(w.Changed) != 0 || w.Filtered != 1 {
		t.Errorf("changed %q, filtered %d; want the filtered file not compared, and counted", w.Changed, w.Filtered)
	}

	// Control: git status runs both.
	git(t, dir, "status", "--porcelain")
	for _, p := range []string{filter, monitor} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("control: git status did not run %s: the test proves nothing", filepath.Base(p))
		}
	}
}
