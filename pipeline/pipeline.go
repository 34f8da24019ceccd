// Package pipeline assembles the release pipelines from their stages, so
// that every verb that builds (build, reproduce, and later release) runs
// exactly the same sequence.
package pipeline

import (
	"context"
	"crypto"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/workdir"
	"github.com/mkrelease/mkrelease/part"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/provenance/attest"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel/assemble"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// BuildOptions are the inputs of a build.
type BuildOptions struct {
	Config   *config.Config
	Lock     *lock.Lock
	LockFile string
	// Relock is the command printed to accept a drift.
	Relock  string
	Targets []config.Target
	Out     string
	// CacheDir holds the action cache and fetched sources.
	CacheDir string
	NoCache  bool
	Logger   *slog.Logger
	// Signer signs the provenance; nil builds without it (reproduce).
	Signer provenance.Signer
	// Getenv reads CI facts for the provenance.
	Getenv func(string) string
	// Sandbox configures the build steps' sandbox.
	Sandbox executor.Options
	// Remote, when set, is a shared action cache read on a local miss and
	// written after each action that ran (see [build.Remote]).
	Remote *build.Remote
	// Part builds a part of a release (see package part): part.json and a
	// signed part statement instead of the release's provenance.
	Part bool
	// Compiled, when set, is told what the compile stage did (its sandbox
	// and every action) once the build succeeded, before Build returns.
	Compiled func(build.Report)
	// RequireCurrent refuses to build from a source whose git work tree
	// is not what the lock pins, rather than warning (see
	// [config.Build.Current]).
	RequireCurrent bool
}

func (o BuildOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// BuildStages are the stages of `mkrelease build`, in order. The stages
// that record how the build steps were isolated are given the compile
// stage's executor's sandbox. The sources stage shares the prepared
// sources, and the closure stage the closures, with the stages that read
// them; a part's sign stage reads closures too, and must be given the
// same. signer is sign's key, which two attest.PrepareStage get ready
// meanwhile when it will sign: one first, one after the wheels.
func BuildStages(o BuildOptions, compile build.CompileStage, signer provenance.Signer, sign Stage, closures bundle.Closures) []Stage {
	sb := compile.Executor.Sandbox()
	ws := build.Workspaces{}
	compile.Workspaces = ws
	facts := release.Facts{Sandbox: sb, Dependencies: closures.Dependencies}
	return []Stage{
		attest.PrepareStage{Signer: signer, First: true},                                                                 // a key that will sign gets ready meanwhile (scrypt)
		build.SourcesStage{Relock: o.Relock, Workspaces: ws, Runner: compile.Executor, RequireCurrent: o.RequireCurrent}, // verify every input against release.lock first
		compile, // run the steps per target, sandboxed, through the action cache
		targetsStage{ // per target: the wheels, then (while the next target's wheels are written) the closure and bundle
			wheels:   assemble.Stage{Workspaces: ws},                // the wheels, their platform tags, then the pair check
			prepare:  attest.PrepareStage{Signer: signer},           // the same as the first, once a wheel differs from the folder's
			closures: closures,                                      // each target's dependency closure, fetched and verified
			bundles:  bundle.Stage{Sandbox: sb, Closures: closures}, // release notes and the target's offline bundle
		},
		bundle.SBOMStage{Closures: closures}, // the release's SPDX and CycloneDX documents
		release.ManifestStage{Facts: facts},  // record inputs and outputs
		release.ChecksumStage{},              // sidecars and SHA256SUMS, once every artifact exists
		KeepEvidenceStage{},                  // the previous folder's evidence, when it is for these wheels
		sign,                                 // signed provenance over the artifacts; not in SHA256SUMS
		attest.ReadyStage{Signer: signer},    // a key decrypted meanwhile opened, even if nothing was signed
		release.OutputStage{},                // swap the staging folder into place, last
	}
}

// Build runs the build pipeline and returns the finished release. The
// output folder is replaced only when every stage succeeded.
func Build(ctx context.Context, o BuildOptions) (*release.Release, error) {
	if err := release.CheckOutput(o.Out); err != nil {
		return nil, err
	}
	// A key still being decrypted (provenance.InBackground) that turns
	// out not to open stops the build at once, with the key's error,
	// instead of when the provenance is signed at the end.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if p, ok := o.Signer.(provenance.Pending); ok {
		go func() {
			if err := p.Wait(ctx); err != nil {
				stop(err)
			}
		}()
	}
	r, err := buildRelease(ctx, o)
	if err != nil && ctx.Err() != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
			return nil, cause
		}
	}
	return r, err
}

