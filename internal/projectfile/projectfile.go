// Package projectfile opens the files and folders a release.toml (or a
// pyproject.toml it reads) names, beneath the project folder: the folder
// of release.toml.
//
// The configuration's rule that a path stays inside the project checks the
// path as written; a symbolic link in the project could still lead
// anywhere on the machine, and whatever it reached would go into the
// release (a readme into the wheels' METADATA, a changelog into
// RELEASE_NOTES.md, a local source's files into a wheel). So every project
// file is opened through an [os.Root] of the project folder: a symbolic
// link, of the file or of a folder on its way, is followed only while it
// stays inside the project, as os.Root follows it. A link that leads
// outside, by a relative target climbing out or by an absolute target
// (which os.Root never follows, even to a place inside the project), is
// refused with a [*LinkError] that names the link, where it points, and
// the remedy: copy what it points to into the project.
//
// Folders (a local source, an overlay tree, the verifier, a find-links
// folder) are checked the same way and handed back with their in-project
// links resolved, so a walk of them starts inside the project; the walks
// themselves (package treehash) refuse every symbolic link they meet. A
// folder is walked by its path once checked: a link put in place of a
// folder inside it while mkrelease runs is refused by the walk, but one put
// in place of the folder itself (or of a folder on its way) after the check
// is not caught here; the files of a local source are still checked
// against their digests as they are packed.
//
// Hard links cannot be told from the file they link: a hard link is the
// file, and git never makes one.
package projectfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// MaxText bounds a project text file (a readme, changelog, lock, policy,
// pyproject.toml): files people write, far smaller.
const MaxText = 64 << 20

// maxLinks bounds the symbolic links followed while explaining a refusal,
// as the kernel bounds a path's (ELOOP).
const maxLinks = 40

// LinkError is a project path that a symbolic link leads out of the
// project.
type LinkError struct {
	// Path is the project-relative path that was asked for.
	Path string
	// Link is the project-relative path of the link that leads outside:
	// Path itself or a folder on its way (or a link another link leads to).
	Link string
	// Target is the link's content, as written.
	Target string
	// Folder says whether Path names a folder (for the remedy).
	Folder bool
	// OnTheWay says the link stands for a folder on the way to Path, not
	// for Path itself (for the remedy).
	OnTheWay bool
}

// Error names the link, where it points, and the remedy.
func (e *LinkError) Error() string {
	return e.Problem() + ": " + e.Remedy()
}

