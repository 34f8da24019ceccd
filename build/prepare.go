// Package build turns pinned sources into verified workspaces and runs the
// build steps in them: the sources and compile stages of the release
// pipeline, and the computation behind `mkrelease lock` and `mkrelease
// check`.
//
// Preparing a source materialises its pinned tree in a private workspace
// (the original is never modified), hashes it, applies its overlays in
// order and hashes the result after each. Against a lock, every hash is
// compared as soon as it is known and every drift is collected, so a run
// reports all of them at once: a changed source file by name, a changed
// overlay file, a result tree that differs, a toolchain whose version moved.
package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/overlay"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

// Prepared is the outcome of preparing every source of a release.
type Prepared struct {
	// Found has the shape of release.lock and records what was found.
	Found *lock.Lock
	// Workspaces maps a source name to its prepared folder.
	Workspaces map[string]string
	// Epoch is SOURCE_DATE_EPOCH for the release.
	Epoch int64
}

// PrepareOptions configure Prepare.
type PrepareOptions struct {
	Config *config.Config
	// Lock, when set, is verified against: Prepare returns a
	// *lock.DriftError listing every difference.
	Lock *lock.Lock
	// LockFile and Relock name the lock and the re-lock command in messages.
	LockFile, Relock string
	// Fetcher materialises sources.
	Fetcher *source.Fetcher
	// Scratch is a folder to create workspaces in.
	Scratch string
	Logger  *slog.Logger
}

// Prepare materialises every source, applies the overlays and identifies the
// toolchains; with a lock, it verifies each against it.
func Prepare(ctx context.Context, o PrepareOptions) (*Prepared, error) {
	c := o.Config
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Prepared{Found: &lock.Lock{Version: lock.FormatVersion}, Workspaces: map[string]string{}}
	var drifts []lock.Drift
	drift := func(d lock.Drift) { drifts = append(drifts, d) }

	if o.Lock != nil {
		drifts = append(drifts, configDrift(c, o.Lock)...)
	}
	var firstCommitTime int64
	for _, s := range c.Sources {
		ws := filepath.Join(o.Scratch, "src", s.Name)
		facts, err := o.Fetcher.Materialize(ctx, s, ws)
		if err != nil {
			return nil, err
		}
		sum, err := treehash.Hash(ctx, ws)
		if err != nil {
			return nil, &source.Error{Source: s.Name, Msg: "hash pinned tree", Err: err}
		}
		ls := lock.Source{Name: s.Name, Kind: string(s.Kind()), Location: s.Location(), Commit: facts.Commit,
			CommitTime: facts.CommitTime, SHA256: facts.ArchiveSHA256, StripComponents: s.StripComponents, Tree: sum.H1}
		if s.Kind() == config.SourceLocal {
			ls.Files = lines(sum.Files)
		}
		if facts.Commit != "" && firstCommitTime == 0 {
			firstCommitTime = facts.CommitTime
		}
		p.Found.Sources = append(p.Found.Sources, ls)
		p.Workspaces[s.Name] = ws
		log.Info("source", "name", s.Name, "kind", s.Kind(), "tree", sum.H1)

		sourceOK := true
		if o.Lock != nil {
			if locked, ok := o.Lock.Source(s.Name); ok && locked.Tree != sum.H1 {
				sourceOK = false
				drift(sourceDrift(s, locked, sum))
			}
		}
		for _, ov := range c.OverlaysOf(s.Name) {
			digest, files, err := overlay.Digest(ctx, c.Dir, ov)
			if err != nil {
				return nil, err
			}
			lo := lock.Overlay{Name: ov.Name, Source: s.Name, Kind: string(ov.Kind()), Path: ov.Path(), Digest: digest}
			if ov.Kind() == config.OverlayTree {
				lo.Files = lines(files)
			}
			var locked lock.Overlay
			haveLocked := false
			if o.Lock != nil {
				locked, haveLocked = o.Lock.Overlay(ov.Name)
				if haveLocked && locked.Digest != digest {
					sourceOK = false
					d := lock.Drift{Entry: "overlay " + ov.Name, File: ov.Path(), What: "the overlay changed",
						Expected: locked.Digest, Found: digest}
					if ov.Kind() == config.OverlayTree {
						d.Details = changeLines(locked.Files, files)
					}
					drift(d)
				}
			}
			if !sourceOK {
				// The tree is not the locked one: applying further overlays
				// would only produce confusing conflicts. Report the drift.
				p.Found.Overlays = append(p.Found.Overlays, lo)
				continue
			}
			if err := overlay.Apply(ctx, c.Dir, ov, ws); err != nil {
				return nil, err
			}
			res, err := treehash.Hash(ctx, ws)
			if err != nil {
				return nil, &source.Error{Source: s.Name, Msg: "hash tree after overlay " + ov.Name, Err: err}
			}
			lo.Result = res.H1
			p.Found.Overlays = append(p.Found.Overlays, lo)
			log.Info("overlay applied", "name", ov.Name, "result", res.H1)
			if haveLocked && locked.Result != res.H1 {
				sourceOK = false
				drift(lock.Drift{Entry: "overlay " + ov.Name, File: ov.Path(),
					What: "applying it gives a different tree than locked", Expected: locked.Result, Found: res.H1})
			}
		}
	}

	tcs, err := Toolchains(ctx, c)
	if err != nil {
		return nil, err
	}
	p.Found.Toolchains = tcs
	if o.Lock != nil {
		for _, tc := range tcs {
			locked, ok := o.Lock.Toolchain(tc.Name, tc.Target)
			if ok && locked.Version != tc.Version {
				drift(lock.Drift{Entry: "toolchain " + tc.Key(), What: "the toolchain version changed",
					Expected: locked.Version, Found: tc.Version})
			}
		}
	}

	if len(drifts) > 0 {
		return nil, &lock.DriftError{LockFile: o.LockFile, Drifts: drifts, Relock: o.Relock}
	}

	switch {
	case c.Build.SourceDateEpoch != nil:
		p.Epoch = *c.Build.SourceDateEpoch
	case firstCommitTime != 0:
		p.Epoch = firstCommitTime
	default:
		v := os.Getenv("SOURCE_DATE_EPOCH")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 315532800 {
			return nil, &config.Error{File: c.File, Key: "build.source_date_epoch",
				Msg:  "no SOURCE_DATE_EPOCH: no git source gives a commit time and none is configured",
				Hint: "set source_date_epoch under [build] (seconds since 1970, e.g. `git log -1 --format=%ct`)"}
		}
		p.Epoch = n
	}
	return p, nil
}

