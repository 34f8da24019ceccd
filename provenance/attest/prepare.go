package attest

import (
	"context"
	"path/filepath"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// PrepareStage gets the signing key ready while the build goes on, once it
// is certain that the provenance will be signed again: it runs after the
// wheels are written, and when one of them is not, under its name and
// digest, in the SHA256SUMS of the release folder the build replaces, the
// statement cannot be the one that folder holds (the provenance stage
// keeps that one only when it states exactly what this build would). A
// development key then reads its private key (scrypt) in the background,
// on a core the bundles leave idle, instead of after everything else.
type PrepareStage struct {
	Signer provenance.Signer
}

// String names the stage.
func (PrepareStage) String() string { return "prepare-signing" }

// Skip skips the stage for a signer that has nothing to prepare.
func (s PrepareStage) Skip(*release.Release) (string, bool) {
	if _, ok := s.Signer.(provenance.Preparer); !ok {
		return "the signing key needs no preparation", true
	}
	return "", false
}

// Run starts the preparation when the provenance will be signed.
func (s PrepareStage) Run(_ context.Context, r *release.Release) error {
	if p, ok := s.Signer.(provenance.Preparer); ok && willSign(r) {
		r.Logger.Debug("reading the signing key meanwhile: a wheel differs from the release folder's, so the provenance will be signed again")
		p.Prepare()
	}
	return nil
}

// willSign says that some wheel r holds is not in the SHA256SUMS of the
// release folder r replaces, under its name, with its digest.
func willSign(r *release.Release) bool {
	wheels := r.Artifacts.Filter(dist.ByKind(dist.KindWheel))
	if len(wheels) == 0 {
		return false
	}
	if r.Out == "" {
		return true
	}
	old, err := checksum.ReadSums(filepath.Join(r.Out, dist.ChecksumsFile))
	if err != nil {
		return true
	}
	for _, w := range wheels {
		if sha, ok := old.Lookup(w.Path); !ok || sha != w.SHA256 {
			return true
		}
	}
	return false
}