// Problem is what is wrong, without the remedy: the link, where it points,
// and, when the link is not Path itself, the path it is on the way to.
func (e *LinkError) Problem() string {
	where := "outside the project"
	if filepath.IsAbs(e.Target) || strings.HasPrefix(e.Target, `\`) {
		where = "an absolute path, which mkrelease never follows (a link may point only inside the project, by a relative path)"
	}
	msg := fmt.Sprintf("%s is a symbolic link to %s, %s", e.Link, e.Target, where)
	if e.Link != e.Path {
		msg = e.Path + ": " + msg
	}
	return msg
}

// Remedy says how to fix it.
func (e *LinkError) Remedy() string {
	what := "the file"
	switch {
	case e.OnTheWay:
		return fmt.Sprintf("replace the link %s with a real folder inside the project, holding copies of the files it should have", e.Link)
	case e.Folder:
		what = "the folder"
	}
	if e.Link != e.Path {
		return fmt.Sprintf("copy %s into the project in place of the link %s", what, e.Link)
	}
	return fmt.Sprintf("copy %s into the project in place of the link", what)
}

// ExitCode is 2: the project is bad input.
func (e *LinkError) ExitCode() int { return 2 }

// Open opens the regular file at rel, a slash-separated path relative to
// the project folder dir, through an os.Root of dir: no symbolic link
// takes it outside dir ([*LinkError]). It returns the file and its
// FileInfo. A missing file is an error wrapping [fs.ErrNotExist] naming
// rel; so is one that is not a regular file.
func Open(dir, rel string) (*os.File, fs.FileInfo, error) {
	name, err := clean(rel)
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("open the project folder %s: %w", dir, err)
	}
	defer root.Close()
	f, err := root.Open(name)
	if err != nil {
		return nil, nil, explain(dir, rel, false, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", rel)
	}
	return f, st, nil
}

// ReadFile reads the regular file at rel beneath dir as [Open] opens it,
// refusing one of more than max bytes.
func ReadFile(dir, rel string, max int64) ([]byte, error) {
	f, st, err := Open(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d it may have", rel, st.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: more than the %d bytes it may have", rel, max)
	}
	return data, nil
}

// Folder checks that rel names a folder beneath dir, reached through no
// symbolic link that leads outside dir ([*LinkError]), and returns its
// absolute path (dir, made absolute, joined with the path below it that
// every link on the way resolves to): a walk of it starts inside the
// project. A missing folder is an error wrapping
// [fs.ErrNotExist] naming rel.
func Folder(dir, rel string) (string, error) {
	name, err := clean(rel)
	if err != nil {
		return "", err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return "", fmt.Errorf("open the project folder %s: %w", dir, err)
	}
	defer root.Close()
	st, err := root.Stat(name)
	if err != nil {
		return "", explain(dir, rel, true, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", rel)
	}
	// os.Root followed only links inside dir; the path it reached is the
	// one the links resolve to. Resolve it by name too and make sure it is
	// the same folder inside dir.
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("open the project folder %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(realDir, name))
	if err != nil {
		return "", explain(dir, rel, true, err)
	}
	r, err := filepath.Rel(realDir, real)
	if err != nil || !filepath.IsLocal(r) {
		return "", explain(dir, rel, true, fmt.Errorf("%s resolves to %s, outside the project", rel, real))
	}
	// The project folder keeps the name it was given (links above it are
	// the user's choice of where the project is); what is below is
	// resolved.
	out, err := filepath.Abs(filepath.Join(dir, r))
	if err != nil {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	if again, err := os.Stat(out); err != nil || !os.SameFile(st, again) {
		return "", fmt.Errorf("%s changed while it was being opened", rel)
	}
	return out, nil
}

// missingError is a project file or folder that is not there. It is
// fs.ErrNotExist.
type missingError struct {
	rel    string
	folder bool
}

func (e *missingError) Error() string {
	if e.folder {
		return e.rel + ": no such folder"
	}
	return e.rel + ": no such file"
}

func (e *missingError) Unwrap() error { return fs.ErrNotExist }

// clean turns rel into a local name for os.Root, refusing one that is not
// relative or climbs out (the configuration refuses those already: this
// is the backstop).
func clean(rel string) (string, error) {
	p := path.Clean(rel)
	if rel == "" || path.IsAbs(p) || strings.Contains(rel, `\`) || !filepath.IsLocal(filepath.FromSlash(p)) {
		return "", fmt.Errorf("%q is not a path inside the project (relative to the folder of release.toml, with /, not leaving it)", rel)
	}
	return filepath.FromSlash(p), nil
}

// explain turns an error of opening rel beneath dir into the message the
// user needs: a missing file named by rel, or, when a symbolic link on
// the way leads outside the project, a *LinkError naming it.
func explain(dir, rel string, folder bool, err error) error {
	if le := escapingLink(dir, rel); le != nil {
		le.Folder = folder
		return le
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &missingError{rel: rel, folder: folder}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: %w", rel, err)
}

// escapingLink follows rel beneath dir one component at a time, as
// os.Root does, and returns the first symbolic link whose target is
// absolute or climbs out of dir, or nil when none does (a missing
// component ends the search: the path is then simply not there).
func escapingLink(dir, rel string) *LinkError {
	todo := strings.Split(path.Clean(rel), "/")
	var at []string // the resolved components so far, relative to dir
	links := 0
	// The link whose target is being followed, its target, and whether it
	// stands for a folder on the way.
	last, lastTgt, lastOnWay := "", "", false
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(at) == 0 {
				if last == "" {
					return nil // rel itself climbs out: clean refuses it
				}
				return &LinkError{Path: rel, Link: last, Target: lastTgt, OnTheWay: lastOnWay}
			}
			at = at[:len(at)-1]
			continue
		}
		p := path.Join(append(append([]string(nil), at...), c)...)
		st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			at = append(at, c)
			continue
		}
		target, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return nil
		}
		if links++; links > maxLinks {
			return nil
		}
		last, lastTgt, lastOnWay = p, target, len(todo) > 0
		if filepath.IsAbs(target) || strings.HasPrefix(target, `\`) || filepath.VolumeName(target) != "" {
			return &LinkError{Path: rel, Link: p, Target: target, OnTheWay: lastOnWay}
		}
		todo = append(strings.Split(filepath.ToSlash(target), "/"), todo...)
	}
	return nil
}
