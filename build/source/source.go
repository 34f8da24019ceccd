// Package source materialises pinned sources: it writes the exact tree of a
// local folder, a git commit or a checksummed archive into a fresh folder,
// never touching the original. Git repositories and downloaded archives are
// cached by URL and by digest; every archive is checked against its sha256
// before it is opened and extracted through package extract, which refuses
// unsafe entries.
//
// Downloading an archive URL is bounded: connecting (TCP and TLS) by
// [Fetcher.ConnectTimeout], every wait for the server (the response
// headers, then each read of the body) by [Fetcher.IdleTimeout], and the
// size by what release.lock records for the archive or, before it records
// one, by the source's max_size (default [config.DefaultMaxArchiveSize]):
// a download is stopped as soon as it passes the bound, and a
// Content-Length above it is refused before the body is read. A redirect
// is followed only to the URL's own host or to a host the source lists in
// allow_redirect_hosts, and never from https to http. The bytes hashed are
// the bytes served: no transparent decompression.
//
// Fetching a git source is bounded too. Before git runs, mkrelease
// connects to the server itself (http, https and git:// URLs without a
// proxy in the environment) within [Fetcher.ConnectTimeout], since git has
// no connect timeout of its own; an ssh URL gets ssh's ConnectTimeout. A
// transfer that brings less than a byte a second for [Fetcher.IdleTimeout]
// is stopped (http.lowSpeedLimit and http.lowSpeedTime; ssh's
// ServerAliveInterval), and the whole fetch, every attempt together, by the
// source's fetch_timeout (default [config.DefaultFetchTimeout]): then git
// and the helpers it started are killed. git runs without the system's and
// the user's configuration (so with no credential helper), without a
// terminal prompt (GIT_TERMINAL_PROMPT=0) and ssh in batch mode; a
// GIT_SSH_COMMAND in the environment replaces mkrelease's ssh options.
package source

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/extract"
	"github.com/mkrelease/mkrelease/internal/pin"
	"github.com/mkrelease/mkrelease/internal/procgroup"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

// Fetcher materialises sources, caching git repositories and downloads
// under CacheDir.
type Fetcher struct {
	// ProjectDir is the folder of release.toml; relative locations resolve
	// against it.
	ProjectDir string
	// CacheDir holds git/ (bare repositories by URL) and downloads/ (archives
	// by sha256).
	CacheDir string
	// ConnectTimeout bounds connecting to an archive's server, TLS
	// handshake included, and to a git server (default
	// DefaultConnectTimeout).
	ConnectTimeout time.Duration
	// IdleTimeout bounds each wait for an archive's server: for the
	// response headers, and for every read of the body (default
	// DefaultIdleTimeout). A download that keeps bringing data is not
	// limited in time. A git fetch is stopped when it brings less than a
	// byte a second for as long (rounded up to whole seconds).
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// Default download timeouts.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultIdleTimeout    = 60 * time.Second
)

// Expected is what release.lock already records about a source, enforced
// while the source is fetched. The zero value expects nothing.
type Expected struct {
	// ArchiveSize is the archive's size in bytes (0: not recorded). A
	// download that grows past it is stopped.
	ArchiveSize int64
}

// Facts are what materialising a source learned about it.
type Facts struct {
	// Commit and CommitTime (seconds) for a git source.
	Commit     string
	CommitTime int64
	// ArchiveSHA256 and ArchiveSize (bytes) for an archive source
	// (verified).
	ArchiveSHA256 string
	ArchiveSize   int64
}

// Error is a source that cannot be materialised as pinned. It maps to exit
// status 1 (the pin holds but the input does not match or is unavailable).
type Error struct {
	Source string
	Msg    string
	Hint   string
	Err    error
}

// Error names the source, the problem and what to do.
func (e *Error) Error() string {
	s := "source " + e.Source + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		s += "\n\thint: " + e.Hint
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *Error) ExitCode() int { return 1 }

