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
//
// Unless told it only locks, Prepare also checks, before anything is
// fetched, every project file the later stages read ([Preflight]), and,
// once the workspaces are ready, what the wheel stage will take from them
// (every include's `from`, the wheels' member paths) and every step's
// `dir`. So `mkrelease check`, which prepares like a build, refuses a
// release that `mkrelease build` would refuse after compiling, and a build
// refuses it before compiling.
package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/internal/finding"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/overlay"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/provenance"
)

// Prepared is the outcome of preparing every source of a release.
type Prepared struct {
	// Found has the shape of release.lock and records what was found.
	Found *lock.Lock
	// Workspaces maps a source name to its prepared folder: a copy in
	// Scratch, or, for a local source that is read in place (see
	// ReadInPlace), the project's own folder.
	Workspaces map[string]string
	// Trees maps a source name to the sha256 of each file of its prepared
	// folder (overlays applied), by slash-separated path: hashed once
	// here, read by the stages that need a file's digest.
	Trees map[string]map[string]string
	// Epoch is SOURCE_DATE_EPOCH for the release.
	Epoch int64
	// WorkTrees are the sources read from a git work tree on this
	// machine, as they stand against it; Found's entry of each records
	// its state.
	WorkTrees []*source.WorkTree
}

// StaleError is a build refused because a source read from a git work tree
// is not what that tree shows ([build] require_current). It maps to exit
// status 1.
type StaleError struct {
	// Problems say what is stale, one sentence each with the remedy.
	Problems []string
}

// Error lists the problems.
func (e *StaleError) Error() string {
	return fmt.Sprintf("the release would not be built from what the work tree shows (%d finding%s):\n  %s\n\thint: do what each says; "+
		"to release anyway, set require_current = false under [build] in release.toml", len(e.Problems), finding.Plural(len(e.Problems)), strings.Join(e.Problems, "\n  "))
}

// ExitCode is 1: a refusal.
func (e *StaleError) ExitCode() int { return 1 }

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
	// LockOnly skips what only a build needs (Preflight and the workspace
	// checks): `mkrelease lock` pins the sources of a release whose
	// changelog or wheels may still be being written.
	LockOnly bool
	// Digests remembers the digests of toolchain executables by their
	// identity on disk (package digestmemo); the zero value hashes each
	// one every time, as `mkrelease lock` does.
	Digests digestmemo.Memo
	// Trees remembers the digests of the files of local sources read in
	// place (a table per folder, package digestmemo), so that a rebuild
	// only reads the files that changed; the zero value hashes them all.
	Trees digestmemo.Memo
	// Runner runs the toolchains' version commands the way build steps
	// run (the build's executor); nil sets up an executor of its own.
	Runner StepRunner
	// RequireCurrent refuses, with a *StaleError, a source read from a git
	// work tree whose HEAD is not the pinned commit or whose tree holds
	// changes no commit holds (source.WorkTree); otherwise each is a
	// warning.
	RequireCurrent bool
}

// StepRunner runs a command as a build step: in the sandbox, when the host
// has one ([executor.Executor]).
type StepRunner interface {
	Run(ctx context.Context, a executor.Action, p executor.Paths) (executor.Result, error)
}

// ReadInPlace says whether the local source s is read where it is, in the
// project, rather than copied into the scratch folder first: when no
// overlay applies to it and no build step builds it or uses it. Only the
// wheel stage then reads it, and only the files hashed here, each checked
// against its digest as it is packed (wheel.Member's SHA256), so a file
// changed during the build stops it rather than entering a wheel. A source
// that an overlay changes, or that a step sees, is copied: the overlay
// needs a folder to write, and a step's sandbox gets the frozen copy,
// never the project (which holds more than the tree, .git for one).
func ReadInPlace(c *config.Config, s config.Source) bool {
	if s.Kind() != config.SourceLocal || len(c.OverlaysOf(s.Name)) > 0 {
		return false
	}
	for _, st := range c.Build.Steps {
		if st.Source == s.Name || slices.Contains(st.Uses, s.Name) {
			return false
		}
	}
	return true
}

