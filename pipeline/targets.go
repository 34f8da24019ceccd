package pipeline

import (
	"context"
	"sync"

	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/provenance/attest"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel/assemble"
)

// targetsStage writes the wheels of every target and, behind them, each
// target's dependency closure and offline bundle: a target's closure and
// bundle are made while the next target's wheels are written, so that
// the bundle's work (hashing, its gzip, fetching the closure) overlaps
// the wheels' deflate. The files are those of the wheels stage, then the
// closure and bundle stages, run one after another: the bundle of a target
// depends on its own wheels alone, and the artifacts are listed sorted by
// path whatever the order they were recorded in. The pair check and the
// signing key's preparation (which looks at every wheel) run once the last
// wheel is written.
type targetsStage struct {
	wheels   assemble.Stage
	prepare  attest.PrepareStage
	closures bundle.Closures
	bundles  bundle.Stage
}

// String names the stage.
func (targetsStage) String() string { return "wheels and bundles" }

// Skip skips the stage when release.toml declares no wheel.
func (s targetsStage) Skip(r *release.Release) (string, bool) { return s.wheels.Skip(r) }

// Run writes the wheels on this goroutine and the closures and bundles
// on another, which takes each target up once its wheels are written.
func (s targetsStage) Run(ctx context.Context, r *release.Release) error {
	plan, err := s.wheels.Plan(r)
	if err != nil {
		return err
	}
	b := bundle.Targets{Closure: bundle.ClosureStage{Closures: s.closures}, Bundle: s.bundles}
	return overlap(ctx, len(r.Targets),
		func(ctx context.Context, i int) error { return plan.Write(ctx, r, i) },
		func(ctx context.Context) error {
			if err := assemble.CheckPairs(r); err != nil {
				return err
			}
			return s.prepare.Run(ctx, r)
		},
		func(ctx context.Context, i int) error { return b.Add(ctx, r, r.Targets[i]) })
}

// overlap calls write for each of n targets in order, then finish, on
// this goroutine, and meanwhile take on another goroutine for each
// target in order, once write returned for it: take(i) runs while
// write(i+1) does. The first error cancels the context both are given and
// is the one returned; the other's, once it stops, is only that it was
// stopped. overlap returns when both have stopped.
func overlap(ctx context.Context, n int, write func(context.Context, int) error, finish func(context.Context) error, take func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		first error
	)
	fail := func(err error) {
		once.Do(func() { first = err })
		cancel()
	}
	written := make(chan int, n) // never blocks the writer
	taken := make(chan struct{})
	go func() {
		defer close(taken)
		for i := range written {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			if err := take(ctx, i); err != nil {
				fail(err)
				return
			}
		}
	}()
	func() {
		defer close(written)
		for i := range n {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			if err := write(ctx, i); err != nil {
				fail(err)
				return
			}
			written <- i
		}
		if err := finish(ctx); err != nil {
			fail(err)
		}
	}()
	<-taken
	return first
}