func (f *Fetcher) logger() *slog.Logger {
	if f.Logger != nil {
		return f.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Materialize writes the pinned tree of s into dst, which must not exist;
// its parent is created when missing. want is what release.lock records
// about s.
func (f *Fetcher) Materialize(ctx context.Context, s config.Source, dst string, want Expected) (Facts, error) {
	m, ok := materializers[string(s.Kind())]
	if !ok {
		return Facts{}, &Error{Source: s.Name, Msg: fmt.Sprintf("kind %q cannot be materialised: want %s", s.Kind(), pin.Want())}
	}
	return m(f, ctx, s, dst, want)
}

// materializer writes the pinned tree of a source of one kind.
type materializer func(f *Fetcher, ctx context.Context, s config.Source, dst string, want Expected) (Facts, error)

// materializers holds the materializer of every kind of source, by
// [pin.Kind] name.
var materializers = map[string]materializer{
	pin.LocalName:   (*Fetcher).local,
	pin.GitName:     (*Fetcher).git,
	pin.ArchiveName: (*Fetcher).archive,
}

// --- local ---

// LocalFolder returns the absolute path of the project folder of the local
// source s, refusing one that is not a folder, or that a symbolic link (the
// folder's own or one on its way) takes out of the project: its files
// would go into the wheels. Links that stay inside are resolved in the
// path returned; the tree's own walk refuses any link within it.
func (f *Fetcher) LocalFolder(s config.Source) (string, error) {
	dir, err := projectfile.Folder(f.ProjectDir, s.Local)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", &Error{Source: s.Name, Msg: fmt.Sprintf("local folder %s not found", s.Local), Hint: "fix `local` in release.toml"}
	case err != nil:
		return "", projectError(s, "local folder", err, "fix `local` in release.toml")
	}
	return dir, nil
}

// local copies the project folder s.Local.
func (f *Fetcher) local(ctx context.Context, s config.Source, dst string, _ Expected) (Facts, error) {
	dir, err := f.LocalFolder(s)
	if err != nil {
		return Facts{}, err
	}
	if err := treehash.Copy(ctx, dir, dst); err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "copy", Err: err}
	}
	return Facts{}, nil
}

// --- git ---

// gitLocation is where the git source s is fetched from: its URL, or its
// repository folder in the project, which no symbolic link may take out of
// the project.
func (f *Fetcher) gitLocation(s config.Source) (string, error) {
	if strings.Contains(s.Git, "://") || strings.HasPrefix(s.Git, "git@") {
		return s.Git, nil
	}
	dir, err := projectfile.Folder(f.ProjectDir, s.Git)
	if err != nil {
		return "", projectError(s, "git repository", err, "fix `git` in release.toml")
	}
	return dir, nil
}

// projectError is the *Error for a project file or folder (what) of source
// s that could not be opened: a symbolic link leading out of the project
// names itself and its remedy; anything else is told with hint.
func projectError(s config.Source, what string, err error, hint string) *Error {
	var link *projectfile.LinkError
	if errors.As(err, &link) {
		return &Error{Source: s.Name, Msg: what + " " + link.Problem(), Hint: link.Remedy()}
	}
	return &Error{Source: s.Name, Msg: what, Err: err, Hint: hint}
}

func (f *Fetcher) git(ctx context.Context, s config.Source, dst string, _ Expected) (Facts, error) {
	loc, err := f.gitLocation(s)
	if err != nil {
		return Facts{}, err
	}
	key := sha256.Sum256([]byte(loc))
	repo := filepath.Join(f.CacheDir, "git", hex.EncodeToString(key[:12])+".git")
	fail := func(msg string, err error, hint string) (Facts, error) {
		return Facts{}, &Error{Source: s.Name, Msg: msg, Err: err, Hint: hint}
	}
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err != nil {
		if err := os.MkdirAll(filepath.Dir(repo), 0o755); err != nil {
			return fail("create git cache", err, "")
		}
		tmp, err := os.MkdirTemp(filepath.Dir(repo), ".init-*")
		if err != nil {
			return fail("create git cache", err, "")
		}
		if _, err := runGit(ctx, tmp, "init", "--bare", "--quiet"); err != nil {
			os.RemoveAll(tmp)
			return fail("create git cache", err, "is git installed?")
		}
		if err := os.Rename(tmp, repo); err != nil {
			os.RemoveAll(tmp)
			if _, serr := os.Stat(filepath.Join(repo, "HEAD")); serr != nil {
				return fail("create git cache", err, "")
			}
		}
	}
	commit := s.Commit
	if !hasCommit(ctx, repo, commit) {
		f.logger().Info("fetching git source", "source", s.Name, "location", s.Git, "commit", commit)
		if err := f.fetchGit(ctx, s, repo, loc); err != nil {
			return Facts{}, err
		}
		if !hasCommit(ctx, repo, commit) {
			return fail("commit "+commit+" not found in "+s.Git, nil, "check `commit` in release.toml: it must be a full commit id reachable from a branch or tag")
		}
	}
	out, err := runGit(ctx, repo, "show", "-s", "--format=%ct", commit)
	if err != nil {
		return fail("read commit time", err, "")
	}
	ct, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return fail("read commit time", err, "")
	}
	if err := writeGitTree(ctx, repo, commit, dst); err != nil {
		os.RemoveAll(dst)
		return fail("check out "+commit, err, "")
	}
	return Facts{Commit: commit, CommitTime: ct}, nil
}

