package publish

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// PolicyDigest is the sha256 of the list of policy modules evaluated, one
// "SHA256  NAME\n" line each in evaluation order (the format of
// SHA256SUMS): it changes when any module, or the set of modules, does.
func PolicyDigest(ps []policies.PolicyDigest) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "%s  %s\n", p.SHA256, p.Name)
	}
	return checksum.Bytes([]byte(b.String()))
}

// vsa is the verification summary of an allowed release: its subjects are
// the published wheels, bundles and SBOM, and the release notes (whose
// Validation section publish wrote from the evidence); its input
// attestations the
// provenance and the evidence statements the decision read.
func vsa(rel *dist.Release, in policies.Input, d *policies.Decision, pf audit.ProvenanceFacts, now time.Time) (provenance.VSA, error) {
	v := provenance.VSA{
		VerifierID:      VerifierID,
		VerifierVersion: map[string]string{"mkrelease": release.ToolVersion},
		TimeVerified:    now.UTC(),
		ResourceURI:     "pkg:generic/" + in.Release.Project + "@" + in.Release.Version,
		PolicyURI:       PolicyURI,
		PolicyDigest:    map[string]string{"sha256": PolicyDigest(d.Policies)},
		PolicyModules:   map[string]string{},
		PolicyParameters: map[string]any{
			"min_throughput_geomean": in.Parameters.MinThroughputGeomean, "min_overall": in.Parameters.MinOverall,
			"min_phase": in.Parameters.MinPhase, "min_workload": in.Parameters.MinWorkload,
			"max_robust_cv": in.Parameters.MaxRobustCV, "allow_downgrade": in.Parameters.AllowDowngrade,
			"allow_unsandboxed": in.Parameters.AllowUnsandboxed,
		},
		Result:         provenance.VSAPassed,
		VerifiedLevels: []string{"SLSA_BUILD_LEVEL_1"},
	}
	for _, p := range d.Policies {
		v.PolicyModules[p.Name] = p.SHA256
	}
	for _, a := range in.Artifacts {
		// What dist says a verification summary names (wheels, bundles,
		// the SBOM, the release notes publish wrote from the evidence):
		// the files audit compares a published summary with.
		if k, ok := dist.ParseKind(a.Kind); ok && k.Summarised() {
			v.Subjects = append(v.Subjects, provenance.Subject{Name: a.Name, SHA256: a.SHA256})
		}
	}
	if pf.Present {
		v.InputAttestations = append(v.InputAttestations, provenance.Dependency{Name: pf.File, URI: pf.File, Digest: map[string]string{"sha256": pf.SHA256}})
	}
	for _, e := range in.Evidence {
		if !e.Present {
			continue
		}
		st := dist.StatementsOf(e.File)
		a, ok := rel.File(st)
		if !ok {
			return v, fmt.Errorf("publish: evidence statements of %s: %s is not in %s", e.Target, st, rel.Dir)
		}
		v.InputAttestations = append(v.InputAttestations, provenance.Dependency{Name: st, URI: st, Digest: map[string]string{"sha256": a.SHA256}})
	}
	return v, nil
}

// writeVSA signs the verification summary and writes it to path (DSSE,
// one JSON line) with its sidecar.
func writeVSA(ctx context.Context, path string, s provenance.Signer, rel *dist.Release, in policies.Input, d *policies.Decision, pf audit.ProvenanceFacts, now time.Time) error {
	v, err := vsa(rel, in, d, pf, now)
	if err != nil {
		return err
	}
	st, err := v.Statement()
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	env, err := provenance.SignStatement(ctx, s, st)
	if err != nil {
		return fmt.Errorf("publish: signing the verification summary: %w", err)
	}
	if err := atomicfile.WriteFile(path, env, 0o644); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return dist.WriteSidecar(path, checksum.Bytes(env))
}
