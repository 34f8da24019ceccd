package release

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/dist"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// ChecksumStage writes a NAME.sha256 sidecar beside every top-level
// artifact and SHA256SUMS listing every artifact of the output folder
// (build outputs under build/ included), from the digests recorded when
// each was written. Both are in `sha256sum -c` format. It runs after every
// stage that writes an artifact.
type ChecksumStage struct{}

// String names the stage.
func (ChecksumStage) String() string { return "checksums" }

// Run writes the sidecars and SHA256SUMS.
func (ChecksumStage) Run(_ context.Context, r *Release) error {
	var sums checksum.Sums
	for _, a := range r.Artifacts.Filter(dist.Not(dist.ByKind(dist.KindProvenance))) {
		sums = append(sums, checksum.Sum{Name: a.Path, SHA256: a.SHA256})
		if !strings.Contains(a.Path, "/") {
			if err := checksum.WriteSidecar(filepath.Join(r.Stage, a.Path), a.SHA256); err != nil {
				return err
			}
		}
	}
	return checksum.WriteSums(filepath.Join(r.Stage, "SHA256SUMS"), sums)
}