// fetchGit fetches s's commit from loc into the cache repository repo,
// bounded as the package documentation says. It asks for the commit itself
// first (servers usually allow it), then falls back to every branch and
// tag; a bound that stops the first attempt is not retried.
func (f *Fetcher) fetchGit(ctx context.Context, s config.Source, repo, loc string) error {
	timeout := s.FetchTimeout.Duration
	if timeout <= 0 {
		timeout = config.DefaultFetchTimeout
	}
	errTimeout := errors.New("fetch timeout")
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	fail := func(msg string, err error, hint string) error {
		return &Error{Source: s.Name, Msg: "fetch " + s.Git + ": " + msg, Err: err, Hint: hint}
	}
	retry := "check the server and the network, then retry; the commit is fetched once and then served from the cache"
	idle := orDefault(f.IdleTimeout, DefaultIdleTimeout)
	// bound turns a failure that a bound (or an interrupt) caused into the
	// source's error; nil for any other failure.
	bound := func(err error) error {
		switch {
		case errors.Is(context.Cause(ctx), errTimeout):
			return fail(fmt.Sprintf("not done within %s (fetch_timeout)", timeout), nil,
				fmt.Sprintf("if the repository is that large or the network that slow, raise fetch_timeout of the [[source]] named %q in release.toml (e.g. fetch_timeout = \"1h\"); the commit is fetched once and then served from the cache", s.Name))
		case ctx.Err() != nil:
			return fail("interrupted", context.Cause(ctx), "")
		case strings.Contains(err.Error(), "Operation too slow") || strings.Contains(err.Error(), "not responding"):
			return fail(fmt.Sprintf("the server sent less than a byte a second for %s (idle timeout)", time.Duration(wholeSeconds(idle))*time.Second), err, retry)
		}
		return nil
	}
	env := gitEnv()
	if addr := probeAddr(loc, env); addr != "" {
		connect := orDefault(f.ConnectTimeout, DefaultConnectTimeout)
		c, err := (&net.Dialer{Timeout: connect}).DialContext(ctx, "tcp", addr)
		if err != nil {
			if berr := bound(err); berr != nil {
				return berr
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				return fail(fmt.Sprintf("could not connect to %s within %s", addr, connect), nil, retry)
			}
			return fail("could not connect to "+addr, err, retry)
		}
		c.Close()
	}
	_, err := runGitEnv(ctx, env, repo, f.fetchArgs("--no-tags", loc, s.Commit)...)
	if err != nil {
		if berr := bound(err); berr != nil {
			return berr
		}
	}
	if err != nil || !hasCommit(ctx, repo, s.Commit) {
		if _, err := runGitEnv(ctx, env, repo, f.fetchArgs(loc, "+refs/heads/*:refs/remotes/pin/*", "+refs/tags/*:refs/tags/*")...); err != nil {
			if berr := bound(err); berr != nil {
				return berr
			}
			return &Error{Source: s.Name, Msg: "fetch " + s.Git, Err: err, Hint: "check the URL and your access to it; the commit is fetched once and then served from the cache"}
		}
	}
	return nil
}

// wholeSeconds is d as git and ssh take a timeout: whole seconds, rounded
// up, at least one.
func wholeSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
}

// fetchArgs is the command line (after "git -C REPO") of one fetch: what
// bounds it, then `fetch --quiet` and args.
func (f *Fetcher) fetchArgs(args ...string) []string {
	idle := strconv.Itoa(wholeSeconds(orDefault(f.IdleTimeout, DefaultIdleTimeout)))
	connect := strconv.Itoa(wholeSeconds(orDefault(f.ConnectTimeout, DefaultConnectTimeout)))
	return append([]string{
		"-c", "credential.helper=", // an empty value clears the list: no helper is asked
		"-c", "http.lowSpeedLimit=1",
		"-c", "http.lowSpeedTime=" + idle,
		"-c", "core.sshCommand=ssh -o BatchMode=yes -o ConnectTimeout=" + connect + " -o ServerAliveInterval=" + idle + " -o ServerAliveCountMax=1",
		"fetch", "--quiet",
	}, args...)
}

