package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	facts, err := f.Materialize(context.Background(), s, dst, Expected{})
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
	if _, err := f.Materialize(context.Background(), s, dst2, Expected{}); err != nil {
		t.Fatalf("from cache: %v", err)
	}
	a, _ := treehash.Hash(context.Background(), dst)
	b2, _ := treehash.Hash(context.Background(), dst2)
	if a.H1 != b2.H1 {
		t.Errorf("cached checkout differs")
	}
	// A commit the repository does not have is refused by name.
	s.Commit = strings.Repeat("0", 40)
	_, err = f.Materialize(context.Background(), s, filepath.Join(t.TempDir(), "ws"), Expected{})
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
	_, err := f.Materialize(context.Background(), config.Source{Name: "up", Git: "file://" + repo, Commit: git(t, repo, "rev-parse", "HEAD")}, filepath.Join(t.TempDir(), "ws"), Expected{})
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
		facts, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: loc, SHA256: sha(data), StripComponents: 1}, dst, Expected{})
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
	if _, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: srv.URL + "/up.tar.gz", SHA256: sha(data), StripComponents: 1}, filepath.Join(t.TempDir(), "ws"), Expected{}); err != nil {
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
			_, err := f.Materialize(context.Background(), s, dst, Expected{})
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
	_, err := f.Materialize(context.Background(), config.Source{Name: "up", Archive: "up.tar.gz", SHA256: sha(data)}, filepath.Join(root, "ws"), Expected{})
	if err == nil || !strings.Contains(err.Error(), "../evil.go") {
		t.Errorf("unsafe archive: %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left %v", entries)
	}
}

// An archive source's max_entries and max_unpacked_size bound its
// extraction, and a refusal by them names the key to raise, in this
// [[source]] of release.toml; within them it extracts.
func TestArchiveSourceLimits(t *testing.T) {
	data := tarGz(t, map[string]string{"a": "12345", "b": "12345", "c": "12345"})
	project := t.TempDir()
	os.WriteFile(filepath.Join(project, "up.tar.gz"), data, 0o644)
	f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
	for _, tc := range []struct {
		name string
		src  config.Source
		want string // "" : extracts
	}{
		{"too many entries", config.Source{MaxEntries: 2}, `raise max_entries of [[source]] "up" in release.toml if its number of entries is expected`},
		{"too many bytes", config.Source{MaxUnpackedSize: 14}, `raise max_unpacked_size (in bytes) of [[source]] "up" in release.toml if its total size is expected`},
		{"within both", config.Source{MaxEntries: 3, MaxUnpackedSize: 15}, ""},
		{"defaults", config.Source{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.src
			s.Name, s.Archive, s.SHA256 = "up", "up.tar.gz", sha(data)
			_, err := f.Materialize(context.Background(), s, filepath.Join(t.TempDir(), "ws"), Expected{})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Materialize = %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Materialize = %v, want a refusal naming %q", err, tc.want)
			}
		})
	}
}

// Every kind of source can be materialised into a folder whose parent does
// not exist yet (an archive as the first [[source]] failed so: nothing had
// created the workspace folder).
func TestMaterializeCreatesParent(t *testing.T) {
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "src"), 0o755)
	os.WriteFile(filepath.Join(project, "src", "a.txt"), []byte("local\n"), 0o644)
	data := tarGz(t, map[string]string{"top/a.txt": "archived\n"})
	os.WriteFile(filepath.Join(project, "up.tar.gz"), data, 0o644)
	repo := t.TempDir()
	git(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("git\n"), 0o644)
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "v1")
	for _, tc := range []struct {
		kind string
		s    config.Source
		want string
	}{
		{"local", config.Source{Name: "l", Local: "src"}, "local\n"},
		{"git", config.Source{Name: "g", Git: "file://" + repo, Commit: git(t, repo, "rev-parse", "HEAD")}, "git\n"},
		{"archive", config.Source{Name: "a", Archive: "up.tar.gz", SHA256: sha(data), StripComponents: 1}, "archived\n"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
			dst := filepath.Join(t.TempDir(), "scratch", "src", tc.s.Name)
			facts, err := f.Materialize(context.Background(), tc.s, dst, Expected{})
			if err != nil {
				t.Fatalf("Materialize into a missing parent: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != tc.want {
				t.Errorf("a.txt = %q, want %q", b, tc.want)
			}
			if tc.kind == "archive" && facts.ArchiveSize != int64(len(data)) {
				t.Errorf("ArchiveSize = %d, want %d", facts.ArchiveSize, len(data))
			}
		})
	}
}

