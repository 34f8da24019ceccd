// Package overlay applies overlays to a source workspace: git-format patch
// files applied exactly, and trees of files copied over the source.
//
// A patch applies exactly or not at all: every hunk must match the file at
// the line the hunk names, with all its context (no fuzz, no offset); a
// new file must not exist yet, a deleted or modified one must; the
// abbreviated blob ids on git's "index" lines, when present, must match the
// file before and after the change. Paths may not be absolute, contain
// "..", or reach into version-control folders. Binary patches are accepted
// (git's literal and delta forms). Any failure names the overlay, the patch
// file, the file in the patch, the hunk and the line.
package overlay

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

// Error is an overlay that does not apply. It maps to exit status 1.
type Error struct {
	Overlay string // overlay name
	File    string // the patch file or tree, project-relative
	Member  string // the file inside the patch, when known
	Hunk    int    // 1-based hunk number, when known
	Line    int64  // 1-based line in the member, when known
	Reason  string
	Err     error
	// Hint replaces the default hint (regenerate the overlay) when set.
	Hint string
}

// Error names the overlay, its file, the member, hunk and line.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "overlay %s (%s)", e.Overlay, e.File)
	if e.Member != "" {
		b.WriteString(": " + e.Member)
	}
	if e.Hunk > 0 {
		fmt.Fprintf(&b, ": hunk %d", e.Hunk)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " at line %d", e.Line)
	}
	b.WriteString(": " + e.Reason)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	hint := e.Hint
	if hint == "" {
		hint = "the overlay no longer matches the pinned source; regenerate it against the source as locked (git format-patch), then run `mkrelease lock`"
	}
	b.WriteString("\n\thint: " + hint)
	return b.String()
}

// readError is the *Error for an overlay's patch file or tree (what) that
// could not be read from the project: a symbolic link leading out of the
// project names itself and its remedy.
func readError(o config.Overlay, what string, err error) *Error {
	var link *projectfile.LinkError
	if errors.As(err, &link) {
		return &Error{Overlay: o.Name, File: o.Path(), Reason: link.Problem(), Hint: link.Remedy()}
	}
	return &Error{Overlay: o.Name, File: o.Path(), Reason: "read " + what, Err: err,
		Hint: "fix the overlay's path in release.toml (relative to its folder), or create the " + what}
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *Error) ExitCode() int { return 1 }

// Digest returns the locked identity of an overlay's content: "sha256:<hex>"
// of a patch file, or the tree Sum of an overlay tree. Both are read
// beneath projectDir (package projectfile): a symbolic link leading out of
// the project is refused, naming it.
func Digest(ctx context.Context, projectDir string, o config.Overlay) (string, []treehash.File, error) {
	if o.Kind() == config.OverlayTree {
		p, err := projectfile.Folder(projectDir, o.Path())
		if err != nil {
			return "", nil, readError(o, "tree", err)
		}
		sum, err := treehash.Hash(ctx, p)
		if err != nil {
			return "", nil, &Error{Overlay: o.Name, File: o.Path(), Reason: "read tree", Err: err}
		}
		return sum.H1, sum.Files, nil
	}
	data, err := projectfile.ReadFile(projectDir, o.Path(), maxPatch)
	if err != nil {
		return "", nil, readError(o, "patch", err)
	}
	return "sha256:" + checksum.Bytes(data), nil, nil
}

// maxPatch bounds a patch file.
const maxPatch = projectfile.MaxText

// Apply applies overlay o (its files read beneath projectDir, as Digest
// reads them) to the source workspace ws. Every file of ws is reached
// through an os.Root of ws: a symbolic link in the workspace (in a folder
// its tree leaves out, such as __pycache__) never takes a patch's read or
// write outside it.
func Apply(ctx context.Context, projectDir string, o config.Overlay, ws string) error {
	if o.Kind() == config.OverlayTree {
		p, err := projectfile.Folder(projectDir, o.Path())
		if err != nil {
			return readError(o, "tree", err)
		}
		if err := treehash.Copy(ctx, p, ws); err != nil {
			return &Error{Overlay: o.Name, File: o.Path(), Reason: "copy tree", Err: err}
		}
		return nil
	}
	data, err := projectfile.ReadFile(projectDir, o.Path(), maxPatch)
	if err != nil {
		return readError(o, "patch", err)
	}
	return ApplyPatch(ctx, o.Name, o.Path(), data, ws)
}

// ApplyPatch applies the git-format patch data (named name, from file) to ws.
func ApplyPatch(ctx context.Context, name, file string, data []byte, ws string) error {
	files, _, err := gitdiff.Parse(bytes.NewReader(data))
	if err != nil {
		return &Error{Overlay: name, File: file, Reason: "not a readable git-format patch", Err: err}
	}
	if len(files) == 0 {
		return &Error{Overlay: name, File: file, Reason: "the patch changes no file"}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return &Error{Overlay: name, File: file, Reason: "open the workspace", Err: err}
	}
	defer root.Close()
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := applyFile(f, root); err != nil {
			var oe *Error
			if errors.As(err, &oe) {
				oe.Overlay, oe.File = name, file
				return oe
			}
			return &Error{Overlay: name, File: file, Member: memberName(f), Reason: "apply", Err: err}
		}
	}
	return nil
}