// probeAddr is the host:port a fetch of loc connects to first when that is
// a TCP connection mkrelease can make itself to bound the connect: an
// http, https or git:// URL, when env (git's environment) names no proxy.
// "" for paths, file:// and ssh URLs, and behind a proxy.
func probeAddr(loc string, env []string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return ""
	}
	port := map[string]string{"http": "80", "https": "443", "git": "9418"}[u.Scheme]
	if port == "" {
		return ""
	}
	if u.Scheme != "git" {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			switch strings.ToUpper(k) {
			case "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY":
				if v != "" {
					return ""
				}
			}
		}
	}
	if p := u.Port(); p != "" {
		port = p
	}
	return net.JoinHostPort(u.Hostname(), port)
}

func hasCommit(ctx context.Context, repo, commit string) bool {
	_, err := runGit(ctx, repo, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// gitEnv keeps user and system configuration from changing what is read.
func gitEnv() []string {
	env := []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}
	for _, k := range []string{"PATH", "HOME", "SSH_AUTH_SOCK", "GIT_SSH_COMMAND", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func runGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return runGitEnv(ctx, gitEnv(), dir, args...)
}

// gitWaitDelay is how long a killed git's output may stay open (a helper it
// started that escaped the kill) before Wait gives up on it.
const gitWaitDelay = 2 * time.Second

// runGitEnv runs git in dir with env. git runs in its own process group:
// when ctx ends the whole group is killed, the transport helpers git
// started (git-remote-https, ssh) included.
func runGitEnv(ctx context.Context, env []string, dir string, args ...string) ([]byte, error) {
	return runGitInput(ctx, env, dir, nil, args...)
}

// runGitInput is runGitEnv with stdin.
func runGitInput(ctx context.Context, env []string, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	cmd.Stdin = stdin
	procgroup.KillOnCancel(cmd)
	cmd.WaitDelay = gitWaitDelay
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// writeGitTree writes the files of commit into dst straight from the object
// store (no checkout, so no attributes, filters or hooks apply).
func writeGitTree(ctx context.Context, repo, commit, dst string) error {
	out, err := runGit(ctx, repo, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return err
	}
	type entry struct{ mode, oid, path string }
	var entries []entry
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := strings.Cut(string(rec), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return fmt.Errorf("unexpected ls-tree line %q", rec)
		}
		switch fields[0] {
		case "100644", "100755":
		case "120000":
			return fmt.Errorf("%s: symbolic link in the pinned tree: mkrelease hashes trees by content and refuses links", path)
		case "160000":
			return fmt.Errorf("%s: git submodule: declare the submodule as its own [[source]]", path)
		default:
			return fmt.Errorf("%s: unsupported git mode %s", path, fields[0])
		}
		if err := safeRel(path); err != nil {
			return err
		}
		entries = append(entries, entry{fields[0], fields[2], path})
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "cat-file", "--batch")
	cmd.Env = gitEnv()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		w := bufio.NewWriter(stdin)
		for _, e := range entries {
			fmt.Fprintln(w, e.oid)
		}
		w.Flush()
		stdin.Close()
	}()
	r := bufio.NewReader(stdout)
	var werr error
	for _, e := range entries {
		header, err := r.ReadString('\n')
		if err != nil {
			werr = fmt.Errorf("read object %s: %w", e.oid, err)
			break
		}
		f := strings.Fields(header)
		if len(f) != 3 || f[1] != "blob" {
			werr = fmt.Errorf("object %s for %s: unexpected header %q", e.oid, e.path, header)
			break
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			werr = fmt.Errorf("object %s: %w", e.oid, err)
			break
		}
		mode := os.FileMode(0o644)
		if e.mode == "100755" {
			mode = 0o755
		}
		if err := writeFile(filepath.Join(dst, filepath.FromSlash(e.path)), io.LimitReader(r, size), mode); err != nil {
			werr = err
			break
		}
		if _, err := r.Discard(1); err != nil { // the newline after each object
			werr = err
			break
		}
	}
	if werr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return werr
	}
	return cmd.Wait()
}

func safeRel(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
		return fmt.Errorf("%q: unsafe path in the pinned tree", p)
	}
	return nil
}

