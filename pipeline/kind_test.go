package pipeline

import (
	"context"
	"crypto"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/provenance/attest"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/sbom"
)

// cycloneDXStage is an artifact kind's whole implementation: one stage
// that writes a CycloneDX document (of a release with nothing in it) and
// registers it with its kind.
// Nothing else knows about it: the test below shows that the artifact
// list, SHA256SUMS, the sidecars, the signed provenance, dist.Open and the
// folder audit take it as they take any artifact.
type cycloneDXStage struct{}

func (cycloneDXStage) String() string { return "cyclonedx" }

func (cycloneDXStage) Run(_ context.Context, r *release.Release) error {
	p := r.Config.Project
	name := dist.NamesOf(p.NormalizedName, p.Version).CycloneDX()
	data, err := sbom.GenerateCycloneDX(sbom.Release{Name: p.NormalizedName, Version: p.Version, Created: r.Epoch, Tool: "mkrelease-test"})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.Stage, name), data, 0o644); err != nil {
		return err
	}
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindCycloneDX, Path: name, SHA256: checksum.Bytes(data), Size: int64(len(data))})
	return nil
}

func TestANewArtifactKindTouchesDistAndOneStage(t *testing.T) {
	work := t.TempDir()
	out, stage := filepath.Join(work, "dist"), filepath.Join(work, ".dist.tmp")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	signer, _, err := provenance.DevKey(filepath.Join(work, "key"))
	if err != nil {
		t.Fatal(err)
	}
	r := &release.Release{
		Config: &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}, SHA256: strings.Repeat("a", 64)},
		Epoch:  1793491200, Out: out, Stage: stage,
	}
	stages := []Stage{
		cycloneDXStage{},
		release.ManifestStage{},
		release.ChecksumStage{},
		attest.Stage{Signer: signer},
		release.OutputStage{},
	}
	if err := Run(t.Context(), r, stages); err != nil {
		t.Fatal(err)
	}
	name := dist.NamesOf("demo", "1.0").CycloneDX()

	// The artifact list records it with its kind; SHA256SUMS, derived from
	// the list, and its sidecar agree with the bytes.
	list, err := dist.ReadArtifactList(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Artifacts, func(a dist.Artifact) bool { return a.Path == name && a.Kind == dist.KindCycloneDX }) {
		t.Errorf("artifacts.json does not list %s as cyclonedx: %+v", name, list.Artifacts)
	}
	sums, err := checksum.ReadSums(filepath.Join(out, dist.ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sums.Lookup(name); !ok {
		t.Errorf("SHA256SUMS does not list %s", name)
	}
	if rep, err := dist.VerifySidecar(context.Background(), filepath.Join(out, dist.Sidecar(name))); err != nil || !rep.OK() {
		t.Errorf("sidecar: %v %v", err, rep.Err())
	}

	// Loaded back, it is a file of its kind; the signed provenance names
	// it as a subject, and the folder audit finds nothing wrong with it.
	loaded, err := dist.Open(t.Context(), out)
	if err != nil || loaded.Check() != nil {
		t.Fatal(err, loaded.Check())
	}
	if got := loaded.Files(dist.ByKind(dist.KindCycloneDX)); len(got) != 1 || got[0].Path != name {
		t.Errorf("dist.Open: %+v", got)
	}
	folder, err := audit.Release(t.Context(), loaded, audit.Options{TrustedKeys: []crypto.PublicKey{signer.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	if !folder.Provenance.Signed || !folder.Provenance.SubjectsMatch {
		t.Errorf("provenance: %+v", folder.Provenance.Findings)
	}
	var statement struct {
		Subject []subject `json:"subject"`
	}
	if err := json.Unmarshal(folder.Provenance.Statement, &statement); err != nil {
		t.Fatal(err)
	}
	cdx, _ := loaded.File(name)
	if !slices.ContainsFunc(statement.Subject, func(s subject) bool { return s.Name == name && s.Digest["sha256"] == cdx.SHA256 }) {
		t.Errorf("the provenance does not name %s as a subject: %+v", name, statement.Subject)
	}
	ran := map[string]bool{}
	for _, c := range folder.Items[0].Checks {
		ran[c.Name] = c.OK
	}
	for _, c := range []string{"sha256sums", "sidecars", "manifest", "provenance", "provenance-bundle"} {
		if !ran[c] {
			t.Errorf("folder check %s did not run or failed: %+v", c, folder.Items[0].Checks)
		}
	}
	for _, it := range folder.Items {
		for _, c := range it.Checks {
			for _, f := range c.Findings {
				if strings.Contains(f.File+f.Member+f.Msg, name) {
					t.Errorf("the audit objects to the new kind: %s: %s: %s", c.Name, f.File, f.Msg)
				}
			}
		}
	}
}

// subject is an in-toto statement's subject.
type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}