// Every kind of source that is a project path (a local folder, a local git
// repository, a local archive) is refused when a symbolic link takes it out
// of the project, naming the link, before anything of it is read; linked
// inside the project, it is read. A git repository outside is refused
// before git runs.
func TestSourcesLinkedOutOfTheProject(t *testing.T) {
	top := t.TempDir()
	project := filepath.Join(top, "project")
	data := tarGz(t, map[string]string{"top/a.txt": "archived\n"})
	for name, body := range map[string]string{"outside/src/a.txt": "outside\n", "outside/up.tar.gz": string(data), "outside/repo/HEAD": "ref: refs/heads/main\n",
		"project/real/src/a.txt": "inside\n", "project/real/up.tar.gz": string(data)} {
		p := filepath.Join(top, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	for link, target := range map[string]string{"src": "../outside/src", "up.tar.gz": "../outside/up.tar.gz", "repo": "../outside/repo", "ext": "../outside",
		"insrc": "real/src", "inup.tar.gz": "real/up.tar.gz"} {
		if err := os.Symlink(target, filepath.Join(project, link)); err != nil {
			t.Skip("symbolic links:", err)
		}
	}
	for _, tc := range []struct {
		name string
		s    config.Source
		want string // the refusal; "" for a.txt read from inside
	}{
		{"local folder", config.Source{Name: "l", Local: "src"}, "source l: local folder src is a symbolic link to ../outside/src, outside the project"},
		{"local folder through a linked folder", config.Source{Name: "l", Local: "ext/src"}, "source l: local folder ext/src: ext is a symbolic link to ../outside, outside the project"},
		{"archive", config.Source{Name: "a", Archive: "up.tar.gz", SHA256: sha(data), StripComponents: 1}, "source a: archive up.tar.gz is a symbolic link to ../outside/up.tar.gz, outside the project"},
		{"git repository", config.Source{Name: "g", Git: "repo", Commit: strings.Repeat("a", 40)}, "source g: git repository repo is a symbolic link to ../outside/repo, outside the project"},
		{"local folder linked inside", config.Source{Name: "l", Local: "insrc"}, ""},
		{"archive linked inside", config.Source{Name: "a", Archive: "inup.tar.gz", SHA256: sha(data), StripComponents: 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Fetcher{ProjectDir: project, CacheDir: t.TempDir()}
			dst := filepath.Join(t.TempDir(), "ws")
			_, err := f.Materialize(context.Background(), tc.s, dst, Expected{})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Materialize = %v, want a refusal saying %q", err, tc.want)
				}
				if _, serr := os.Stat(dst); serr == nil {
					t.Errorf("the workspace was made")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != "inside\n" && string(b) != "archived\n" {
				t.Errorf("a.txt = %q", b)
			}
		})
	}
}

// stall blocks until the client goes away (or the test ends).
func stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// endless writes zeros until the client goes away, counting what it wrote.
func endless(w http.ResponseWriter, r *http.Request, sent *atomic.Int64) {
	buf := make([]byte, 4096)
	for r.Context().Err() == nil {
		n, err := w.Write(buf)
		sent.Add(int64(n))
		if err != nil {
			return
		}
		w.(http.Flusher).Flush()
	}
}

func TestDownloadBounds(t *testing.T) {
	data := tarGz(t, map[string]string{"top/a.txt": "archived\n"})
	var sent atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/up.tar.gz", func(w http.ResponseWriter, r *http.Request) { w.Write(data) })
	mux.HandleFunc("/moved.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/up.tar.gz", http.StatusFound)
	})
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) { stall(r) })
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Write(data[:10])
		w.(http.Flusher).Flush()
		stall(r)
	})
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) { endless(w, r, &sent) })
	mux.HandleFunc("/announced", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000000000")
		endless(w, r, &sent)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// Another host name for the same server: a redirect there is a redirect
	// to another host.
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	mux.HandleFunc("/elsewhere.tar.gz", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/up.tar.gz", http.StatusFound)
	})

	src := func(p string) config.Source {
		return config.Source{Name: "vendor", Archive: srv.URL + p, SHA256: sha(data), StripComponents: 1}
	}
	withMax := func(s config.Source, n int64) config.Source { s.MaxSize = n; return s }
	withHosts := func(s config.Source, h ...string) config.Source { s.AllowRedirectHosts = h; return s }
	for _, tc := range []struct {
		name string
		s    config.Source
		want Expected
		err  string // "" for success
		hint string
	}{
		{"plain", src("/up.tar.gz"), Expected{}, "", ""},
		{"locked size matches", src("/up.tar.gz"), Expected{ArchiveSize: int64(len(data))}, "", ""},
		{"same-host redirect", src("/moved.tar.gz"), Expected{}, "", ""},
		{"cross-host redirect", src("/elsewhere.tar.gz"), Expected{},
			"source vendor: download " + srv.URL + "/elsewhere.tar.gz: redirected to " + other + "/up.tar.gz, on host localhost, which release.toml does not allow",
			`add allow_redirect_hosts = ["localhost"] to the [[source]] named "vendor"`},
		{"cross-host redirect allowed", withHosts(src("/elsewhere.tar.gz"), "localhost"), Expected{}, "", ""},
		{"no response", src("/slow-headers"), Expected{}, "/slow-headers: no response within 300ms (idle timeout)", "retry"},
		{"stalled body", src("/slow-body"), Expected{}, "/slow-body: the server sent nothing for 300ms (idle timeout) after 10 bytes", "retry"},
		{"over max_size", withMax(src("/endless"), 100000), Expected{},
			"/endless: more than the 100000 bytes allowed by max_size: stopped after 100001 bytes", "raise max_size"},
		{"over the locked size", src("/endless"), Expected{ArchiveSize: 5000},
			"/endless: more than the 5000 bytes allowed by the size release.lock records for it: stopped after 5001 bytes", "not the archive that was locked"},
		{"locked size above max_size", withMax(src("/endless"), 3000), Expected{ArchiveSize: 5000},
			"/endless: more than the 3000 bytes allowed by max_size", "raise max_size"},
		{"announced too large", withMax(src("/announced"), 100000), Expected{},
			"/announced: the server announces 1000000000 bytes, more than the 100000 allowed by max_size", "raise max_size"},
		{"small archive over its locked size", src("/up.tar.gz"), Expected{ArchiveSize: int64(len(data)) - 1},
			fmt.Sprintf("/up.tar.gz: the server announces %d bytes, more than the %d allowed by the size release.lock records for it", len(data), len(data)-1), "not the archive that was locked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent.Store(0)
			f := &Fetcher{CacheDir: t.TempDir(), IdleTimeout: 300 * time.Millisecond, ConnectTimeout: time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
			defer cancel()
			dst := filepath.Join(t.TempDir(), "ws")
			facts, err := f.Materialize(ctx, tc.s, dst, tc.want)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Materialize: %v", err)
				}
				if facts.ArchiveSize != int64(len(data)) {
					t.Errorf("ArchiveSize = %d, want %d", facts.ArchiveSize, len(data))
				}
				return
			}
			var se *Error
			if !errors.As(err, &se) || se.ExitCode() != 1 {
				t.Fatalf("Materialize = %v, want a source error", err)
			}
			if !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "source vendor: download ") {
				t.Errorf("error = %q\nwant it to contain %q", err, tc.err)
			}
			if !strings.Contains(se.Hint, tc.hint) {
				t.Errorf("hint = %q, want it to contain %q", se.Hint, tc.hint)
			}
			if ctx.Err() != nil {
				t.Errorf("refused only when the test's own deadline passed")
			}
			if n := sent.Load(); n > 4<<20 {
				t.Errorf("the server sent %d bytes before the download was stopped", n)
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

func TestCheckRedirect(t *testing.T) {
	u := func(s string) *url.URL {
		p, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	via := func(urls ...string) []*http.Request {
		var out []*http.Request
		for _, s := range urls {
			out = append(out, &http.Request{URL: u(s)})
		}
		return out
	}
	s := config.Source{Name: "v", AllowRedirectHosts: []string{"cdn.example"}}
	long := make([]string, maxRedirects)
	for i := range long {
		long[i] = "https://a.example/" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		to   string
		via  []*http.Request
		want string // "" when allowed
	}{
		{"https://a.example/y", via("https://a.example/x"), ""},
		{"https://A.Example:8443/y", via("https://a.example/x"), ""},
		{"https://cdn.example/y", via("https://a.example/x"), ""},
		{"https://evil.example/y", via("https://a.example/x"), "on host evil.example, which release.toml does not allow"},
		{"https://evil.example/y", via("https://a.example/x", "https://cdn.example/y"), "on host evil.example"},
		{"http://a.example/y", via("https://a.example/x"), "redirected from https to http"},
		{"http://cdn.example/y", via("http://a.example/x"), ""},
		{"https://a.example/z", via(long...), "stopped after 10 redirects"},
	} {
		err := checkRedirect(s, u(tc.to), tc.via)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("redirect to %s: %v, want it followed", tc.to, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("redirect to %s: %v, want %q", tc.to, err, tc.want)
		}
	}
}