func memberName(f *gitdiff.File) string {
	if f.NewName != "" {
		return f.NewName
	}
	return f.OldName
}

// applyFile applies one file's change to the workspace root: every path is
// resolved through it, so no symbolic link takes it outside.
func applyFile(f *gitdiff.File, ws *os.Root) error {
	member := memberName(f)
	fail := func(reason string, err error) error {
		return &Error{Member: member, Reason: reason, Err: err}
	}
	for _, n := range []string{f.OldName, f.NewName} {
		if n == "" {
			continue
		}
		if err := checkPath(n); err != nil {
			return fail("unsafe path", err)
		}
	}
	var old []byte
	var oldMode os.FileMode = 0o644
	if !f.IsNew {
		src := filepath.FromSlash(f.OldName)
		st, err := ws.Lstat(src)
		if err != nil {
			return fail("the file to change does not exist in the source", nil)
		}
		if !st.Mode().IsRegular() {
			return fail("not a regular file", nil)
		}
		oldMode = st.Mode().Perm()
		if old, err = ws.ReadFile(src); err != nil {
			return fail("read", err)
		}
	}
	if f.IsNew || f.IsRename || f.IsCopy {
		if _, err := ws.Lstat(filepath.FromSlash(f.NewName)); err == nil && f.NewName != f.OldName {
			return fail("the patch creates a file that already exists", nil)
		}
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(old), f); err != nil {
		var ae *gitdiff.ApplyError
		e := &Error{Member: member, Reason: "does not apply exactly", Err: err}
		if errors.As(err, &ae) {
			e.Hunk, e.Line = ae.Fragment, ae.Line
			e.Err = ae.Unwrap()
		}
		return e
	}
	// The hunks match; the blob ids say whether the whole file is the one
	// the patch was made against (lines outside the hunks included).
	if err := checkOID(f.OldOIDPrefix, old); err != nil {
		return fail("the file is not the one the patch was made against", err)
	}
	if f.IsDelete {
		if out.Len() != 0 {
			return fail("the file to delete has content the patch does not remove", nil)
		}
		return ws.Remove(filepath.FromSlash(f.OldName))
	}
	if err := checkOID(f.NewOIDPrefix, out.Bytes()); err != nil {
		return fail("the result differs from the one the patch was made to produce", err)
	}
	mode := oldMode
	if f.NewMode != 0 {
		mode = f.NewMode.Perm()
	}
	dst := filepath.FromSlash(f.NewName)
	if err := ws.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fail("write", err)
	}
	if st, err := ws.Lstat(dst); err == nil && !st.Mode().IsRegular() {
		return fail("write", fmt.Errorf("%s is not a regular file", f.NewName))
	}
	if err := ws.WriteFile(dst, out.Bytes(), treehash.NormalMode(mode)); err != nil {
		return fail("write", err)
	}
	if err := ws.Chmod(dst, treehash.NormalMode(mode)); err != nil {
		return fail("write", err)
	}
	if f.IsRename && f.OldName != f.NewName {
		return ws.Remove(filepath.FromSlash(f.OldName))
	}
	return nil
}

// checkPath refuses member paths that could leave the workspace or touch
// version-control metadata.
func checkPath(p string) error {
	switch {
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("%q is absolute", p)
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../"):
		return fmt.Errorf("%q is not a clean relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		switch part {
		case ".git", ".hg", ".svn", ".bzr":
			return fmt.Errorf("%q reaches into version-control metadata", p)
		}
	}
	return nil
}

// checkOID compares git's abbreviated blob id with content. An empty or
// all-zero id means "no file" and is not checked. A 40-digit-or-shorter id
// may be SHA-1 or the prefix of a SHA-256 object id; either matching is
// accepted.
func checkOID(prefix string, content []byte) error {
	if prefix == "" || strings.Trim(prefix, "0") == "" {
		return nil
	}
	header := fmt.Sprintf("blob %d\x00", len(content))
	s1 := sha1.New()
	s1.Write([]byte(header))
	s1.Write(content)
	if strings.HasPrefix(hex.EncodeToString(s1.Sum(nil)), prefix) {
		return nil
	}
	s2 := sha256.New()
	s2.Write([]byte(header))
	s2.Write(content)
	if strings.HasPrefix(hex.EncodeToString(s2.Sum(nil)), prefix) {
		return nil
	}
	return fmt.Errorf("git blob id does not start with %s", prefix)
}
