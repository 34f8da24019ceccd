package release

import (
	"context"

	"github.com/mkrelease/mkrelease/internal/dist"
)

// ChecksumStage writes the artifact list (artifacts.json: every
// reproducible artifact of the output folder, build outputs under build/
// included, with the digests recorded when each was written), SHA256SUMS
// derived from it, and a NAME.sha256 sidecar beside every top-level
// artifact, in `sha256sum -c` format. It runs after every stage that
// writes a reproducible artifact; the signed statements come later and are
// in neither.
type ChecksumStage struct{}

// String names the stage.
func (ChecksumStage) String() string { return "checksums" }

// Run writes the list, the sidecars and SHA256SUMS.
func (ChecksumStage) Run(_ context.Context, r *Release) error {
	p := r.Config.Project
	list := dist.NewArtifactList(p.NormalizedName, p.Version, r.Artifacts.Filter(nil))
	self, err := dist.WriteArtifactList(r.Stage, list)
	if err != nil {
		return err
	}
	r.Artifacts.Add(self)
	return nil
}
