package attest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// PrepareStage gets the signing key ready while the build goes on, once it
// is certain that the provenance will be signed again, so that a
// development key reads its private key (scrypt) in the background instead
// of after everything else. The provenance stage keeps the signed
// statement of the release folder the build replaces only when it states
// exactly what this build would; so the statement will be signed when that
// folder has no SHA256SUMS (a first build into a new folder: the stage
// with First set, before all others, sees it) or when a wheel is not in it
// under its name and digest (the stage after the wheels sees it, and the
// key is read on the core the bundles leave idle).
type PrepareStage struct {
	Signer provenance.Signer
	// First is set on the stage that runs before the others.
	First bool
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
	p, ok := s.Signer.(provenance.Preparer)
	switch {
	case !ok:
	case s.First && !hasSums(r):
		r.Logger.Debug("reading the signing key meanwhile: the release folder has no SHA256SUMS, so the provenance will be signed")
		p.Prepare()
	case !s.First && hasSums(r) && willSign(r): // without SHA256SUMS, First prepared it
		r.Logger.Debug("reading the signing key meanwhile: a wheel differs from the release folder's, so the provenance will be signed again")
		p.Prepare()
	}
	return nil
}

// hasSums says the release folder r replaces has a SHA256SUMS file.
func hasSums(r *release.Release) bool {
	if r.Out == "" {
		return false
	}
	st, err := os.Stat(filepath.Join(r.Out, dist.ChecksumsFile))
	return err == nil && st.Mode().IsRegular()
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

// ReadyStage waits, before the output folder is replaced, for a signing
// key decrypted while the build ran (provenance.InBackground), so that a
// key that does not open fails every build, whether or not the build
// signed anything and however soon it ended, as it did when the key was
// decrypted before the build started. The build pipeline stops as soon
// as the key fails; this stage only covers a build that ended first.
type ReadyStage struct {
	Signer provenance.Signer
}

// String names the stage.
func (ReadyStage) String() string { return "signing-key" }

// Run waits for the key; at once for a key already ready.
func (s ReadyStage) Run(ctx context.Context, _ *release.Release) error {
	if s.Signer == nil {
		return nil
	}
	return provenance.Ready(ctx, s.Signer)
}
