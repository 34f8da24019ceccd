package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/parallel"
	"github.com/mkrelease/mkrelease/internal/progress"
	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/release"
)

// SourcesStage prepares every source and verifies it against release.lock.
type SourcesStage struct {
	// Relock is the command printed to accept a drift.
	Relock string
	// Workspaces is filled with the prepared sources, for the stages that
	// read them (the pipeline shares one value between them).
	Workspaces Workspaces
	// Runner runs the toolchains' version commands: the build's executor,
	// so they run in the steps' sandbox.
	Runner StepRunner
	// RequireCurrent refuses a stale source work tree
	// (PrepareOptions.RequireCurrent).
	RequireCurrent bool
}

// Workspaces maps each source name to its prepared folder: the pinned tree
// with its overlays applied. The sources stage fills it; the compile stage
// copies a step's source from it, and the wheel stage takes an include's
// files from it.
type Workspaces map[string]string

// String names the stage.
func (SourcesStage) String() string { return "sources" }

// Run materialises, overlays and verifies the sources, and sets the epoch.
func (s SourcesStage) Run(ctx context.Context, r *release.Release) error {
	if s.Workspaces == nil {
		return errors.New("sources: no workspaces to fill (the pipeline shares them with the stages that read them)")
	}
	p, err := Prepare(ctx, PrepareOptions{
		Config: r.Config, Lock: r.Lock, LockFile: r.LockFile, Relock: s.Relock,
		Fetcher: &source.Fetcher{ProjectDir: r.Config.Dir, CacheDir: r.CacheDir, Logger: r.Logger},
		Scratch: r.Scratch, Logger: r.Logger, Digests: digestmemo.Memo{Dir: release.DigestsDir(r.CacheDir)},
		Trees: treeMemo(r), Runner: s.Runner, RequireCurrent: s.RequireCurrent,
	})
	if err != nil {
		return err
	}
	r.Found, r.Epoch, r.Trees = p.Found, p.Epoch, p.Trees
	maps.Copy(s.Workspaces, p.Workspaces)
	return nil
}

// treeMemo is where the sources stage remembers the digests of local
// sources read in place: the cache's digests folder, unless the run uses
// no cache (--no-cache hashes every file).
func treeMemo(r *release.Release) digestmemo.Memo {
	if r.NoCache {
		return digestmemo.Memo{}
	}
	return digestmemo.Memo{Dir: release.DigestsDir(r.CacheDir)}
}

// CompileStage runs every build step for every selected target through the
// action cache and puts the outputs in BinDir/<target>/ of the staging
// folder. Each step runs in the executor's sandbox, on a private copy of
// its source's workspace, so no step can change what a later step builds.
type CompileStage struct {
	// Executor runs the steps. The pipeline sets it up before the run, so
	// that the stages recording how the steps were isolated
	// (manifest.json, the provenance, part.json) are given its
	// [executor.Executor.Sandbox] too.
	Executor *executor.Executor
	// Remote, when set, is a shared action cache read on a local miss
	// (what counts of it, and what is written, is Remote's to say).
	Remote *Remote
	// Workspaces are the prepared sources (the sources stage fills them).
	Workspaces Workspaces
	// Report, when set, receives what the stage did: the executor's
	// sandbox when the stage starts, then every action, in the order of
	// the targets and steps, when the last ends. The pipeline hands it to
	// its caller (the CLI's summary and --json).
	Report *Report
	// Jobs is how many actions run at a time (0: as many as there are
	// CPUs, runtime.GOMAXPROCS; see [parallel.Each]). Actions are independent: each reads
	// prepared sources only, runs on its own copy of them and writes its
	// own outputs, so what the build writes does not depend on it.
	Jobs int
}

// Report is what the compile stage did: how its actions were isolated from
// the host, and every action of the run, in order.
type Report struct {
	Sandbox executor.Sandbox
	Actions []ActionRecord
}