// Prepare materialises every source, applies the overlays and identifies the
// toolchains; with a lock, it verifies each against it.
func Prepare(ctx context.Context, o PrepareOptions) (*Prepared, error) {
	c := o.Config
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Prepared{Found: &lock.Lock{Version: lock.FormatVersion}, Workspaces: map[string]string{}, Trees: map[string]map[string]string{}}
	var drifts []lock.Drift
	drift := func(d lock.Drift) { drifts = append(drifts, d) }

	if !o.LockOnly {
		if err := Preflight(c); err != nil {
			return nil, err
		}
	}
	if o.Lock != nil {
		drifts = append(drifts, configDrift(c, o.Lock)...)
	}
	var firstCommitTime int64
	for _, s := range c.Sources {
		ws := filepath.Join(o.Scratch, "src", s.Name)
		var facts source.Facts
		var sum treehash.Sum
		var err error
		if ReadInPlace(c, s) {
			if ws, err = o.Fetcher.LocalFolder(s); err != nil {
				return nil, err
			}
			memo := o.Trees.Table(ws)
			sum, err = treehash.HashWith(ctx, ws, memo)
			if err == nil {
				if serr := memo.Save(); serr != nil {
					log.Debug("digest table not saved", "source", s.Name, "err", serr)
				}
			}
		} else {
			if facts, err = o.Fetcher.Materialize(ctx, s, ws, expected(o.Lock, s)); err != nil {
				return nil, err
			}
			sum, err = treehash.Hash(ctx, ws)
		}
		if err != nil {
			return nil, &source.Error{Source: s.Name, Msg: "hash pinned tree", Err: err}
		}
		ls := lock.Source{Name: s.Name, Kind: string(s.Kind()), Location: s.Location(), Commit: facts.Commit,
			CommitTime: facts.CommitTime, SHA256: facts.ArchiveSHA256, Size: facts.ArchiveSize, StripComponents: s.StripComponents, Tree: sum.H1}
		if s.Kind() == config.SourceLocal {
			ls.Files = lines(sum.Files)
		}
		if facts.Commit != "" && firstCommitTime == 0 {
			firstCommitTime = facts.CommitTime
		}
		wt, err := o.Fetcher.WorkTree(ctx, s, s.Commit, configFiles(c, o.LockFile)...)
		if err != nil {
			return nil, err
		}
		if wt != nil {
			ls.WorkTree = wt.State()
			p.WorkTrees = append(p.WorkTrees, wt)
		}
		p.Found.Sources = append(p.Found.Sources, ls)
		p.Workspaces[s.Name] = ws
		p.Trees[s.Name] = digests(sum.Files)
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
			p.Trees[s.Name] = digests(res.Files)
			p.Found.Overlays = append(p.Found.Overlays, lo)
			log.Info("overlay applied", "name", ov.Name, "result", res.H1)
			if haveLocked && locked.Result != res.H1 {
				sourceOK = false
				drift(lock.Drift{Entry: "overlay " + ov.Name, File: ov.Path(),
					What: "applying it gives a different tree than locked", Expected: locked.Result, Found: res.H1})
			}
		}
	}

	run := o.Runner
	if run == nil {
		run = executor.New(ctx, executor.Options{})
	}
	tcs, err := Toolchains(ctx, c, o.Digests, run)
	if err != nil {
		return nil, err
	}
	p.Found.Toolchains = tcs
	if o.Lock != nil {
		for _, tc := range tcs {
			if locked, ok := o.Lock.Toolchain(tc.Name, tc.Target); ok {
				if d, drifted := toolchainDrift(locked, tc); drifted {
					drift(d)
				}
			}
		}
	}

	if len(drifts) > 0 {
		return nil, &lock.DriftError{LockFile: o.LockFile, Drifts: drifts, Relock: o.Relock}
	}
	var stale []string
	for _, wt := range p.WorkTrees {
		stale = append(stale, wt.Problems()...)
		if wt.Filtered > 0 {
			log.Info("files git filters were not compared with HEAD", "source", wt.Source, "files", wt.Filtered)
		}
	}
	if len(stale) > 0 && o.RequireCurrent {
		return nil, &StaleError{Problems: stale}
	}
	for _, msg := range stale {
		log.Warn(msg)
	}
	if !o.LockOnly {
		if err := checkWorkspaces(c, p.Workspaces, p.Trees); err != nil {
			return nil, err
		}
	}

	switch {
	case c.Build.SourceDateEpoch != nil:
		p.Epoch = *c.Build.SourceDateEpoch
	case firstCommitTime != 0:
		p.Epoch = firstCommitTime
	default:
		v := os.Getenv("SOURCE_DATE_EPOCH")
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err == nil && n >= 315532800:
			p.Epoch = n
		case o.LockOnly:
			// The lock records no time; a build will need one.
		default:
			return nil, config.ErrorList{c.Errorf("build.source_date_epoch",
				"set source_date_epoch under [build] (seconds since 1970, e.g. `git log -1 --format=%ct`), or SOURCE_DATE_EPOCH in the environment",
				"no SOURCE_DATE_EPOCH: no git source gives a commit time and none is configured")}
		}
	}
	return p, nil
}