// buildRelease is Build once the key is watched.
func buildRelease(ctx context.Context, o BuildOptions) (*release.Release, error) {
	// Folders a killed earlier run left (its scratch, its staging folder
	// beside the output) go first; those of live runs are locked.
	scratchDir, removed, err := workdir.Scratch("mkrelease-build-")
	if err != nil && scratchDir == nil {
		return nil, err
	}
	defer scratchDir.Remove()
	scratch := scratchDir.Path
	stageDir, more, serr := staging(o.Out)
	workdir.LogSwept(o.logger(), append(removed, more...), errors.Join(err, serr))
	if stageDir == nil {
		return nil, serr
	}
	defer stageDir.Close()
	r := &release.Release{
		Config: o.Config, Lock: o.Lock, LockFile: o.LockFile, Targets: o.Targets,
		Out: o.Out, Stage: stageDir.Path, CacheDir: o.CacheDir, Scratch: scratch, NoCache: o.NoCache, Logger: o.Logger,
	}
	defer removeStaged(r)
	started := time.Now()
	// The executor is set up before the run: its sandbox is recorded by
	// stages after the compile stage, which runs on it.
	exe := executor.New(ctx, o.Sandbox)
	// The closures are shared by the stages that resolve and read them.
	closures := bundle.Closures{}
	var compiled build.Report
	compile := build.CompileStage{Executor: exe, Remote: o.Remote, Report: &compiled}
	var sign Stage = attest.Stage{Signer: o.Signer, Started: started, Getenv: o.Getenv, Sandbox: exe.Sandbox(), Compiled: &compiled}
	if o.Part {
		sign = part.Stage{Signer: o.Signer, Getenv: o.Getenv, Sandbox: exe.Sandbox(), Closures: closures}
	}
	if err := Run(ctx, r, BuildStages(o, compile, o.Signer, sign, closures)); err != nil {
		return nil, err
	}
	if o.Compiled != nil {
		o.Compiled(compiled)
	}
	if !o.NoCache && o.CacheDir != "" {
		trimCache(r.ActionCache(), assemble.PlatformMemo(o.CacheDir), o.logger())
	}
	return r, nil
}

// trimCache forgets the action cache entries no build has used for a
// while (at most one look a day, after a build that succeeded). A cache
// that cannot be trimmed is no reason to fail the build: it is logged.
func trimCache(c *actioncache.Cache, platforms platform.Memo, log *slog.Logger) {
	now := time.Now()
	st, err := c.Trim(now)
	if err != nil {
		log.Warn("action cache not fully trimmed", "problem", err.Error())
	}
	if st.Skipped {
		return
	}
	// The binaries' platform memos go by the same rule, on the same day.
	pm, err := platforms.Trim(now, actioncache.MaxUnused)
	if err != nil {
		log.Warn("platform memos not fully trimmed", "problem", err.Error())
	}
	if st.Entries > 0 || st.Memos > 0 || st.StepFolders > 0 || pm > 0 {
		log.Info("action cache trimmed: removed what no build used recently",
			"unused_days", int(actioncache.MaxUnused.Hours()/24), "entries", st.Entries, "bytes", st.Bytes, "memos", st.Memos,
			"step_caches", st.StepFolders, "step_cache_bytes", st.StepBytes, "platform_memos", pm)
	}
}