// ActionRecord is one action of the run, for logs and --json.
type ActionRecord struct {
	Step     string        `json:"step"`
	Target   string        `json:"target"`
	Key      string        `json:"key"`
	Cached   bool          `json:"cached"`
	Duration time.Duration `json:"-"`
	Seconds  float64       `json:"seconds"`
	// Rebuilt says a damaged cache entry was discarded and the action rerun.
	Rebuilt bool `json:"rebuilt_corrupt_entry,omitempty"`
	// Remote says the outputs came from the remote action cache (Cached
	// is set too); RemoteRejected that the remote cache's entry failed a
	// check and the action ran here instead; RemoteIgnored that a record
	// of the remote cache was not taken because no trusted writer signed
	// it.
	Remote         bool `json:"remote,omitempty"`
	RemoteRejected bool `json:"remote_rejected,omitempty"`
	RemoteIgnored  bool `json:"remote_ignored,omitempty"`
	// RemoteWriter is the key id of the writer whose signed record of a
	// remote cache the outputs are, and RemoteCache that cache's URL:
	// taken in this run (Remote), or by an earlier one that put them in
	// the local cache. Empty for outputs built here.
	RemoteWriter string `json:"remote_writer,omitempty"`
	RemoteCache  string `json:"remote_cache,omitempty"`
	// RemoteMatched and RemoteMismatched, in verify mode, are the writers
	// of the remote cache's records of an action run here that name the
	// same outputs, and other ones: a key id, or "untrusted" for a
	// record no trusted writer signed.
	RemoteMatched    []string `json:"remote_matched,omitempty"`
	RemoteMismatched []string `json:"remote_mismatched,omitempty"`
}

// BinDir is the folder of the output tree holding build outputs by target.
const BinDir = "build"

// String names the stage.
func (CompileStage) String() string { return "compile" }

// Run builds.
func (s CompileStage) Run(ctx context.Context, r *release.Release) error {
	exe := s.Executor
	if exe == nil {
		return errors.New("compile: no executor (the pipeline sets one up)")
	}
	sb := exe.Sandbox()
	rep := s.Report
	if rep == nil {
		rep = &Report{}
	}
	rep.Sandbox = sb
	if sb.Isolated {
		r.Logger.Info("build steps are sandboxed", "sandbox", sb.Name, "namespaces", strings.Join(sb.Namespaces, ","))
		if sb.Caveat != "" {
			r.Logger.Warn("the build-step sandbox is weaker on this host", "caveat", sb.Caveat)
		}
	} else {
		r.Logger.Warn("build steps are NOT SANDBOXED: a step can read and change what the user running mkrelease can; the provenance and manifest.json record it, and the release policies refuse the release unless [build] allow_unsandboxed = true",
			"network_isolated", sb.Network, "reason", sb.Reason)
	}
	cache := r.ActionCache()
	var rm *remote
	if s.Remote != nil && s.Remote.Cache != nil {
		var err error
		if rm, err = newRemote(s.Remote, r.Config.Cache.RemoteMaxBytes(), r.Logger); err != nil {
			return err
		}
	}
	type action struct {
		t    config.Target
		step config.Step
	}
	var actions []action
	for _, t := range r.Targets {
		for _, step := range r.Config.Build.Steps {
			if step.AppliesTo(t.Name) {
				actions = append(actions, action{t, step})
			}
		}
	}
	var task *progress.Task
	if len(actions) > 0 {
		task = progress.FromContext(ctx).Start("build actions", int64(len(actions)), progress.Items)
	}
	defer task.Done()
	// A go build, a C compiler or a test run leaves a core idle for part
	// of its time (linking, one package waiting on another): actions run
	// side by side. The first failure stops the others.
	recs := make([]ActionRecord, len(actions))
	err := parallel.Each(ctx, s.Jobs, len(actions), func(ctx context.Context, i int) error {
		defer task.Add(1)
		var err error
		recs[i], err = s.runStep(ctx, r, exe, cache, rm, actions[i].t, actions[i].step)
		return err
	})
	if err != nil {
		return err
	}
	rep.Actions = append(rep.Actions, recs...)
	return nil
}

