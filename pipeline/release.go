package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/publish"
	"github.com/mkrelease/mkrelease/release"
)

// ReleaseOptions are the inputs of `mkrelease release`: a build, the
// verifier lanes on every target this machine can run, and a publish of
// the targets that have evidence, over one release folder (Build.Out).
type ReleaseOptions struct {
	Build BuildOptions
	// Evidence runs one target's lanes; the pipeline sets its Target and
	// Dist.
	Evidence runner.RunOptions
	// Publish publishes; the pipeline sets its Dist, and its Targets when
	// Named is false.
	Publish publish.Options
	// Named is set when the user named the targets (Build.Targets): a
	// named target whose evidence cannot run here is an error instead of
	// being left out.
	Named bool
	// Hooks report what each stage found as soon as it ends.
	Hooks ReleaseHooks
}

// ReleaseHooks are told what a release's stages found, in order, as soon
// as each ends, so that a long release reports as it goes. Nil hooks are
// not called.
type ReleaseHooks struct {
	// Built is called after the build.
	Built func(*release.Release) error
	// Skipped is called for a target whose evidence this machine cannot
	// run.
	Skipped func(target string, err *runner.NotRunnableError)
	// Evidence is called after every target's lanes ran.
	Evidence func([]EvidenceRun) error
	// Unreleased is called for each target left out for want of evidence.
	Unreleased func(target string)
}

// EvidenceRun is one target's verifier run.
type EvidenceRun struct {
	Target string
	Result *runner.Result
}

// ReleaseResult is what a release did.
type ReleaseResult struct {
	Built    *release.Release
	Evidence []EvidenceRun
	// Targets are the targets published (or refused); Unreleased those
	// left out for want of evidence.
	Targets, Unreleased []string
	Published           *publish.Result
}

// NoTargetError is a release that has nothing to run or publish: no target
// can run its evidence here, or none has evidence.
type NoTargetError struct{ Msg string }

// Error says what is missing and what to do.
func (e *NoTargetError) Error() string { return e.Msg }

// ExitCode is 2: there is nothing for this invocation to do here.
func (e *NoTargetError) ExitCode() int { return 2 }

// releaseRun is the state of one release.
type releaseRun struct {
	o   ReleaseOptions
	res ReleaseResult
}

// releaseStage is one step of a release.
type releaseStage struct {
	name string
	run  func(*releaseRun, context.Context) error
}

// releaseStages are the steps of a release, in order.
func releaseStages() []releaseStage {
	return []releaseStage{
		{"build", (*releaseRun).build},       // the build pipeline: dist/ replaced in one step
		{"evidence", (*releaseRun).evidence}, // the lanes of every target this machine can run
		{"select", (*releaseRun).choose},     // the targets that have evidence
		{"publish", (*releaseRun).publish},   // the gate, the summary, the channel
	}
}

// Release runs a release. Its error is the first stage's that failed; a
// refused publish returns the result with publish's error, so the caller
// can report every denial.
func Release(ctx context.Context, o ReleaseOptions) (*ReleaseResult, error) {
	r := &releaseRun{o: o}
	for _, s := range releaseStages() {
		if err := ctx.Err(); err != nil {
			return &r.res, err
		}
		if err := s.run(r, ctx); err != nil {
			return &r.res, err
		}
	}
	return &r.res, nil
}

func (r *releaseRun) build(ctx context.Context) error {
	built, err := Build(ctx, r.o.Build)
	if err != nil {
		return err
	}
	r.res.Built = built
	if h := r.o.Hooks.Built; h != nil {
		return h(built)
	}
	return nil
}

func (r *releaseRun) evidence(ctx context.Context) error {
	eo := r.o.Evidence
	eo.Dist = r.o.Build.Out
	runs, err := Evidence(ctx, eo, r.o.Build.Targets, r.o.Named, r.o.Hooks.Skipped)
	if err != nil {
		return err
	}
	r.res.Evidence = runs
	if h := r.o.Hooks.Evidence; h != nil {
		return h(runs)
	}
	return nil
}

// Evidence runs the verifier lanes of each target (o with its Target set)
// in order. A target whose wheels cannot run on this machine is passed to
// skipped and left out, unless named is set (the user named the targets):
// then it is the error. No target run at all is a *[NoTargetError].
func Evidence(ctx context.Context, o runner.RunOptions, targets []config.Target, named bool, skipped func(string, *runner.NotRunnableError)) ([]EvidenceRun, error) {
	var runs []EvidenceRun
	for _, t := range targets {
		eo := o
		eo.Target = t.Name
		if eo.Logger != nil {
			eo.Logger.Info("running the verifier lanes", "target", t.Name)
		}
		res, err := runner.Run(ctx, eo)
		var nr *runner.NotRunnableError
		if errors.As(err, &nr) && !named {
			if skipped != nil {
				skipped(t.Name, nr)
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, EvidenceRun{Target: t.Name, Result: res})
	}
	if len(runs) == 0 {
		return nil, &NoTargetError{Msg: "no target of release.toml can run on this machine: run mkrelease evidence run on a machine of each target's platform, then mkrelease evidence import the evidence"}
	}
	return runs, nil
}

// choose keeps the targets that have evidence in the folder (run here or
// imported before), unless the user named them.
func (r *releaseRun) choose(context.Context) error {
	if r.o.Named {
		for _, t := range r.o.Build.Targets {
			r.res.Targets = append(r.res.Targets, t.Name)
		}
		return nil
	}
	with, without := publish.TargetsWithEvidence(r.o.Build.Config, r.o.Build.Out)
	for _, t := range without {
		r.res.Unreleased = append(r.res.Unreleased, t)
		if h := r.o.Hooks.Unreleased; h != nil {
			h(t)
		}
	}
	r.res.Targets = with
	if len(with) == 0 {
		return &NoTargetError{Msg: fmt.Sprintf("no target has verifier evidence in %s: nothing can be released", r.o.Build.Out)}
	}
	return nil
}

func (r *releaseRun) publish(ctx context.Context) error {
	po := r.o.Publish
	po.Dist, po.Targets = r.o.Build.Out, r.res.Targets
	res, err := publish.Run(ctx, po)
	r.res.Published = res
	return err
}
