// Package source materialises pinned sources: it writes the exact tree of a
// local folder, a git commit or a checksummed archive into a fresh folder,
// never touching the original. Git repositories and downloaded archives are
// cached by URL and by digest; every archive is checked against its sha256
// before it is opened and extracted through package extract, which refuses
// unsafe entries.
package source

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/extract"
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
	// HTTP fetches archive URLs (default http.DefaultClient).
	HTTP   *http.Client
	Logger *slog.Logger
}

// Facts are what materialising a source learned about it.
type Facts struct {
	// Commit and CommitTime (seconds) for a git source.
	Commit     string
	CommitTime int64
	// ArchiveSHA256 for an archive source (verified).
	ArchiveSHA256 string
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

// Materialize writes the pinned tree of s into dst, which must not exist.
func (f *Fetcher) Materialize(ctx context.Context, s config.Source, dst string) (Facts, error) {
	switch s.Kind() {
	case config.SourceLocal:
		dir := filepath.Join(f.ProjectDir, filepath.FromSlash(s.Local))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return Facts{}, &Error{Source: s.Name, Msg: fmt.Sprintf("local folder %s not found", s.Local), Hint: "fix `local` in release.toml"}
		}
		if err := treehash.Copy(ctx, dir, dst); err != nil {
			return Facts{}, &Error{Source: s.Name, Msg: "copy", Err: err}
		}
		return Facts{}, nil
	case config.SourceGit:
		return f.git(ctx, s, dst)
	default:
		return f.archive(ctx, s, dst)
	}
}

// --- git ---

func (f *Fetcher) gitLocation(s config.Source) string {
	if strings.Contains(s.Git, "://") || strings.HasPrefix(s.Git, "git@") {
		return s.Git
	}
	return filepath.Join(f.ProjectDir, filepath.FromSlash(s.Git))
}

func (f *Fetcher) git(ctx context.Context, s config.Source, dst string) (Facts, error) {
	loc := f.gitLocation(s)
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
		// Ask for the commit itself first (servers usually allow it), then
		// fall back to every branch and tag.
		if _, err := runGit(ctx, repo, "fetch", "--quiet", "--no-tags", loc, commit); err != nil || !hasCommit(ctx, repo, commit) {
			if _, err := runGit(ctx, repo, "fetch", "--quiet", loc, "+refs/heads/*:refs/remotes/pin/*", "+refs/tags/*:refs/tags/*"); err != nil {
				return fail("fetch "+s.Git, err, "check the URL and your access to it; the commit is fetched once and then served from the cache")
			}
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
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = gitEnv()
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

func (f *Fetcher) archive(ctx context.Context, s config.Source, dst string) (Facts, error) {
	var path string
	if strings.Contains(s.Archive, "://") {
		p, err := f.download(ctx, s)
		if err != nil {
			return Facts{}, err
		}
		path = p
	} else {
		path = filepath.Join(f.ProjectDir, filepath.FromSlash(s.Archive))
		got, err := fileSHA256(path)
		if err != nil {
			return Facts{}, &Error{Source: s.Name, Msg: "read archive " + s.Archive, Err: err, Hint: "fix `archive` in release.toml"}
		}
		if got != s.SHA256 {
			return Facts{}, &Error{Source: s.Name, Msg: fmt.Sprintf("archive %s has sha256 %s, release.toml pins %s", s.Archive, got, s.SHA256),
				Hint: "the archive changed: obtain the pinned one again, or after review update sha256 in release.toml and run `mkrelease lock`"}
		}
	}
	if _, err := extract.ExtractFile(ctx, path, dst, extract.Options{StripComponents: s.StripComponents}); err != nil {
		return Facts{}, &Error{Source: s.Name, Msg: "extract " + s.Archive, Err: err}
	}
	return Facts{ArchiveSHA256: s.SHA256}, nil
}

// download returns the cached archive for s, fetching and verifying it
// when absent. The cache is keyed by the pinned digest, and a cached file is
// re-hashed before use so a damaged entry is fetched again.
func (f *Fetcher) download(ctx context.Context, s config.Source) (string, error) {
	dir := filepath.Join(f.CacheDir, "downloads")
	path := filepath.Join(dir, s.SHA256)
	if got, err := fileSHA256(path); err == nil {
		if got == s.SHA256 {
			return path, nil
		}
		f.logger().Warn("cached download is damaged; fetching again", "source", s.Name, "file", path)
		os.Remove(path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", &Error{Source: s.Name, Msg: "create download cache", Err: err}
	}
	f.logger().Info("downloading archive", "source", s.Name, "url", s.Archive)
	client := f.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.Archive, nil)
	if err != nil {
		return "", &Error{Source: s.Name, Msg: "download " + s.Archive, Err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", &Error{Source: s.Name, Msg: "download " + s.Archive, Err: err, Hint: "check the URL and the network; once fetched the archive is served from the cache"}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", &Error{Source: s.Name, Msg: fmt.Sprintf("download %s: HTTP %s", s.Archive, resp.Status), Hint: "check the URL"}
	}
	out, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return "", &Error{Source: s.Name, Msg: "download", Err: err}
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), resp.Body); err != nil {
		out.Abort()
		return "", &Error{Source: s.Name, Msg: "download " + s.Archive, Err: err}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != s.SHA256 {
		out.Abort()
		return "", &Error{Source: s.Name, Msg: fmt.Sprintf("downloaded %s has sha256 %s, release.toml pins %s", s.Archive, got, s.SHA256),
			Hint: "the file at that URL changed or was tampered with: do not re-pin without finding out why"}
	}
	if err := out.Commit(); err != nil {
		return "", &Error{Source: s.Name, Msg: "download", Err: err}
	}
	return path, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
