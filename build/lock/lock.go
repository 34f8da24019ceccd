// Package lock reads and writes release.lock, the record of exactly what a
// release is built from, like go.sum for a module. Only `mkrelease lock`
// writes it; `mkrelease build` and `mkrelease check` compare what they find
// with it and refuse any drift, naming the entry and, where the lock can
// tell, the file.
//
// For every source the lock holds its kind and location, the commit (git)
// or archive digest and size, and the h1: tree hash of the pinned tree (see package
// treehash for the file set). Local sources also list every file with its
// sha256, so that a changed byte is reported by file name. For every
// overlay it holds the sha256 of the patch file (or the h1: of an overlay
// tree, with its files) and the h1: of the source tree after applying it
// and every overlay before it. For every toolchain it holds the first line
// of the toolchain's version output and the sha256 of the executable its
// command runs (found on the steps' PATH, links followed), per target where
// the toolchain is per-target. A lock written before the digest was
// recorded reads, and drifts: `mkrelease lock` records it.
//
// The archive size (`size`, in bytes) came with format version 1 as an
// optional field: a lock written before it reads the same, and a download
// is then capped by the source's max_size (or the default) instead of the
// exact size until the next `mkrelease lock` records it.
//
// Keys are read exactly as written (case-sensitively, see
// [config.CheckKeys]), so an edited lock cannot carry a second spelling of
// a key that the decoder would take for the first.
//
// The file is TOML, written deterministically (fixed key order, entries in
// release.toml order), so a re-lock with nothing changed rewrites the same
// bytes and a review diff shows exactly what moved.
package lock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/pin"
	"github.com/pelletier/go-toml/v2"
)

// DefaultFile is the lock file name, next to release.toml.
const DefaultFile = "release.lock"

// FormatVersion is the version of the lock format this package writes.
const FormatVersion = 1

// Lock is the content of release.lock.
type Lock struct {
	Version    int         `toml:"version"`
	Sources    []Source    `toml:"source"`
	Overlays   []Overlay   `toml:"overlay"`
	Toolchains []Toolchain `toml:"toolchain"`

	// SHA256 is the hex digest of the file as read (empty for a new lock).
	SHA256 string `toml:"-"`
}

// Source is the locked identity of one pinned source: its kind and
// location, what pins it (commit, archive digest and size) and its tree
// hash, with every file of a local source.
type Source = pin.Source

// Overlay is the locked identity of one overlay.
type Overlay struct {
	Name   string `toml:"name"`
	Source string `toml:"source"`
	Kind   string `toml:"kind"`
	Path   string `toml:"path"`
	// Digest is "sha256:<hex>" of a patch file or the h1: of an overlay tree.
	Digest string   `toml:"digest"`
	Files  []string `toml:"files,omitempty"`
	// Result is the h1: of the source tree after this overlay.
	Result string `toml:"result"`
}

// Toolchain is the locked identity of one toolchain (for one target, when
// Target is set): its version line and the sha256 of its executable.
type Toolchain = pin.Toolchain

// Error is a lock file that cannot be read. It maps to exit status 2.
type Error struct {
	File string
	Msg  string
	Hint string
}

// Error formats the problem with its hint.
func (e *Error) Error() string {
	s := e.File + ": " + e.Msg
	if e.Hint != "" {
		s += "\n\thint: " + e.Hint
	}
	return s
}

// ExitCode is 2: a missing or malformed lock is bad input.
func (e *Error) ExitCode() int { return 2 }

// Read loads release.lock strictly.
func Read(path string) (*Lock, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &Error{File: path, Msg: "no lock file", Hint: "run `mkrelease lock` to pin the sources, overlays and toolchains, review release.lock and commit it"}
	}
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	if errs := config.CheckKeys(path, data, &Lock{}); len(errs) > 0 {
		msg, _, _ := strings.Cut(strings.TrimPrefix(errs[0].Error(), path+":"), "\n")
		return nil, &Error{File: path, Msg: "malformed lock: " + msg,
			Hint: "release.lock is written by `mkrelease lock`; do not edit it by hand, re-run the command"}
	}
	var l Lock
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			msg = fmt.Sprintf("%d:%d: %s", row, col, msg)
		}
		return nil, &Error{File: path, Msg: "malformed lock: " + msg, Hint: "release.lock is written by `mkrelease lock`; do not edit it by hand, re-run the command"}
	}
	if l.Version != FormatVersion {
		return nil, &Error{File: path, Msg: fmt.Sprintf("lock format version %d, this mkrelease reads version %d", l.Version, FormatVersion),
			Hint: "re-run `mkrelease lock` with this mkrelease"}
	}
	l.SHA256 = checksum.Bytes(data)
	return &l, nil
}

// Marshal renders the lock deterministically.
func (l *Lock) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# release.lock: the exact sources, overlays and toolchains this release is built from.\n")
	b.WriteString("# Written by `mkrelease lock`; do not edit. Commit it next to release.toml.\n\n")
	enc := toml.NewEncoder(&b)
	enc.SetArraysMultiline(true)
	enc.SetIndentTables(false)
	c := *l
	c.Version = FormatVersion
	if err := enc.Encode(c); err != nil {
		return nil, fmt.Errorf("encode lock: %w", err)
	}
	return b.Bytes(), nil
}

// Write stores the lock at path atomically.
func (l *Lock) Write(path string) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o644)
}

// Source returns the locked source named name.
func (l *Lock) Source(name string) (Source, bool) {
	for _, s := range l.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Overlay returns the locked overlay named name.
func (l *Lock) Overlay(name string) (Overlay, bool) {
	for _, o := range l.Overlays {
		if o.Name == name {
			return o, true
		}
	}
	return Overlay{}, false
}

// Toolchain returns the locked toolchain entry for name and target.
func (l *Lock) Toolchain(name, target string) (Toolchain, bool) {
	for _, t := range l.Toolchains {
		if t.Name == name && t.Target == target {
			return t, true
		}
	}
	return Toolchain{}, false
}

// Drift is one difference between release.lock and what was found.
type Drift struct {
	// Entry names the lock entry: "source vexl", "overlay fused-fast-path",
	// "toolchain cc [linux-aarch64]".
	Entry string
	// File is the file to look at, when known (a changed source file, the
	// patch file).
	File string
	// What says what differs; Expected and Found are the locked and found
	// values.
	What            string
	Expected, Found string
	// Details lists further differences (e.g. every changed file).
	Details []string
}

// DriftError is every drift found in one check. It maps to exit status 1:
// the inputs are readable but are not the ones locked.
type DriftError struct {
	LockFile string
	Drifts   []Drift
	// Relock is the command that accepts the change after review.
	Relock string
}

// Error lists every drift with what to do.
func (e *DriftError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: inputs differ from the lock (%d finding%s):", e.LockFile, len(e.Drifts), plural(len(e.Drifts)))
	for _, d := range e.Drifts {
		b.WriteString("\n  " + d.Entry + ": ")
		if d.File != "" {
			b.WriteString(d.File + ": ")
		}
		b.WriteString(d.What)
		if d.Expected != "" || d.Found != "" {
			fmt.Fprintf(&b, "\n      locked: %s\n      found:  %s", orNone(d.Expected), orNone(d.Found))
		}
		for _, x := range d.Details {
			b.WriteString("\n      " + x)
		}
	}
	fmt.Fprintf(&b, "\n\thint: if the change is intended, review it and run `%s` to re-lock, then commit release.lock; otherwise restore the locked input", e.Relock)
	return b.String()
}

// ExitCode is 1: a check refused.
func (e *DriftError) ExitCode() int { return 1 }

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