func lines(files []treehash.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Line()
	}
	return out
}

func parseLines(ls []string) []treehash.File {
	var out []treehash.File
	for _, l := range ls {
		if f, err := treehash.ParseLine(l); err == nil {
			out = append(out, f)
		}
	}
	return out
}

func changeLines(locked []string, found []treehash.File) []string {
	var out []string
	for _, ch := range treehash.Diff(parseLines(locked), found) {
		out = append(out, ch.String())
	}
	return out
}

// sourceDrift describes a pinned tree that differs from the lock, naming
// the files where the lock lists them.
func sourceDrift(s config.Source, locked lock.Source, sum treehash.Sum) lock.Drift {
	d := lock.Drift{Entry: "source " + s.Name, What: "the pinned tree changed", Expected: locked.Tree, Found: sum.H1}
	if len(locked.Files) == 0 {
		return d
	}
	changes := treehash.Diff(parseLines(locked.Files), sum.Files)
	prefix := ""
	if s.Kind() == config.SourceLocal {
		prefix = strings.TrimSuffix(s.Local, "/") + "/"
	}
	for i, ch := range changes {
		ch.Path = prefix + ch.Path
		if i == 0 {
			d.File = ch.Path
		}
		d.Details = append(d.Details, ch.String())
	}
	return d
}

