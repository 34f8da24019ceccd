package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mkrelease/mkrelease/release"
)

// Stage is one step of a pipeline.
type Stage interface {
	// String names the stage in logs.
	String() string
	// Run does the stage's work on r.
	Run(ctx context.Context, r *release.Release) error
}

// Skipper is implemented by stages that may not apply to a run.
type Skipper interface {
	// Skip returns a reason when the stage does not apply.
	Skip(r *release.Release) (reason string, skip bool)
}

// Run runs the stages in order, stopping at the first error.
func Run(ctx context.Context, r *release.Release, stages []Stage) error {
	log := r.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
		r.Logger = log
	}
	for _, s := range stages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if sk, ok := s.(Skipper); ok {
			if reason, skip := sk.Skip(r); skip {
				log.Info("skipped", "stage", s.String(), "reason", reason)
				continue
			}
		}
		start := time.Now()
		log.Debug("stage start", "stage", s.String())
		if err := s.Run(ctx, r); err != nil {
			if errors.Is(err, context.Canceled) {
				return fmt.Errorf("%s: interrupted", s)
			}
			return err
		}
		log.Debug("stage done", "stage", s.String(), "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}
