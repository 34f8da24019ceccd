package source

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/finding"
)

// WorkTree is how a source read from a git work tree on this machine
// stands against that repository: a local source inside a repository (the
// project's own folder, most often), or a git source whose location is a
// repository with a work tree (the project's own repository, a checkout
// beside it). A release built from a tree that no commit holds, or from a
// commit the work tree has moved past, is a stale or unreproducible
// release that nothing else would point out: the build reads exactly what
// the lock pins, whatever the work tree shows.
type WorkTree struct {
	// Source is the source's name.
	Source string
	// Kind is the source's kind (local or git).
	Kind config.SourceKind
	// Root is the repository's top folder, and Path the source's folder
	// below it (slash-separated, "" for the whole repository).
	Root, Path string
	// Head is the commit checked out.
	Head string
	// Pinned is the commit the lock pins (git sources; "" for local ones).
	Pinned string
	// Ahead is how many commits HEAD is past Pinned that change more than
	// the excluded files (release.toml, release.lock: pinning a commit and
	// committing the pin makes one), when Pinned is one of HEAD's
	// ancestors; Diverged is set when it is not.
	Ahead    int
	Diverged bool
	// excluded are the excluded files, slash-separated relative to Root,
	// and exclude the pathspecs that leave them out.
	excluded map[string]bool
	exclude  []string
	// Changed are the files below Path whose work tree differs from HEAD
	// (changed, removed, or new and not ignored), slash-separated paths
	// relative to Root, sorted.
	Changed []string
	// Filtered are files below Path that git passes through a filter
	// (.gitattributes, Git LFS for one): their work tree is not compared.
	Filtered int
}

// Clean reports whether the work tree below Path is what HEAD holds.
func (w *WorkTree) Clean() bool { return len(w.Changed) == 0 }

// Current reports whether the build reads what HEAD holds: always for a
// local source, and for a git source when HEAD is the pinned commit or
// descends from it by commits that change only the excluded files.
func (w *WorkTree) Current() bool { return w.Pinned == "" || (!w.Diverged && w.Ahead == 0) }

// Problems says, one sentence each with the remedy, why the release would
// not be built from what the work tree shows: HEAD moved away from the
// pinned commit, or changes no commit holds. None for a current, clean
// tree.
func (w *WorkTree) Problems() []string {
	var out []string
	where := w.Root
	if w.Path != "" {
		where = filepath.Join(w.Root, filepath.FromSlash(w.Path))
	}
	switch {
	case w.Current():
	case w.Diverged:
		out = append(out, fmt.Sprintf("source %s: HEAD of %s is commit %s, which does not descend from the pinned commit %s: the build reads %s; "+
			"to build HEAD, set commit = %q for source %s in release.toml and run `mkrelease lock`", w.Source, w.Root, w.Head, w.Pinned, w.Pinned, w.Head, w.Source))
	default:
		out = append(out, fmt.Sprintf("source %s: HEAD of %s is commit %s; %d commit%s since the pinned commit %s change its files: the build reads %s, without them; "+
			"to build HEAD, set commit = %q for source %s in release.toml and run `mkrelease lock`", w.Source, w.Root, w.Head, w.Ahead, finding.Plural(w.Ahead), w.Pinned, w.Pinned, w.Head, w.Source))
	}
	if !w.Clean() {
		files := w.Changed
		more := ""
		if len(files) > 5 {
			files, more = files[:5], fmt.Sprintf(" and %d more", len(w.Changed)-5)
		}
		list := strings.Join(files, ", ") + more
		switch w.Kind {
		case config.SourceGit:
			out = append(out, fmt.Sprintf("source %s: the work tree of %s has %d uncommitted change%s (%s) that the build does not see: it reads commit %s; "+
				"commit them and run `mkrelease lock`, or set them aside", w.Source, where, len(w.Changed), finding.Plural(len(w.Changed)), list, w.Pinned))
		default:
			out = append(out, fmt.Sprintf("source %s: %s has %d uncommitted change%s (%s): the build reads them, but no commit holds them, so nobody can rebuild this release from the repository; "+
				"commit them and run `mkrelease lock`", w.Source, where, len(w.Changed), finding.Plural(len(w.Changed)), list))
		}
	}
	return out
}