// configDrift finds lock entries that no longer describe release.toml:
// entries missing, extra, or pinned differently.
func configDrift(c *config.Config, l *lock.Lock) []lock.Drift {
	var out []lock.Drift
	for _, s := range c.Sources {
		ls, ok := l.Source(s.Name)
		switch {
		case !ok:
			out = append(out, lock.Drift{Entry: "source " + s.Name, What: "not in the lock (new in release.toml)"})
		case ls.Kind != string(s.Kind()) || ls.Location != s.Location():
			out = append(out, lock.Drift{Entry: "source " + s.Name, What: "release.toml points elsewhere",
				Expected: ls.Kind + " " + ls.Location, Found: string(s.Kind()) + " " + s.Location()})
		case ls.Commit != s.Commit:
			out = append(out, lock.Drift{Entry: "source " + s.Name, What: "release.toml pins another commit", Expected: ls.Commit, Found: s.Commit})
		case ls.SHA256 != s.SHA256:
			out = append(out, lock.Drift{Entry: "source " + s.Name, What: "release.toml pins another archive digest", Expected: ls.SHA256, Found: s.SHA256})
		case ls.StripComponents != s.StripComponents:
			out = append(out, lock.Drift{Entry: "source " + s.Name, What: "strip_components changed",
				Expected: strconv.Itoa(ls.StripComponents), Found: strconv.Itoa(s.StripComponents)})
		}
	}
	for _, ls := range l.Sources {
		if _, ok := c.Source(ls.Name); !ok {
			out = append(out, lock.Drift{Entry: "source " + ls.Name, What: "locked but no longer in release.toml"})
		}
	}
	var names []string
	for _, o := range c.Overlays {
		names = append(names, o.Name)
		lo, ok := l.Overlay(o.Name)
		switch {
		case !ok:
			out = append(out, lock.Drift{Entry: "overlay " + o.Name, File: o.Path(), What: "not in the lock (new in release.toml)"})
		case lo.Source != o.Source || lo.Kind != string(o.Kind()) || lo.Path != o.Path():
			out = append(out, lock.Drift{Entry: "overlay " + o.Name, What: "release.toml declares it differently",
				Expected: lo.Kind + " " + lo.Path + " on " + lo.Source, Found: string(o.Kind()) + " " + o.Path() + " on " + o.Source})
		}
	}
	var lockedNames []string
	for _, lo := range l.Overlays {
		lockedNames = append(lockedNames, lo.Name)
		if !contains(names, lo.Name) {
			out = append(out, lock.Drift{Entry: "overlay " + lo.Name, What: "locked but no longer in release.toml"})
		}
	}
	if len(out) == 0 && strings.Join(names, ",") != strings.Join(lockedNames, ",") {
		out = append(out, lock.Drift{Entry: "overlays", What: "the order of the overlays changed",
			Expected: strings.Join(lockedNames, ", "), Found: strings.Join(names, ", ")})
	}
	for _, tc := range c.Toolchains {
		for _, t := range toolchainTargets(c, tc) {
			if _, ok := l.Toolchain(tc.Name, t); !ok {
				out = append(out, lock.Drift{Entry: "toolchain " + lock.Toolchain{Name: tc.Name, Target: t}.Key(), What: "not in the lock (new in release.toml)"})
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// toolchainTargets lists the targets a toolchain is locked for: "" once for
// a shared toolchain, each applicable target for a per-target one.
func toolchainTargets(c *config.Config, tc config.Toolchain) []string {
	if !tc.PerTarget {
		return []string{""}
	}
	var out []string
	for _, t := range c.Targets {
		if tc.AppliesTo(t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// ToolchainError is a toolchain whose identity cannot be read. It maps to
// exit status 1.
type ToolchainError struct {
	Name, Target string
	Command      []string
	Err          error
}

// Error names the toolchain and the command that failed.
func (e *ToolchainError) Error() string {
	key := lock.Toolchain{Name: e.Name, Target: e.Target}.Key()
	return fmt.Sprintf("toolchain %s: `%s` failed: %v\n\thint: install the toolchain (see README), or fix its command in release.toml",
		key, strings.Join(e.Command, " "), e.Err)
}

// Unwrap returns the underlying error.
func (e *ToolchainError) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *ToolchainError) ExitCode() int { return 1 }

// Toolchains runs each toolchain's version command (per target where it is
// per-target) and returns the first line of its output.
func Toolchains(ctx context.Context, c *config.Config) ([]lock.Toolchain, error) {
	var out []lock.Toolchain
	for _, tc := range c.Toolchains {
		for _, t := range toolchainTargets(c, tc) {
			env := map[string]string{"PATH": os.Getenv("PATH"), "LC_ALL": "C", "GOTOOLCHAIN": "local", "HOME": os.TempDir()}
			for _, k := range c.Build.PassEnv {
				if v, ok := os.LookupEnv(k); ok {
					env[k] = v
				}
			}
			if t != "" {
				tgt, _ := c.Target(t)
				for k, v := range tgt.Env {
					env[k] = v
				}
			}
			argv := make([]string, len(tc.Command))
			for i, a := range tc.Command {
				argv[i] = executor.Expand(a, env)
			}
			v, err := versionLine(ctx, argv, env)
			if err != nil {
				return nil, &ToolchainError{Name: tc.Name, Target: t, Command: argv, Err: err}
			}
			out = append(out, lock.Toolchain{Name: tc.Name, Target: t, Version: v})
		}
	}
	return out, nil
}

func versionLine(ctx context.Context, argv []string, env map[string]string) (string, error) {
	if argv[0] == "" {
		return "", errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	out := stdout.String()
	if strings.TrimSpace(out) == "" {
		out = stderr.String()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if line == "" {
		return "", errors.New("printed nothing")
	}
	return strings.TrimSpace(line), nil
}

// Lock builds the release.lock content from what Prepare found.
func (p *Prepared) Lock() *lock.Lock { return p.Found }