// configFiles are the project's configuration files that a source's work
// tree may hold without being source: release.toml and the lock (a path
// relative to the working folder, as --lock gives it), by absolute path.
func configFiles(c *config.Config, lockFile string) []string {
	var out []string
	for _, f := range []string{c.File, lockFile} {
		if f == "" {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// expected is what the lock records about s that its fetch can enforce: the
// archive's size, when the lock pins the same archive.
func expected(l *lock.Lock, s config.Source) source.Expected {
	if l == nil || s.Kind() != config.SourceArchive {
		return source.Expected{}
	}
	if ls, ok := l.Source(s.Name); ok && ls.Kind == string(config.SourceArchive) && ls.SHA256 == s.SHA256 {
		return source.Expected{ArchiveSize: ls.Size}
	}
	return source.Expected{}
}

// digests maps each file's path to its sha256.
func digests(files []treehash.File) map[string]string {
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[f.Path] = f.SHA256
	}
	return m
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

// toolchainDrift compares a locked toolchain with the one found: its
// version line, then the digest of its executable (the same version line
// from another program is another toolchain).
func toolchainDrift(locked, found lock.Toolchain) (lock.Drift, bool) {
	entry := "toolchain " + found.Key()
	digest := func(t lock.Toolchain) string {
		if t.SHA256 == "" {
			return ""
		}
		return "sha256:" + t.SHA256
	}
	switch {
	case locked.Version != found.Version:
		d := lock.Drift{Entry: entry, What: "the toolchain version changed", Expected: locked.Version, Found: found.Version}
		if locked.SHA256 != found.SHA256 {
			d.Details = append(d.Details, fmt.Sprintf("executable: locked %s, found %s (%s)", orNone(digest(locked)), digest(found), found.Executable))
		}
		return d, true
	case locked.SHA256 == "":
		return lock.Drift{Entry: entry, File: found.Executable,
			What: "release.lock records no sha256 of its executable (a lock written by an older mkrelease)", Found: digest(found)}, true
	case locked.SHA256 != found.SHA256:
		return lock.Drift{Entry: entry, File: found.Executable,
			What: "its executable changed behind the same version line (" + found.Version + ")", Expected: digest(locked), Found: digest(found)}, true
	}
	return lock.Drift{}, false
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
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
	return fmt.Sprintf("toolchain %s: `%s` failed: %v\n\thint: install the toolchain (docs/troubleshooting.md, \"A toolchain is not found\"), or fix its command in release.toml",
		key, strings.Join(e.Command, " "), e.Err)
}

// Unwrap returns the underlying error.
func (e *ToolchainError) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *ToolchainError) ExitCode() int { return 1 }

// Toolchains identifies each toolchain (per target where it is
// per-target): the first line of its version command's output, and the
// sha256 of the executable that command runs. The command's first word is
// found on the PATH the steps get (the toolchains' own folders, then the
// host's; a target's env may set another); the program found is run (under
// the name written, which some programs print) and the file it is, links
// followed, is hashed, so the version line and the digest describe the same
// program. The command runs as a build step does, through run: in the
// sandbox, with an environment of its own (PATH, LC_ALL=C,
// GOTOOLCHAIN=local, a scratch HOME and TMPDIR, release.toml's pass_env
// but never mkrelease's own variables, the target's env), so a toolchain
// command sees nothing of the host a step does not, mkrelease's secrets
// included.
func Toolchains(ctx context.Context, c *config.Config, digests digestmemo.Memo, run StepRunner) ([]lock.Toolchain, error) {
	var out []lock.Toolchain
	path := executor.SearchPath(c.ToolPath(), os.Getenv("PATH"))
	for _, tc := range c.Toolchains {
		if tc.Path != "" {
			dir := filepath.Join(c.Dir, filepath.FromSlash(tc.Path))
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				for _, t := range toolchainTargets(c, tc) {
					return nil, &ToolchainError{Name: tc.Name, Target: t, Command: tc.Command,
						Err: fmt.Errorf("its folder %s (path in release.toml) is not there: install the toolchain into it (for the embedded default, scripts/bootstrap does)", tc.Path)}
				}
			}
		}
		for _, t := range toolchainTargets(c, tc) {
			env := map[string]string{"PATH": path, "LC_ALL": "C", "GOTOOLCHAIN": "local",
				"HOME": executor.ScratchPlaceholder + "/home", "TMPDIR": executor.ScratchPlaceholder + "/tmp"}
			for _, k := range c.Build.PassEnv {
				if strings.HasPrefix(k, "MKRELEASE_") {
					continue // mkrelease's own settings and secrets, as for steps
				}
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
			found, real, err := resolveExecutable(argv[0], env["PATH"])
			if err != nil {
				return nil, &ToolchainError{Name: tc.Name, Target: t, Command: argv, Err: err}
			}
			sha, _, err := digests.SHA256(real)
			if err != nil {
				return nil, &ToolchainError{Name: tc.Name, Target: t, Command: argv, Err: err}
			}
			v, err := versionLine(ctx, run, tc.Name, t, found, argv, env)
			if err != nil {
				return nil, &ToolchainError{Name: tc.Name, Target: t, Command: argv, Err: err}
			}
			out = append(out, lock.Toolchain{Name: tc.Name, Target: t, Version: v, SHA256: sha, Executable: real})
		}
	}
	return out, nil
}

// resolveExecutable finds the program name on path as a step would
// ([executor.LookPath]) and follows its symbolic links to the file itself
// (real), the file a toolchain's digest is taken of.
func resolveExecutable(name, path string) (found, real string, err error) {
	if name == "" {
		return "", "", errors.New("empty command")
	}
	found = executor.LookPath(name, path)
	if found == "" {
		return "", "", fmt.Errorf("%s: no such program on the steps' PATH (the toolchains' folders in release.toml, then the host's PATH)", name)
	}
	real, err = filepath.EvalSymlinks(found)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", found, err)
	}
	return found, real, nil
}

// versionTimeout bounds a toolchain's version command.
const versionTimeout = 2 * time.Minute

// versionOutput is how much of a version command's standard output is
// kept: its first line is all that is used.
const versionOutput = 64 << 10

// versionLine runs the version command argv of toolchain name (for target,
// "" for all) through run, as a build step with the toolchain's folder in
// view, and returns the first line of its output (stdout, else stderr).
// argv[0] is run as written in release.toml (some programs print or act on
// it), found on the same PATH as prog, the program found; a name with a
// folder in it is run as prog.
func versionLine(ctx context.Context, run StepRunner, name, target, prog string, argv []string, env map[string]string) (string, error) {
	dir, err := os.MkdirTemp("", "mkrelease-toolchain-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	p := executor.Paths{Workspace: filepath.Join(dir, "ws"), Out: filepath.Join(dir, "out"), Scratch: filepath.Join(dir, "scratch")}
	for _, d := range []string{p.Workspace, p.Out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", err
		}
	}
	argv = slices.Clone(argv)
	if strings.ContainsAny(argv[0], `/\`) {
		argv[0] = prog
	}
	stdout := &headWriter{max: versionOutput}
	a := executor.Action{Step: "toolchain " + name, Target: target, Argv: argv, Env: env, Timeout: versionTimeout,
		Tools: []string{prog}, Stdout: stdout}
	if target == "" {
		a.Target = "all targets"
	}
	res, err := run.Run(ctx, a, p)
	if err != nil {
		return "", err
	}
	out := stdout.buf.String()
	if strings.TrimSpace(out) == "" {
		out = string(res.Log) // only stderr wrote
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if line == "" {
		return "", errors.New("printed nothing")
	}
	return strings.TrimSpace(line), nil
}

// headWriter keeps the first max bytes written to it.
type headWriter struct {
	buf bytes.Buffer
	max int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// Lock builds the release.lock content from what Prepare found.
func (p *Prepared) Lock() *lock.Lock { return p.Found }

// Preflight checks every project file that the stages after the sources
// read, so that a release refused for one is refused before anything is
// built (and by `mkrelease check`): the readme (a readable UTF-8 text
// file: it becomes the wheels' description), the changelog (with a section
// for the release's version: it becomes RELEASE_NOTES.md), the dependency
// lock (parsed as the closure stage parses it), local find-links folders,
// the signing key (a file that exists, or a KMS provider compiled into this
// mkrelease), the trusted public keys that are there (verify skips a
// missing one: the development key appears with the first build), the
// verifier folder and the policy files. Each is opened beneath the project
// folder, as the stages open it (package projectfile): a symbolic link
// that leads out of the project, the file's own or a folder's on its way,
// is refused, naming the link. Every problem is a *config.Error placed at
// its key in release.toml; all are returned at once as a
// config.ErrorList.
func Preflight(c *config.Config) error {
	var errs config.ErrorList
	add := func(e *config.Error) { errs = append(errs, e) }
	// refuse places err at key: a symbolic link leading out of the
	// project with its own remedy, anything else with hint.
	refuse := func(key, hint string, err error) {
		var link *projectfile.LinkError
		if errors.As(err, &link) {
			add(c.Errorf(key, link.Remedy(), "%s", link.Problem()))
			return
		}
		add(c.Errorf(key, hint, "%v", err))
	}
	file := func(key, rel, what string) ([]byte, bool) {
		data, err := projectfile.ReadFile(c.Dir, rel, projectfile.MaxText)
		if err != nil {
			refuse(key, "fix the path (relative to the folder of "+c.WrittenIn(key)+"), or create the "+what, err)
			return nil, false
		}
		return data, true
	}
	folder := func(key, rel, what string) {
		_, err := projectfile.Folder(c.Dir, rel)
		switch {
		case errors.Is(err, os.ErrNotExist):
			refuse(key, "fix the path (relative to the folder of release.toml), or create the "+what, err)
		case err != nil:
			refuse(key, "name the "+what, err)
		}
	}

	if rel := c.Project.Readme; rel != "" {
		if data, ok := file("project.readme", rel, "readme"); ok {
			if line, col, what, ok := documentText(data); !ok {
				add(c.Errorf("project.readme", config.TextDocument.Hint(), "%s:%d:%d holds %s", rel, line, col, what))
			}
		}
	}
	if rel := c.Bundle.Changelog; rel != "" {
		if data, ok := file("bundle.changelog", rel, "changelog"); ok {
			if _, err := bundle.ReleaseNotes(rel, data, c.Project.Version); err != nil {
				add(c.Errorf("bundle.changelog", fmt.Sprintf("add a heading such as `## %s` with the release notes of this version, or fix [project] version", c.Project.Version),
					"%s has no section for version %s", rel, c.Project.Version))
			}
		}
	}
	if c.Dependencies.Lock != "" {
		if _, err := bundle.DependencyLock(c); err != nil {
			refuse("dependencies.lock", "fix the lock: a PEP 751 pylock.toml or a pip requirements file with --hash on every line", err)
		}
	}
	for i, fl := range c.Dependencies.FindLinks {
		if !strings.Contains(fl, "://") {
			folder(fmt.Sprintf("dependencies.find_links[%d]", i), fl, "folder of wheels")
		}
	}
	if k := c.Signing.Key; k != "" {
		if e := checkSigningKey(c, k); e != nil {
			add(e)
		}
	}
	for i, k := range c.Signing.TrustedKeys {
		// A missing one is skipped by verify, as the development key is
		// created by the first build; one that is there must be a key.
		if _, err := provenance.LoadProjectPublicKey(c.Dir, k); err != nil && !errors.Is(err, os.ErrNotExist) {
			refuse(fmt.Sprintf("signing.trusted_keys[%d]", i), "name a PEM public key (the .pub that `mkrelease keygen` writes), relative to the folder of release.toml", err)
		}
	}
	if v := c.Evidence.Verifier; v != "" {
		folder("evidence.verifier", v, "verifier folder")
	}
	for i, f := range c.Policy.Files {
		file(fmt.Sprintf("policy.files[%d]", i), f, "policy file")
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// documentText finds the first character of a text file that may not go
// into METADATA, with its line and column (1-based, in characters).
func documentText(data []byte) (line, col int, what string, ok bool) {
	at, what, ok := config.CheckText(string(data), config.TextDocument)
	if ok {
		return 0, 0, "", true
	}
	line, col = 1, 1
	for _, r := range string(data) {
		if at == 0 {
			break
		}
		at--
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col, what, false
}

// checkSigningKey checks what can be checked of the signing key without
// its password: a file:// (or plain) key exists, an env:// key names a
// variable (its value is the build machine's business), and any other
// scheme is a KMS provider compiled into this mkrelease.
func checkSigningKey(c *config.Config, uri string) *config.Error {
	scheme, rest, hasScheme := strings.Cut(uri, "://")
	switch {
	case !hasScheme || scheme == "file":
		p := uri
		if hasScheme {
			p = rest
		}
		// LoadSigner takes the path literally (relative to the working
		// folder), and so does this check.
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			return c.Errorf("signing.key", "create the key with `mkrelease keygen`, or fix the path (file:// paths are taken as written, relative to the folder mkrelease runs in)",
				"signing key file %s not found", p)
		}
	case scheme == "env":
	default:
		for _, s := range provenance.KMSSchemes() {
			if s == scheme+"://" {
				return nil
			}
		}
		have := "none"
		if s := provenance.KMSSchemes(); len(s) > 0 {
			have = strings.Join(s, ", ")
		}
		return c.Errorf("signing.key", "use file://PATH or env://VAR, or an mkrelease built with that KMS provider (see the provenance package documentation)",
			"KMS scheme %s:// is not compiled into this mkrelease (compiled in: %s)", scheme, have)
	}
	return nil
}

// checkWorkspaces checks, on the prepared workspaces, what the later stages
// take from them: each step's dir is a folder of its source; each wheel
// include's `from` exists in its source (a folder with files in it); and
// the member paths of every wheel, as the wheel stage will compute them,
// are clean, outside the folders mkrelease writes, and given once. trees
// are the sources' hashed file sets (Prepared.Trees).
func checkWorkspaces(c *config.Config, workspaces map[string]string, trees map[string]map[string]string) error {
	var errs config.ErrorList
	for i, s := range c.Build.Steps {
		if s.Dir == "" {
			continue
		}
		st, err := os.Stat(filepath.Join(workspaces[s.Source], filepath.FromSlash(s.Dir)))
		if err != nil || !st.IsDir() {
			errs = append(errs, c.Errorf(fmt.Sprintf("build.step[%d].dir", i), "name a folder of the step's source (after its overlays), relative to its root",
				"source %s has no folder %s", s.Source, s.Dir))
		}
	}
	for i, w := range c.Wheels {
		// Each target's wheel gets the includes of that target: a wheel
		// path may be placed once per target.
		members := map[string]map[string]string{} // target → wheel path → the include key that puts it there
		reported := map[string]bool{}             // include keys already refused
		for _, list := range []struct {
			name string
			ins  []config.Include
		}{{"include", w.Include}, {"licenses", w.Licenses}} {
			for j, in := range list.ins {
				key := fmt.Sprintf("wheel[%d].%s[%d]", i, list.name, j)
				paths, e := includePaths(c, trees, key, in)
				if e != nil {
					errs = append(errs, e)
					continue
				}
				for _, t := range c.Targets {
					if !w.AppliesTo(t.Name) || !in.AppliesTo(t.Name) {
						continue
					}
					if members[t.Name] == nil {
						members[t.Name] = map[string]string{}
					}
					for _, p := range paths {
						switch {
						case list.name == "licenses":
							p = ".dist-info/licenses/" + p
						case in.Data != "":
							p = ".data/" + in.Data + "/" + p
						}
						if prev, dup := members[t.Name][p]; dup {
							if !reported[key] {
								errs = append(errs, c.Errorf(key, "give each file one place in the wheel: change `to`, or narrow `from` or `targets`",
									"puts %s into wheel %s [%s], as %s does", strings.TrimPrefix(p, ".dist-info/"), w.Name, t.Name, prev))
							}
							reported[key] = true
							break
						}
						members[t.Name][p] = key
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// includePaths lists the wheel paths an include places (relative to the
// wheel root, its .data scheme or its licenses folder), exactly as the
// wheel stage resolves them: a file goes to `to` (or into it when `to` is
// empty or ends in "/"); a folder's files go under `to`, compiled Python
// files left out. A source's files are those of its hashed tree (trees,
// after its overlays): one the tree leaves out, in a .git or __pycache__
// folder, is not part of the source. A step's outputs are known from its
// declaration.
func includePaths(c *config.Config, trees map[string]map[string]string, key string, in config.Include) ([]string, *config.Error) {
	var files []string // relative to from; nil for from itself being a file
	isFile := false
	switch {
	case in.Source != "":
		tree := trees[in.Source]
		from := path.Clean(in.From)
		if _, ok := tree[from]; ok {
			isFile = true
			break
		}
		prefix := from + "/"
		if from == "." {
			prefix = ""
		}
		found := false
		for p := range tree {
			rest, ok := strings.CutPrefix(p, prefix)
			found = found || ok
			if ok && !strings.HasSuffix(rest, ".pyc") && !strings.HasSuffix(rest, ".pyo") {
				files = append(files, rest)
			}
		}
		slices.Sort(files)
		if !found {
			return nil, c.Errorf(key+".from", "name a file or folder of the source (after its overlays), relative to its root; .git and __pycache__ folders are not part of it",
				"source %s has no %s", in.Source, in.From)
		}
	case in.Step != "":
		var step config.Step
		for _, s := range c.Build.Steps {
			if s.Name == in.Step {
				step = s
			}
		}
		from := path.Clean(in.From)
		for _, o := range step.Outputs {
			o = path.Clean(o)
			if o == from {
				isFile = true
			} else if rest, ok := strings.CutPrefix(o, from+"/"); ok {
				files = append(files, rest)
			}
		}
	default:
		return nil, nil // refused by the loader already
	}
	var out []string
	if isFile {
		to := in.To
		if to == "" || strings.HasSuffix(to, "/") {
			to += path.Base(in.From)
		}
		out = append(out, to)
	}
	for _, f := range files {
		out = append(out, path.Join(in.To, f))
	}
	for _, p := range out {
		first, _, _ := strings.Cut(p, "/")
		switch {
		case p == "" || p == "." || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
			return nil, c.Errorf(key+".to", "say where it goes in the wheel, e.g. to = \"pkg/bin/tool\"", "places a file at %q, which is not a path inside the wheel", p)
		case in.Data == "" && (strings.HasSuffix(first, ".dist-info") || strings.HasSuffix(first, ".data")):
			return nil, c.Errorf(key+".to", "mkrelease writes .dist-info and .data itself; use `data` for the .data schemes", "places %s in a folder mkrelease writes", p)
		}
	}
	return out, nil
}