// State is what manifest.json records of the work tree: "clean" or
// "modified".
func (w *WorkTree) State() string {
	if w.Clean() {
		return "clean"
	}
	return "modified"
}

// WorkTree inspects the work tree a source is read from, when it is one:
// a local source inside a git repository, or a git source whose location
// is a project-relative path to a repository with a work tree. pinned is
// the commit release.toml pins for a git source. project are the
// project's configuration files, release.toml first, then release.lock
// (absolute paths): neither their commits nor their uncommitted changes
// count. A local source's repository counts only when it tracks
// release.toml: a project that merely lies inside some repository (a home
// folder kept in git) is not that repository's. It returns nil, and no
// error, for a source read from elsewhere (an archive, a URL, a folder in
// no repository, or in one that is not the project's), or where git is
// not installed.
//
// git runs without the system's and the user's configuration and with the
// repository's fsmonitor hook off, and only commands that read objects,
// the index and ignore rules (rev-parse, ls-tree, ls-files, merge-base,
// rev-list, check-attr): nothing the repository configures runs. The work
// tree's files are compared with HEAD's by hashing them here, as git
// hashes a blob, rather than by git status, which would run the clean
// filters the repository's configuration names.
func (f *Fetcher) WorkTree(ctx context.Context, s config.Source, pinned string, project ...string) (*WorkTree, error) {
	var dir string
	switch s.Kind() {
	case config.SourceLocal:
		d, err := f.LocalFolder(s)
		if err != nil {
			return nil, err
		}
		dir = d
	case config.SourceGit:
		loc, err := f.gitLocation(s)
		if err != nil || strings.Contains(loc, "://") || strings.HasPrefix(loc, "git@") {
			return nil, err
		}
		dir = loc
	default:
		return nil, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, nil
	}
	out, err := worktreeGit(ctx, dir, "rev-parse", "--is-inside-work-tree", "--show-toplevel")
	if err != nil {
		return nil, nil // not in a work tree (no repository, or a bare one)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "true" {
		return nil, nil
	}
	root := lines[1]
	w := &WorkTree{Source: s.Name, Kind: s.Kind(), Root: root, excluded: map[string]bool{}}
	tracksConfig := false
	for i, x := range project {
		if real, err := filepath.EvalSymlinks(x); err == nil {
			x = real
		}
		rel, err := filepath.Rel(root, x)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(rel)
		w.excluded[rel] = true
		w.exclude = append(w.exclude, ":(exclude,literal)"+rel)
		if i == 0 {
			_, err := worktreeGit(ctx, root, "ls-files", "--error-unmatch", "--", ":(literal)"+rel)
			tracksConfig = err == nil
		}
	}
	if s.Kind() == config.SourceLocal {
		if !tracksConfig {
			return nil, nil // not the project's repository
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", s.Name, err)
		}
		rel, err := filepath.Rel(root, real)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, nil
		}
		if rel != "." {
			w.Path = filepath.ToSlash(rel)
		}
	} else {
		w.Pinned = pinned
	}
	head, err := worktreeGit(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return nil, nil // a repository without a commit yet: nothing to compare with
	}
	w.Head = strings.TrimSpace(string(head))
	if w.Pinned != "" && w.Pinned != w.Head {
		if _, err := worktreeGit(ctx, root, "merge-base", "--is-ancestor", w.Pinned, w.Head); err != nil {
			w.Diverged = true
		} else {
			n, err := worktreeGit(ctx, root, append([]string{"rev-list", "--count", w.Pinned + ".." + w.Head, "--", "."}, w.exclude...)...)
			if err != nil {
				return nil, fmt.Errorf("source %s: count the commits past %s: %w", s.Name, w.Pinned, err)
			}
			w.Ahead, _ = strconv.Atoi(strings.TrimSpace(string(n)))
		}
	}
	if err := w.compare(ctx); err != nil {
		return nil, fmt.Errorf("source %s: compare the work tree of %s with HEAD: %w", s.Name, root, err)
	}
	return w, nil
}