// Action composes the action of step for target t, run under the
// isolation level isolation ([executor.Sandbox.Level]), which its key
// records.
func Action(r *release.Release, t config.Target, step config.Step, isolation string) executor.Action {
	// A step's Go build cache and the folder for the caches of the other
	// tools it runs ($MKRELEASE_STEP_CACHE, zig's) are new at every run, in
	// its scratch: a cache a step can write outlives no run, so no step,
	// not even an earlier run of the same one from other sources (a commit
	// since reverted, a build with --no-cache), can plant a compiled
	// package or a C library in what a later run links. Go's cache maps an
	// action to its output by the action's inputs and cannot tell a forged
	// output from a real one; a shared cache would need every entry
	// rebuilt to be checked. What it saved: the standard library compiled
	// again by a step whose inputs changed (tens of seconds an action); a
	// step whose inputs did not change is served whole by the action cache.
	extra := map[string]string{}
	for k, v := range t.Env {
		extra[k] = v
	}
	for k, v := range step.Env {
		extra[k] = v
	}
	extra["MKRELEASE_TARGET"] = t.Name
	extra["MKRELEASE_NAME"] = r.Config.Project.NormalizedName
	extra["MKRELEASE_VERSION"] = r.Config.Project.Version
	env := executor.Environment(executor.EnvOptions{
		Epoch:    r.Epoch,
		PassEnv:  r.Config.Build.PassEnv,
		Extra:    extra,
		Uses:     step.Uses,
		ToolPath: r.Config.ToolPath(),
	})
	inputs := map[string]string{}
	reads := append([]string{step.Source}, step.Uses...)
	for _, s := range r.Found.Sources {
		if contains(reads, s.Name) {
			inputs["source:"+s.Name] = s.Tree
		}
	}
	for _, o := range r.Found.Overlays {
		if contains(reads, o.Source) {
			inputs["source:"+o.Source] = o.Result // the last overlay's result wins
		}
	}
	// A toolchain is its version line and the digest of its executable: a
	// compiler swapped behind the same version line is not served the
	// outputs of the one it replaced.
	for _, tc := range r.Found.Toolchains {
		if tc.Target == "" || tc.Target == t.Name {
			inputs["toolchain:"+tc.Key()] = tc.Version
			inputs["toolchain-sha256:"+tc.Key()] = tc.SHA256
		}
	}
	var tools []string
	for _, tc := range r.Config.Toolchains {
		if len(tc.Command) > 0 {
			tools = append(tools, executor.Expand(tc.Command[0], env))
		}
	}
	return executor.Action{
		Step: step.Name, Target: t.Name, Argv: step.Run, Env: env, Dir: step.Dir,
		Outputs: step.Outputs, Inputs: inputs, Timeout: step.Timeout.Duration,
		Tools: tools, Isolation: isolation,
	}
}

func (s CompileStage) runStep(ctx context.Context, r *release.Release, exe *executor.Executor, cache *actioncache.Cache, rm *remote, t config.Target, step config.Step) (ActionRecord, error) {
	a := Action(r, t, step, exe.Sandbox().Level())
	key := a.Key()
	rec := ActionRecord{Step: step.Name, Target: t.Name, Key: key}
	dst := filepath.Join(r.Stage, BinDir, t.Name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return rec, err
	}
	log := r.Logger.With("step", step.Name, "target", t.Name)
	var remoteSeen fetched
	if !r.NoCache {
		origin, err := localOrigin(cache, key, rm, log)
		if err != nil {
			return rec, fmt.Errorf("step %s [%s]: %w", step.Name, t.Name, err)
		}
		e, err := cache.Restore(key, step.Name, t.Name, step.Outputs, dst)
		var corrupt *actioncache.CorruptError
		switch {
		case err == nil:
			rec.Cached = true
			rec.RemoteWriter, rec.RemoteCache = origin.Writer, origin.Cache
			log.Info("action cached", "key", key[:12])
			register(r, t.Name, step.Name, e)
			return rec, nil
		case errors.As(err, &corrupt):
			log.Warn("discarded a damaged cache entry; running the action again", "key", key[:12], "problem", corrupt.Reason)
			rec.Rebuilt = true
		case !errors.Is(err, actioncache.ErrMiss):
			return rec, fmt.Errorf("step %s [%s]: %w", step.Name, t.Name, err) // e.g. *actioncache.WriteError: the entry is kept
		}
		if rm.usable() && !rm.verify {
			e, err := rm.fetch(ctx, cache, key, t, step, dst, &rec, &remoteSeen, log)
			if err != nil {
				return rec, err
			}
			if e != nil {
				rec.Cached, rec.Remote, rec.Rebuilt = true, true, false
				log.Info("action cached", "key", key[:12], "from", rm.cache.String(), "writer", rec.RemoteWriter)
				register(r, t.Name, step.Name, e)
				return rec, nil
			}
		}
	}
	run := filepath.Join(r.Scratch, "actions", key[:16])
	paths := executor.Paths{Workspace: filepath.Join(run, "src"), Out: filepath.Join(run, "out"), Scratch: filepath.Join(run, "scratch"),
		Sources: map[string]string{}}
	for _, u := range step.Uses {
		paths.Sources[u] = s.Workspaces[u] // read-only in the sandbox
	}
	defer os.RemoveAll(run)
	if err := os.MkdirAll(paths.Out, 0o755); err != nil {
		return rec, err
	}
	// The step's own copy of the prepared source: what it changes there dies
	// with it.
	if err := treehash.Copy(ctx, s.Workspaces[step.Source], paths.Workspace); err != nil {
		return rec, fmt.Errorf("step %s [%s]: copy the workspace of source %s: %w", step.Name, t.Name, step.Source, err)
	}
	log.Info("action running", "key", key[:12])
	res, err := exe.Run(ctx, a, paths)
	rec.Duration, rec.Seconds = res.Duration, res.Duration.Round(time.Millisecond).Seconds()
	if err != nil {
		return rec, err
	}
	if err := checkOutputs(paths.Out, step); err != nil {
		return rec, &executor.StepError{Step: step.Name, Target: t.Name, Reason: err.Error(), Tail: executor.Tail(res.Log, 15)}
	}
	if _, err := cache.Put(key, step.Name, t.Name, paths.Out, step.Outputs, res.Log); err != nil {
		return rec, err
	}
	e, err := cache.Restore(key, step.Name, t.Name, step.Outputs, dst)
	if err != nil {
		return rec, fmt.Errorf("step %s [%s]: reading back its cache entry: %w", step.Name, t.Name, err)
	}
	log.Info("action done", "took", res.Duration.Round(time.Millisecond))
	if rm.usable() && rm.verify {
		remoteSeen.badSlots = rm.compare(ctx, e, &rec, log)
	}
	if rm.usable() && rm.upload {
		rm.put(ctx, cache, e, rec.RemoteRejected, remoteSeen.badSlots, log)
	}
	register(r, t.Name, step.Name, e)
	return rec, nil
}

