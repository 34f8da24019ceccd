package audit

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// Evidence audits verifier evidence (runner.Check): sidecar, archive,
// SHA256SUMS, sanitising, raw records, store, every aggregate recomputed
// from the records, the run identity and the signed statements. The
// identity is checked against the exact wheels the evidence must be for:
// those of the target's bundle when it lies beside the evidence (every one
// of them, and nothing else), else the wheels beside it that the run names.
func Evidence(ctx context.Context, path string, o Options) (Item, error) {
	wheels, exact, err := evidenceWheels(ctx, path)
	if err != nil {
		return newItem(path, "evidence").Item, err
	}
	it, _, err := evidenceAudit(ctx, path, dist.Artifact{}, wheels, exact, o)
	return it, err
}

// evidenceAudit checks the evidence archive at path against wheels
// (exactly those when exact). known, when its digest is set, is the
// archive as its folder was loaded.
func evidenceAudit(ctx context.Context, path string, known dist.Artifact, wheels map[string]string, exact bool, o Options) (Item, *runner.Report, error) {
	it := newItem(path, "evidence")
	rep, err := runner.Check(ctx, path, runner.CheckOptions{TrustedKeys: o.TrustedKeys, Wheels: wheels, ExactWheels: exact,
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
// and dependencies of the target's bundle beside it (exact), else every
// wheel file beside it (the run must have installed those it names).
func evidenceWheels(ctx context.Context, path string) (map[string]string, bool, error) {
	dir := filepath.Dir(path)
	c, names := dist.Guess(filepath.Base(path))
	if c.Kind != dist.KindEvidence {
		return nil, false, &UsageError{Msg: path + ": not an evidence archive name (" + dist.NamesOf("NAME", "VERSION").Evidence("TARGET") + ")"}
	}
	bundlePath := filepath.Join(dir, names.Bundle(c.Target))
	if _, err := os.Stat(bundlePath); err == nil {
		// A bundle that does not check out is the bundle's own finding;
		// the evidence is then compared with the wheels beside it.
		if wheels, err := runner.BundleWheels(ctx, bundlePath); err == nil && len(wheels) > 0 {
			return wheels, true, nil
		}
	}
	wheels := map[string]string{}
	for _, w := range dist.WheelFiles(dir) {
		sha, _, err := checksum.File(w)
		if err != nil {
			return nil, false, err
		}
		wheels[filepath.Base(w)] = sha
	}
	return wheels, false, nil
}