// MergeOptions are the inputs of a merge.
type MergeOptions struct {
	Config *config.Config
	Lock   *lock.Lock
	// Parts are the part folders.
	Parts []string
	Out   string
	// Trusted are the keys a part statement must be signed by; without
	// any the merge is refused, unless AllowUnsigned.
	Trusted []crypto.PublicKey
	// AllowUnsigned takes the parts no trusted key vouches for
	// ([part.CheckOptions.AllowUnsigned]); the merged release records
	// them, in manifest.json and its provenance.
	AllowUnsigned bool
	// Signer signs the merged release's provenance.
	Signer provenance.Signer
	Getenv func(string) string
	Logger *slog.Logger
}

// MergeStages are the stages of `mkrelease merge`, in order: the parts'
// files, then the release-wide files a build writes after its bundles,
// made by the same stages from the parts' records.
func MergeStages(parts []*part.Part, sign attest.Stage) []Stage {
	return []Stage{
		part.JoinStage{Parts: parts}, // each target's files from its part, checked as copied
		part.SBOMStage{Parts: parts}, // the release SBOM from the parts' descriptions
		release.ManifestStage{},      // manifest.json: the parts' shared inputs and their targets
		release.ChecksumStage{},      // artifacts.json, sidecars and SHA256SUMS
		sign,                         // one provenance naming the parts and their builders
		release.OutputStage{},        // swap the staging folder into place, last
	}
}

// Merge checks the parts and joins them into one release folder, o.Out,
// byte for byte what one machine building every target writes (but for
// the signed provenance) when every part's statement verified with a
// trusted key. A part that does not pass [part.Check] refuses the merge
// before anything is written.
func Merge(ctx context.Context, o MergeOptions) (*release.Release, []*part.Part, error) {
	if err := release.CheckOutput(o.Out); err != nil {
		return nil, nil, err
	}
	if out, err := filepath.Abs(o.Out); err == nil {
		for _, p := range o.Parts {
			if ap, err := filepath.Abs(p); err == nil && ap == out {
				return nil, nil, &release.OutputError{Dir: o.Out, Msg: "is one of the parts: merge would replace it"}
			}
		}
	}
	parts, err := part.Check(ctx, o.Parts, part.CheckOptions{Config: o.Config, Lock: o.Lock, Trusted: o.Trusted, AllowUnsigned: o.AllowUnsigned})
	if err != nil {
		return nil, nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	stageDir, swept, serr := staging(o.Out)
	workdir.LogSwept(logger, swept, serr)
	if stageDir == nil {
		return nil, nil, serr
	}
	defer stageDir.Close()
	r := &release.Release{Config: o.Config, Lock: o.Lock, Targets: o.Config.Targets, Out: o.Out, Stage: stageDir.Path, Logger: logger}
	defer removeStaged(r)
	materials, byproducts := part.Provenance(parts)
	sign := attest.Stage{Signer: o.Signer, Started: time.Now(), Getenv: o.Getenv, Materials: materials, Byproducts: byproducts}
	if w := part.Weakest(parts); w != nil {
		sign.Sandbox = w.Manifest.Sandbox.Executor() // the merged release's, as its manifest says
	}
	if err := Run(ctx, r, MergeStages(parts, sign)); err != nil {
		return nil, nil, err
	}
	return r, parts, nil
}

// staging sweeps the staging folders an interrupted run left beside the
// output folder out (those of live runs are locked) and creates this
// run's. The folder is nil when it could not be created; the error may
// also be a sweep's alone, for the log.
func staging(out string) (*workdir.Dir, []string, error) {
	parent, prefix := filepath.Dir(filepath.Clean(out)), "."+filepath.Base(filepath.Clean(out))+".tmp-"
	swept, err := workdir.Sweep(parent, prefix)
	d, cerr := workdir.Create(parent, prefix+"*")
	if cerr != nil {
		return nil, swept, cerr
	}
	return d, swept, err
}

// removeStaged removes r's staging folder, unless the output stage swapped
// it into place.
func removeStaged(r *release.Release) {
	if r.Stage != "" {
		os.RemoveAll(r.Stage)
	}
}