// localOrigin returns where the local cache's entry for key came from
// (nothing for one built here, or no entry). An entry taken from a remote
// cache is forgotten, with a warning, so that the action runs here, when
// nobody checked who wrote its record (an earlier mkrelease took it), or,
// when this run uses a remote cache (rm), when its writer is no longer
// among the trusted ones (a key taken out of [cache] trusted_writers).
func localOrigin(cache *actioncache.Cache, key string, rm *remote, log *slog.Logger) (actioncache.Origin, error) {
	o, imported, err := cache.Origin(key)
	switch {
	case err != nil:
		log.Warn("discarded a cache entry whose origin is unreadable; running the action again", "key", key[:12], "problem", err.Error())
	case imported && o.Writer == "":
		log.Warn("discarded a cache entry an earlier mkrelease took from a remote cache without checking who wrote it; running the action again", "key", key[:12])
	case imported && rm != nil && !slices.Contains(rm.slots, o.Writer):
		log.Warn("discarded a cache entry taken from a remote cache whose writer is no longer trusted; running the action again", "key", key[:12], "writer", o.Writer, "url", o.Cache)
	default:
		return o, nil
	}
	return actioncache.Origin{}, cache.Forget(key)
}

func register(r *release.Release, target, step string, e *actioncache.Entry) {
	for _, o := range e.Outputs {
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindBinary, Path: path.Join(BinDir, target, o.Path),
			Target: target, Step: step, SHA256: o.SHA256, Size: o.Size})
	}
}

// checkOutputs makes sure the step wrote exactly its declared outputs, as
// regular files. Its errors list a bounded number of file names however
// many the step wrote: undeclared ones up to maxListed, and for a missing
// output the files written nearest to its name (missingOutputsError).
func checkOutputs(out string, step config.Step) error {
	declared := map[string]bool{}
	for _, o := range step.Outputs {
		declared[path.Clean(o)] = true
	}
	outputs := slices.Sorted(maps.Keys(declared))
	var extra []string
	extras := 0
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("output %s is not a regular file (links and special files are not release outputs)", rel)
		}
		if declared[rel] {
			delete(declared, rel)
		} else {
			extras++
			if len(extra) < maxListed {
				extra = append(extra, rel)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(declared) > 0 {
		return missingOutputsError(out, slices.Sorted(maps.Keys(declared)), outputs)
	}
	if len(extra) > 0 {
		return fmt.Errorf("wrote undeclared output(s): %s (declare them in `outputs` or write them elsewhere)", listed(extra, extras))
	}
	return nil
}