func writeFile(name string, r io.Reader, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// --- archives ---

func (f *Fetcher) archive(ctx context.Context, s config.Source, dst string, want Expected) (Facts, error) {
	// Extraction creates dst beside a temporary folder in its parent, which
	// must exist: when an archive is the first source nothing else has
	// created it yet.
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "create the workspace folder", Err: err}
	}
	if strings.Contains(s.Archive, "://") {
		path, size, err := f.download(ctx, s, want)
		if err != nil {
			return Facts{}, err
		}
		if _, err := extract.ExtractFile(ctx, path, dst, extractOptions(s)); err != nil {
			return Facts{}, &Error{Source: s.Name, Msg: "extract " + s.Archive, Err: err}
		}
		return Facts{ArchiveSHA256: s.SHA256, ArchiveSize: size}, nil
	}
	// A project file: opened beneath the project (a symbolic link leading
	// out of it is refused, naming it), hashed and extracted from the one
	// open file, so what is extracted is what was checked.
	file, _, err := projectfile.Open(f.ProjectDir, s.Archive)
	if err != nil {
		return Facts{}, projectError(s, "archive", err, "fix `archive` in release.toml")
	}
	defer file.Close()
	h := sha256.New()
	size, err := io.Copy(h, file)
	if err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "read archive " + s.Archive, Err: err}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
		return Facts{}, &Error{Source: s.Name, Msg: fmt.Sprintf("archive %s has sha256 %s, release.toml pins %s", s.Archive, got, s.SHA256),
			Hint: "the archive changed: obtain the pinned one again, or after review update sha256 in release.toml and run `mkrelease lock`"}
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "read archive " + s.Archive, Err: err}
	}
	if _, err := extract.Extract(ctx, s.Archive, file, dst, extractOptions(s)); err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "extract " + s.Archive, Err: err}
	}
	return Facts{ArchiveSHA256: s.SHA256, ArchiveSize: size}, nil
}

// extractOptions are how the archive of source s is extracted: its
// strip_components, and its max_entries and max_unpacked_size as the
// limits, which a refusal by them names. The other limits (a file's size,
// the compression ratio) are the extractor's own.
func extractOptions(s config.Source) extract.Options {
	where := " of [[source]] " + strconv.Quote(s.Name) + " in release.toml"
	return extract.Options{
		StripComponents: s.StripComponents,
		Limits:          extract.Limits{MaxEntries: s.MaxEntries, MaxTotalBytes: s.MaxUnpackedSize},
		Settings:        extract.Settings{Entries: "max_entries" + where, TotalBytes: "max_unpacked_size (in bytes)" + where},
	}
}

// sizeLimit is the most bytes a download of s may bring, and what sets it.
func sizeLimit(s config.Source, want Expected) (int64, string) {
	limit, why := int64(config.DefaultMaxArchiveSize), "the default download cap (set max_size to change it)"
	if s.MaxSize > 0 {
		limit, why = s.MaxSize, "max_size"
	}
	if want.ArchiveSize > 0 && want.ArchiveSize <= limit {
		limit, why = want.ArchiveSize, "the size release.lock records for it"
	}
	return limit, why
}

