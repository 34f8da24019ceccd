package source

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
)

func TestFetchArgs(t *testing.T) {
	for _, tc := range []struct {
		name             string
		connect, idle    time.Duration
		wantSSH, wantLow string
	}{
		{"defaults", 0, 0,
			"core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout=30 -o ServerAliveInterval=60 -o ServerAliveCountMax=1", "http.lowSpeedTime=60"},
		{"rounded up to whole seconds", 1500 * time.Millisecond, 2100 * time.Millisecond,
			"core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout=2 -o ServerAliveInterval=3 -o ServerAliveCountMax=1", "http.lowSpeedTime=3"},
		{"at least a second", 300 * time.Millisecond, time.Millisecond,
			"core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout=1 -o ServerAliveInterval=1 -o ServerAliveCountMax=1", "http.lowSpeedTime=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Fetcher{ConnectTimeout: tc.connect, IdleTimeout: tc.idle}
			got := f.fetchArgs("--no-tags", "https://example.invalid/up.git", "abc")
			want := []string{
				"-c", "credential.helper=",
				"-c", "http.lowSpeedLimit=1",
				"-c", tc.wantLow,
				"-c", tc.wantSSH,
				"fetch", "--quiet", "--no-tags", "https://example.invalid/up.git", "abc",
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("fetchArgs =\n %q\nwant\n %q", got, want)
			}
		})
	}
}

// git sees none of the user's configuration, prompts, askpass programs or
// overrides of the bounds, whatever the environment holds.
func TestGitEnv(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("PATH", "/usr/bin")
	t.Setenv("HTTPS_PROXY", "http://proxy.example.invalid:3128")
	for _, k := range []string{"SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "HTTP_PROXY", "NO_PROXY"} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	t.Setenv("SSH_ASKPASS", "/usr/bin/ask")
	t.Setenv("DISPLAY", ":0")
	t.Setenv("GIT_DIR", "/elsewhere")
	t.Setenv("GIT_HTTP_LOW_SPEED_LIMIT", "0")
	t.Setenv("GIT_ASKPASS", "/usr/bin/ask")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'credential.helper'='store'")
	t.Setenv("GIT_HTTP_LOW_SPEED_TIME", "99999")
	t.Setenv("GIT_TERMINAL_PROMPT", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "/home/u/.gitconfig")
	want := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"PATH=/usr/bin", "HOME=/home/u", "HTTPS_PROXY=http://proxy.example.invalid:3128"}
	if got := gitEnv(); !reflect.DeepEqual(got, want) {
		t.Errorf("gitEnv =\n %q\nwant\n %q", got, want)
	}
}

func TestProbeAddr(t *testing.T) {
	for _, tc := range []struct {
		loc  string
		env  []string
		want string
	}{
		{"http://example.invalid/up.git", nil, "example.invalid:80"},
		{"https://example.invalid/up.git", nil, "example.invalid:443"},
		{"https://example.invalid:8443/up.git", nil, "example.invalid:8443"},
		{"https://[::1]:8443/up.git", nil, "[::1]:8443"},
		{"git://example.invalid/up.git", nil, "example.invalid:9418"},
		{"git://example.invalid/up.git", []string{"HTTPS_PROXY=http://p:1"}, "example.invalid:9418"},
		{"https://example.invalid/up.git", []string{"HTTPS_PROXY=http://p:1"}, ""},
		{"http://example.invalid/up.git", []string{"http_proxy=http://p:1"}, ""},
		{"https://example.invalid/up.git", []string{"HTTPS_PROXY="}, "example.invalid:443"},
		{"ssh://git@example.invalid/up.git", nil, ""},
		{"git@example.invalid:up.git", nil, ""},
		{"file:///srv/up.git", nil, ""},
		{"/srv/up.git", nil, ""},
	} {
		if got := probeAddr(tc.loc, tc.env); got != tc.want {
			t.Errorf("probeAddr(%q, %q) = %q, want %q", tc.loc, tc.env, got, tc.want)
		}
	}
}

// noProxy keeps a proxy of the test machine's environment away from
// fetches to 127.0.0.1.
func noProxy(t *testing.T) {
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"} {
		t.Setenv(k, "")
	}
}

// stallGit accepts git:// connections and never answers.
func stallGit(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln.Addr().String()
}

