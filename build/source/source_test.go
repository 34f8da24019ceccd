package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_DATE=2026-11-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-11-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestGitSourceAtCommit(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a // v1\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	// export-subst must not apply: mkrelease reads the object store.
	os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("a.go export-subst\n"), 0o644)
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "v1")
	v1 := git(t, repo, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(repo, "a.go"), []byte("package a // v2\n"), 0o644)
	git(t, repo, "commit", "-qam", "v2")

	f := &Fetcher{ProjectDir: t.TempDir(), CacheDir: t.TempDir()}
	s := config.Source{Name: "up", Git: "file://" + repo, Commit: v1}
	dst := filepath.Join(t.TempDir(), "ws")
	facts, err := f.Materialize(context.Background(), s, dst)
	if err != nil {
		t.Fatal(err)
	}
	if facts.Commit != v1 || facts.CommitTime != 1793491200 {
		t.Errorf("facts = %+v", facts)
	}
	b, _ := os.ReadFile(filepath.Join(dst, "a.go"))
	if string(b) != "package a // v1\n" {
		t.Errorf("a.go = %q, want the pinned commit's content", b)
	}
	if st, _ := os.Stat(filepath.Join(dst, "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v", st.Mode())
	}
	// The second time is served from the cache, even with the origin gone.
	os.RemoveAll(repo)
	dst2 := filepath.Join(t.TempDir(), "ws")
	if _, err := f.Materialize(context.Background(), s, dst2); err != nil {
		t.Fatalf("from cache: %v", err)
	}
	a, _ := treehash.Hash(context.Background(), dst)
	b2, _ := treehash.Hash(context.Background(), dst2)
	if a.H1 != b2.H1 {
		t.Errorf("cached checkout differs")
	}
	// A commit the repository does not have is refused by name.
	s.Commit = strings.Repeat("0", 40)
	_, err = f.Materialize(context.Background(), s, filepath.Join(t.TempDir(), "ws"))
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "source up") {
		t.Errorf("missing commit: %v", err)
	}
}

func TestGitSourceRefusesSymlinksAndSubmodules(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "a"), []byte("x"), 0o644)
	os.Symlink("a", filepath.Join(repo, "link"))
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "link")
	f := &Fetcher{ProjectDir: t.TempDir(), CacheDir: t.TempDir()}
	_, err := f.Materialize(context.Background(), config.Source{Name: "up", Git: "file://" + repo, Commit: git(t, repo, "rev-parse", "HEAD")}, filepath.Join(t.TempDir(), "ws"))
	if err == nil || !strings.Contains(err.Error(), "link: symbolic link") {
		t.Errorf("symlink in git tree: %v", err)
	}
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, content := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		tw.Write([]byte(content))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestArchiveSourceFromPathAndURL(t *testing.T) {
	data := tarGz(t, map[string]string{"vexl-1.0/a.go": "package a\n", "vexl-1.0/sub/b.go": "package b\n"})
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "up.tar.gz"), data, 0o644)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/up.tar.gz" {
			w.Write(data)
			return
		}
		if r.URL.Path == "/tampered.tar.gz" {
			w.Write(append(data[:len(data)-1:len(data)-1], data[len(data)-1]^1))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
	for _, loc := range []string{"up.tar.gz", srv.URL + "/up.tar.gz"} {
		dst := filepath.Join(t.TempDir(), "ws")
		facts, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: loc, SHA256: sha(data), StripComponents: 1}, dst)
		if err != nil {
			t.Fatalf("%s: %v", loc, err)
		}
		if facts.ArchiveSHA256 != sha(data) {
			t.Errorf("facts = %+v", facts)
		}
		if b, _ := os.ReadFile(filepath.Join(dst, "sub", "b.go")); string(b) != "package b\n" {
			t.Errorf("%s: sub/b.go = %q", loc, b)
		}
	}
	// Downloads are cached by digest.
	before := hits.Load()
	if _, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: srv.URL + "/up.tar.gz", SHA256: sha(data), StripComponents: 1}, filepath.Join(t.TempDir(), "ws")); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != before {
		t.Errorf("cached archive fetched again")
	}

	for name, s := range map[string]config.Source{
		"wrong digest (path)": {Name: "up", Archive: "up.tar.gz", SHA256: strings.Repeat("a", 64)},
		"tampered download":   {Name: "up", Archive: srv.URL + "/tampered.tar.gz", SHA256: sha(data)},
		"404":                 {Name: "up", Archive: srv.URL + "/missing.tar.gz", SHA256: sha(data)},
	} {
		t.Run(name, func(t *testing.T) {
			// A fresh cache: downloads are keyed by the pinned digest, so
			// the good archive cached above would (rightly) be served.
			f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
			dst := filepath.Join(t.TempDir(), "ws")
			_, err := f.Materialize(context.Background(), s, dst)
			var se *Error
			if !errors.As(err, &se) || se.ExitCode() != 1 || !strings.Contains(err.Error(), "source up") {
				t.Errorf("Materialize = %v, want a source error", err)
			}
			if _, err := os.Stat(dst); err == nil {
				t.Errorf("workspace left behind")
			}
			if entries, _ := os.ReadDir(filepath.Join(f.CacheDir, "downloads")); len(entries) != 0 {
				t.Errorf("a refused download left %v in the cache", entries)
			}
		})
	}
}

func TestArchiveSourceRefusesUnsafeEntries(t *testing.T) {
	data := tarGz(t, map[string]string{"../evil.go": "package evil\n"})
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "up.tar.gz"), data, 0o644)
	f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
	root := t.TempDir()
	_, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: "up.tar.gz", SHA256: sha(data)}, filepath.Join(root, "ws"))
	if err == nil || !strings.Contains(err.Error(), "../evil.go") {
		t.Errorf("unsafe archive: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}