// compare fills Changed and Filtered: every file HEAD holds below Path
// hashed from the work tree, and the new files git does not ignore.
func (w *WorkTree) compare(ctx context.Context) error {
	spec := []string{"--", "."}
	if w.Path != "" {
		spec[1] = ":(literal)" + w.Path
	}
	tree, err := worktreeGit(ctx, w.Root, append([]string{"ls-tree", "-r", "-z", "--full-tree", "HEAD"}, spec...)...)
	if err != nil {
		return err
	}
	changed := map[string]bool{}
	for _, rec := range bytes.Split(tree, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := strings.Cut(string(rec), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			return fmt.Errorf("unexpected ls-tree line %q", rec)
		}
		if w.excluded[name] {
			continue
		}
		same, err := sameAsBlob(filepath.Join(w.Root, filepath.FromSlash(name)), fields[0], fields[2])
		if err != nil {
			return err
		}
		if !same {
			changed[name] = true
		}
	}
	others, err := worktreeGit(ctx, w.Root, append([]string{"ls-files", "-z", "--others", "--exclude-standard", "--full-name"}, append(spec, w.exclude...)...)...)
	if err != nil {
		return err
	}
	for _, name := range bytes.Split(others, []byte{0}) {
		if len(name) > 0 {
			changed[string(name)] = true
		}
	}
	if len(changed) > 0 {
		// A file git filters (Git LFS: the work tree holds the content,
		// the blob a pointer) differs by design; it is not compared.
		var in bytes.Buffer
		for n := range changed {
			in.WriteString(n + "\x00")
		}
		attrs, err := worktreeGitInput(ctx, w.Root, &in, "check-attr", "-z", "--stdin", "filter")
		if err != nil {
			return err
		}
		parts := bytes.Split(attrs, []byte{0})
		for i := 0; i+2 < len(parts); i += 3 {
			if v := string(parts[i+2]); v != "unspecified" && v != "unset" {
				delete(changed, string(parts[i]))
				w.Filtered++
			}
		}
	}
	w.Changed = slices.Sorted(maps.Keys(changed))
	return nil
}

// sameAsBlob reports whether the work tree's file p is what HEAD holds:
// the blob oid with the mode mode (a regular file, executable or not, or a
// symbolic link). A submodule is not compared.
func sameAsBlob(p, mode, oid string) (bool, error) {
	if mode == "160000" {
		return true, nil
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return false, nil // removed, or a parent replaced by a file
	}
	if err != nil {
		return false, err
	}
	var h hash.Hash = sha1.New()
	if len(oid) == 64 { // a repository of the sha256 object format
		h = sha256.New()
	}
	switch {
	case mode == "120000" && fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return false, err
		}
		fmt.Fprintf(h, "blob %d\x00%s", len(target), target)
	case (mode == "100644" || mode == "100755") && fi.Mode().IsRegular():
		if (mode == "100755") != (fi.Mode()&0o100 != 0) {
			return false, nil
		}
		f, err := os.Open(p)
		if err != nil {
			return false, err
		}
		defer f.Close()
		fmt.Fprintf(h, "blob %d\x00", fi.Size())
		if n, err := io.Copy(h, f); err != nil {
			return false, err
		} else if n != fi.Size() {
			return false, nil // changed while read
		}
	default:
		return false, nil // another kind of file than HEAD's
	}
	return hex.EncodeToString(h.Sum(nil)) == oid, nil
}

// worktreeGit runs git in dir as WorkTree does: without the system's and
// the user's configuration, and with the repository's fsmonitor off.
func worktreeGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return worktreeGitInput(ctx, dir, nil, args...)
}

// worktreeGitInput is worktreeGit with stdin.
func worktreeGitInput(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	return runGitInput(ctx, gitEnv(), dir, stdin, append([]string{"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"}, args...)...)
}