func TestGitFetchBounds(t *testing.T) {
	noProxy(t)
	done := make(chan struct{})
	gone := make(chan string, 16) // the paths of requests whose client went away
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			select {
			case gone <- r.URL.Path:
			default:
			}
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })
	stalled := stallGit(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := closed.Addr().String()
	closed.Close()

	commit := strings.Repeat("a", 40)
	retry := "check the server and the network, then retry; the commit is fetched once and then served from the cache"
	for _, tc := range []struct {
		name     string
		url      string
		idle     time.Duration
		timeout  time.Duration
		msg      string // the whole Msg of the *Error
		hint     string
		inErr    string // in the underlying error ("" for none)
		noUnwrap bool
	}{
		{"http server sends nothing: idle timeout", srv.URL + "/idle.git", time.Second, time.Minute,
			"fetch " + srv.URL + "/idle.git: the server sent less than a byte a second for 1s (idle timeout)", retry, "Operation too slow", false},
		{"git:// server sends nothing: fetch timeout", "git://" + stalled + "/up.git", time.Minute, time.Second,
			"fetch git://" + stalled + "/up.git: not done within 1s (fetch_timeout)",
			`if the repository is that large or the network that slow, raise fetch_timeout of the [[source]] named "up" in release.toml (e.g. fetch_timeout = "1h"); the commit is fetched once and then served from the cache`, "", true},
		// git-remote-http, which git starts, is killed with it: the fetch
		// ends at the timeout, not when the helper's own limit would.
		{"http helper killed at the fetch timeout", srv.URL + "/killed.git", time.Minute, time.Second,
			"fetch " + srv.URL + "/killed.git: not done within 1s (fetch_timeout)",
			`if the repository is that large or the network that slow, raise fetch_timeout of the [[source]] named "up" in release.toml (e.g. fetch_timeout = "1h"); the commit is fetched once and then served from the cache`, "", true},
		{"nothing listening", "http://" + refused + "/up.git", time.Minute, time.Minute,
			"fetch http://" + refused + "/up.git: could not connect to " + refused, retry, "connection refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Fetcher{CacheDir: t.TempDir(), ConnectTimeout: 5 * time.Second, IdleTimeout: tc.idle}
			s := config.Source{Name: "up", Git: tc.url, Commit: commit, FetchTimeout: config.Duration{Duration: tc.timeout}}
			start := time.Now()
			_, err := f.Materialize(context.Background(), s, filepath.Join(t.TempDir(), "ws"), Expected{})
			elapsed := time.Since(start)
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("Materialize = %v, want a *source.Error", err)
			}
			if se.Source != "up" || se.Msg != tc.msg || se.Hint != tc.hint {
				t.Errorf("error: source %q\n msg  %q\n hint %q\nwant msg %q\n hint %q", se.Source, se.Msg, se.Hint, tc.msg, tc.hint)
			}
			switch {
			case tc.noUnwrap && se.Err != nil:
				t.Errorf("underlying error %v, want none", se.Err)
			case tc.inErr != "" && (se.Err == nil || !strings.Contains(se.Err.Error(), tc.inErr)):
				t.Errorf("underlying error %v, want it to mention %q", se.Err, tc.inErr)
			}
			if elapsed > 8*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if strings.HasPrefix(tc.url, srv.URL) {
				// The client that asked is gone: git-remote-http did not
				// outlive the fetch.
				want := strings.TrimPrefix(tc.url, srv.URL) + "/info/refs"
				deadline := time.After(2 * time.Second)
				for got := ""; got != want; {
					select {
					case got = <-gone:
					case <-deadline:
						t.Fatalf("the server still serves %s: the helper git started outlived the fetch", want)
					}
				}
			}
		})
	}
}

// A fetch over http with the bounds in place works: git-http-backend
// serves a repository on 127.0.0.1, the connect probe passes, and the
// commit is materialised.
func TestGitSourceOverHTTP(t *testing.T) {
	execPath := git(t, ".", "--exec-path")
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("no git-http-backend")
	}
	noProxy(t)
	work := t.TempDir()
	repo := filepath.Join(work, "work")
	os.MkdirAll(repo, 0o755)
	git(t, repo, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("over http\n"), 0o644)
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "v1")
	commit := git(t, repo, "rev-parse", "HEAD")
	root := filepath.Join(work, "served")
	git(t, work, "clone", "-q", "--bare", repo, filepath.Join(root, "up.git"))
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_GLOBAL=/dev/null"}})
	defer srv.Close()

	f := &Fetcher{CacheDir: t.TempDir(), ConnectTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	s := config.Source{Name: "up", Git: srv.URL + "/up.git", Commit: commit, FetchTimeout: config.Duration{Duration: time.Minute}}
	dst := filepath.Join(t.TempDir(), "ws")
	facts, err := f.Materialize(context.Background(), s, dst, Expected{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dst, "a.txt"))
	if err != nil || string(got) != "over http\n" || facts.Commit != commit {
		t.Errorf("a.txt = %q, %v; facts %+v", got, err, facts)
	}
	// Served from the cache afterwards: no server needed.
	srv.Close()
	dst2 := filepath.Join(t.TempDir(), "ws")
	if _, err := f.Materialize(context.Background(), s, dst2, Expected{}); err != nil {
		t.Errorf("from the cache: %v", err)
	}
}