// download returns the cached archive for s and its size, fetching and
// verifying it when absent. The cache is keyed by the pinned digest, and a
// cached file is re-hashed before use so a damaged entry is fetched again.
func (f *Fetcher) download(ctx context.Context, s config.Source, want Expected) (string, int64, error) {
	dir := filepath.Join(f.CacheDir, "downloads")
	path := filepath.Join(dir, s.SHA256)
	if got, n, err := checksum.File(path); err == nil {
		if got == s.SHA256 {
			return path, n, nil
		}
		f.logger().Warn("cached download is damaged; fetching again", "source", s.Name, "file", path)
		os.Remove(path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, &Error{Source: s.Name, Msg: "create download cache", Err: err}
	}
	f.logger().Info("downloading archive", "source", s.Name, "url", s.Archive)
	limit, why := sizeLimit(s, want)
	idle := orDefault(f.IdleTimeout, DefaultIdleTimeout)
	fail := func(msg string, err error, hint string) (string, int64, error) {
		return "", 0, &Error{Source: s.Name, Msg: "download " + s.Archive + ": " + msg, Err: err, Hint: hint}
	}
	retry := "check the server and the network, then retry; once fetched the archive is served from the cache"

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Archive, nil)
	if err != nil {
		return fail("invalid URL", err, "fix `archive` in release.toml")
	}
	resp, err := f.client(s).Do(req)
	if err != nil {
		var redir *redirectError
		var ne net.Error
		var op *net.OpError
		switch {
		case errors.As(err, &redir):
			return fail(redir.Error(), nil, redir.hint(s.Name))
		case errors.As(err, &op) && op.Op == "dial" && op.Timeout():
			return fail(fmt.Sprintf("could not connect within %s", orDefault(f.ConnectTimeout, DefaultConnectTimeout)), nil, retry)
		case errors.As(err, &ne) && ne.Timeout():
			return fail(fmt.Sprintf("no response within %s (idle timeout)", idle), nil, retry)
		}
		return fail("request failed", err, "check the URL and the network; once fetched the archive is served from the cache")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("HTTP "+resp.Status, nil, "check the URL")
	}
	if resp.ContentLength > limit {
		return fail(fmt.Sprintf("the server announces %d bytes, more than the %d allowed by %s", resp.ContentLength, limit, why), nil, sizeHint(why))
	}
	out, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fail("create cache file", err, "")
	}
	// The idle watchdog: every read that brings data pushes it back.
	errIdle := errors.New("idle timeout")
	watchdog := time.AfterFunc(idle, func() { cancel(errIdle) })
	defer watchdog.Stop()
	body := &idleReader{r: resp.Body, timer: watchdog, idle: idle}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(body, limit+1))
	switch {
	case err != nil && errors.Is(context.Cause(ctx), errIdle):
		out.Abort()
		return fail(fmt.Sprintf("the server sent nothing for %s (idle timeout) after %d bytes", idle, n), nil, retry)
	case err != nil:
		out.Abort()
		return fail("read", err, retry)
	case n > limit:
		out.Abort()
		return fail(fmt.Sprintf("more than the %d bytes allowed by %s: stopped after %d bytes", limit, why, n), nil, sizeHint(why))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
		out.Abort()
		return "", 0, &Error{Source: s.Name, Msg: fmt.Sprintf("downloaded %s has sha256 %s, release.toml pins %s", s.Archive, got, s.SHA256),
			Hint: "the file at that URL changed or was tampered with: do not re-pin without finding out why"}
	}
	if err := out.Commit(); err != nil {
		return fail("store in the cache", err, "")
	}
	return path, n, nil
}

func sizeHint(why string) string {
	if strings.HasPrefix(why, "the size release.lock") {
		return "the file at that URL is not the archive that was locked: find out why before re-locking"
	}
	return "if the archive really is that large, raise max_size (in bytes) of this [[source]] in release.toml"
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// client is the HTTP client of one source's download: bounded connect and
// header waits, no transparent decompression, and the redirect policy of
// the source.
func (f *Fetcher) client(s config.Source) *http.Client {
	connect := orDefault(f.ConnectTimeout, DefaultConnectTimeout)
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connect,
		ResponseHeaderTimeout: orDefault(f.IdleTimeout, DefaultIdleTimeout),
		DisableCompression:    true, // hash the bytes served, not a decoding of them
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		return checkRedirect(s, req.URL, via)
	}}
}

// maxRedirects bounds a redirect chain.
const maxRedirects = 10

// checkRedirect allows a redirect to the original URL's host or to a host
// the source allows, never from https to http.
func checkRedirect(s config.Source, to *url.URL, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &redirectError{to: to, msg: fmt.Sprintf("stopped after %d redirects", len(via))}
	}
	prev := via[len(via)-1].URL
	if prev.Scheme == "https" && to.Scheme != "https" {
		return &redirectError{to: to, downgrade: true, msg: "redirected from https to " + to.Scheme + " (" + to.Redacted() + ")"}
	}
	host := strings.ToLower(to.Hostname())
	if host == strings.ToLower(via[0].URL.Hostname()) {
		return nil
	}
	for _, h := range s.AllowRedirectHosts {
		if host == h {
			return nil
		}
	}
	return &redirectError{to: to, host: host, msg: fmt.Sprintf("redirected to %s, on host %s, which release.toml does not allow", to.Redacted(), host)}
}

// redirectError is a redirect the policy refuses.
type redirectError struct {
	to        *url.URL
	host      string // set for a host not allowed
	downgrade bool
	msg       string
}

func (e *redirectError) Error() string { return e.msg }

func (e *redirectError) hint(source string) string {
	switch {
	case e.downgrade:
		return "a redirect to plain http is never followed: use an https URL that serves the archive directly"
	case e.host != "":
		return fmt.Sprintf("if %s is trusted to serve this archive, add allow_redirect_hosts = [%q] to the [[source]] named %q; or set archive to the final URL", e.host, e.host, source)
	}
	return "set archive to the final URL"
}

// idleReader pushes its timer back by idle on every read that brings data.
type idleReader struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}
