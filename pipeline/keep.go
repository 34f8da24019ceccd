package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/release"
)

// KeepEvidenceStage carries the verifier evidence of the output folder
// being replaced over into the new one when it is for exactly the wheels
// the new build made: the target's own wheels and its dependency closure,
// by file name and sha256. An identical rebuild so keeps evidence that
// took minutes to gather, or came from another machine. Evidence for
// wheels that changed, or for a target this run did not build, is
// dropped and named. It reads only the evidence's statements (their
// subjects) and hashes the archive; publish checks the rest.
type KeepEvidenceStage struct{}

// String names the stage.
func (KeepEvidenceStage) String() string { return "keep-evidence" }

// Run keeps what still matches.
func (KeepEvidenceStage) Run(ctx context.Context, r *release.Release) error {
	entries, err := os.ReadDir(r.Out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("keep evidence: %w", err)
	}
	names := dist.NamesOf(r.Config.Project.NormalizedName, r.Config.Project.Version)
	for _, e := range entries {
		c := names.Classify(e.Name())
		if c.Kind != dist.KindEvidence || !e.Type().IsRegular() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		why := keepEvidence(ctx, r, names, c.Target)
		if why != "" {
			r.Logger.Warn("dropped the verifier evidence of the previous build", "evidence", e.Name(), "target", c.Target, "why", why,
				"remedy", "run `mkrelease evidence run --target "+c.Target+"` (or import evidence for these wheels) again")
			continue
		}
		r.Logger.Info("kept the verifier evidence: it is for this build's wheels", "evidence", e.Name(), "target", c.Target)
	}
	return nil
}

// keepEvidence copies target's evidence from the output folder into the
// staging folder when it matches the build, and otherwise says why not.
func keepEvidence(ctx context.Context, r *release.Release, names dist.Names, target string) string {
	want := map[string]string{}
	// A shared (pure-Python) wheel alone does not say the target was
	// built: a build of other targets writes it too.
	built := slices.ContainsFunc(r.Targets, func(t config.Target) bool { return t.Name == target })
	for _, a := range r.Artifacts.Filter(dist.WheelsOf(target)) {
		want[a.Path] = a.SHA256
		built = built || a.Target == target
	}
	if len(want) == 0 {
		built = false
	}
	if !built {
		return "this build made no wheels for target " + target
	}
	if r.Manifest != nil {
		for _, t := range r.Manifest.Targets {
			if t.Name == target {
				for _, d := range t.Dependencies {
					want[d.Path] = d.SHA256
				}
			}
		}
	}
	archive, statements := names.Evidence(target), names.EvidenceStatements(target)
	sha, got, err := runner.StatementSubjects(filepath.Join(r.Out, statements), archive)
	if err != nil {
		return err.Error()
	}
	if !maps.Equal(want, got) {
		return "it is for other wheels: " + wheelDiff(want, got)
	}
	for _, f := range []struct{ name, sha string }{{archive, sha}, {statements, ""}} {
		src := filepath.Join(r.Out, f.name)
		fsha, size, err := checksum.File(src)
		if err != nil {
			return err.Error()
		}
		if f.sha != "" && fsha != f.sha {
			return fmt.Sprintf("%s has sha256 %s, its statements say %s", f.name, fsha, f.sha)
		}
		dst := filepath.Join(r.Stage, f.name)
		if err := checksum.CopyFile(ctx, src, dst, fsha, size, 0o644); err != nil {
			return err.Error()
		}
		if err := dist.WriteSidecar(dst, fsha); err != nil {
			return err.Error()
		}
	}
	return ""
}

// wheelDiff names the first wheels that differ between want (this build)
// and got (the evidence's).
func wheelDiff(want, got map[string]string) string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(want)) {
		switch g, ok := got[n]; {
		case !ok:
			out = append(out, n+" is not in its run")
		case g != want[n]:
			out = append(out, n+" was "+g[:min(12, len(g))]+", is now "+want[n][:min(12, len(want[n]))])
		}
	}
	for _, n := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[n]; !ok {
			out = append(out, n+" is no longer built")
		}
	}
	return strings.Join(out, "; ")
}
