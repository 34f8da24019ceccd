package audit

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// Evidence audits verifier evidence (runner.Check): sidecar, archive,
// SHA256SUMS, sanitising, raw records, store, every aggregate recomputed
// from the records, the run identity and the signed statements. The
// identity is checked against the exact wheels the evidence must be for:
// those of the target's bundle, which must lie beside the evidence and
// check out (every one of them, and nothing else). Without it nothing
// shows which wheels the evidence is for, and the identity check fails.
func Evidence(ctx context.Context, path string, o Options) (Item, error) {
	wheels, err := evidenceWheels(ctx, path)
	if err != nil {
		return newItem(path, "evidence").Item, err
	}
	it, _, err := evidenceAudit(ctx, path, dist.Artifact{}, wheels, o)
	return it, err
}

// evidenceAudit checks the evidence archive at path against wheels, the
// exact wheels of its target's bundle (none when the bundle cannot be
// read: a finding). known, when its digest is set, is the archive as its
// folder was loaded.
func evidenceAudit(ctx context.Context, path string, known dist.Artifact, wheels map[string]string, o Options) (Item, *runner.Report, error) {
	it := newItem(path, "evidence")
	rep, err := runner.Check(ctx, path, runner.CheckOptions{TrustedKeys: o.TrustedKeys, Wheels: wheels,
		ArchiveSHA256: known.SHA256, ArchiveSize: known.Size})
	if err != nil {
		return it.Item, nil, err
	}
	by := map[string][]Finding{}
	for _, f := range rep.Findings {
		by[f.Check] = append(by[f.Check], f)
	}
	seen := map[string]bool{}
	for _, c := range rep.Checks {
		seen[c] = true
		it.check(c, by[c]...)
	}
	for _, f := range rep.Findings {
		if !seen[f.Check] {
			seen[f.Check] = true
			it.check(f.Check, by[f.Check]...)
		}
	}
	return it.Item, rep, nil
}

// evidenceWheels finds what the evidence at path must be for: the wheels
// of the target's bundle beside it, its pair and its closure; nil when
// there is no such bundle or it does not check out (the identity check
// then fails, naming it; a bundle's own problems are its own findings).
// Wheel files beside the evidence are no substitute: they are not the
// closure the run installed, and any could be dropped there.
func evidenceWheels(ctx context.Context, path string) (map[string]string, error) {
	dir := filepath.Dir(path)
	c, names := dist.Guess(filepath.Base(path))
	if c.Kind != dist.KindEvidence {
		return nil, &UsageError{Msg: path + ": not an evidence archive name (" + dist.NamesOf("NAME", "VERSION").Evidence("TARGET") + ")"}
	}
	bundlePath := filepath.Join(dir, names.Bundle(c.Target))
	if _, err := os.Stat(bundlePath); err != nil {
		return nil, nil
	}
	wheels, err := runner.BundleWheels(ctx, bundlePath)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	return wheels, nil
}
