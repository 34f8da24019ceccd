package part

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// JoinStage is the first stage of a merge: it copies each target's files
// (wheels, bundle, build outputs) from the part that holds it, and the
// release notes, into the staging folder, each checked against its digest
// as it is copied, and sets the epoch and the manifest the later stages
// write and sign (its build facts the weakest part's, see [Weakest], and
// the parts no trusted key vouched for, see [Unsigned]). Parts must have
// passed [Check].
type JoinStage struct {
	Parts []*Part
}

// String names the stage.
func (JoinStage) String() string { return "parts" }

// Run joins the parts.
func (s JoinStage) Run(ctx context.Context, r *release.Release) error {
	if len(s.Parts) == 0 {
		return fmt.Errorf("merge: no parts")
	}
	first := s.Parts[0]
	r.Epoch = first.Manifest.SourceDateEpoch
	weakest := Weakest(s.Parts)
	m := *first.Folder.Manifest
	m.Build = weakest.Folder.Manifest.Build
	m.Build.UnsignedParts = Unsigned(s.Parts) // what merge established, whatever a part's manifest.json says
	m.Targets = nil
	copied := map[string]bool{}
	for _, t := range r.Targets {
		p := s.holder(t.Name)
		for _, mt := range p.Folder.Manifest.Targets {
			if mt.Name == t.Name {
				m.Targets = append(m.Targets, mt)
			}
		}
		for _, a := range p.Folder.Listed(dist.ByTarget(t.Name)) {
			if err := s.copy(ctx, r, p, a); err != nil {
				return err
			}
			copied[a.Path] = true
		}
	}
	// A pure-Python wheel is every target's: each part carries it, [Check]
	// made sure their bytes agree; the release holds it once.
	for _, a := range first.Folder.Listed(sharedWheels) {
		if err := s.copy(ctx, r, first, a); err != nil {
			return err
		}
		copied[a.Path] = true
	}
	for _, a := range first.Folder.Listed(dist.ByKind(dist.KindNotes)) {
		if err := s.copy(ctx, r, first, a); err != nil {
			return err
		}
	}
	r.Manifest = &m
	for _, u := range m.Build.UnsignedParts {
		r.Logger.Warn("merged a part no trusted key vouches for (--allow-unsigned-parts): manifest.json and the provenance record it, and the default release policy refuses to publish this release",
			"targets", u.Targets, "part_sha256", u.PartSHA256, "reason", u.Reason)
	}
	r.Logger.Info("parts joined", "parts", len(s.Parts), "targets", len(r.Targets), "files", len(copied))
	return nil
}

func (s JoinStage) holder(target string) *Part {
	for _, p := range s.Parts {
		if slices.Contains(p.Manifest.Targets, target) {
			return p
		}
	}
	return nil
}

// Weakest is the part whose build steps were isolated least (nil for no
// parts): the merged release records that isolation, in its manifest and
// its provenance, so the release policies judge the weakest link.
func Weakest(parts []*Part) *Part {
	if len(parts) == 0 {
		return nil
	}
	rank := map[string]int{executor.LevelNone: 0, executor.LevelNetwork: 1, executor.LevelSandbox: 2}
	w := parts[0]
	for _, p := range parts[1:] {
		if rank[p.Manifest.Sandbox.Executor().Level()] < rank[w.Manifest.Sandbox.Executor().Level()] {
			w = p
		}
	}
	return w
}

// Unsigned lists the parts no trusted key vouches for, in the order of
// parts, as the merged release's manifest.json records them (and its
// provenance, from it); nil when every part's statement verified, so that
// a merge of signed parts writes the manifest one machine would.
func Unsigned(parts []*Part) []dist.ManifestPart {
	var out []dist.ManifestPart
	for _, p := range parts {
		if p.Verified() {
			continue
		}
		reason := ReasonNoStatement
		if p.Statement != "" {
			reason = ReasonNotChecked
		}
		out = append(out, dist.ManifestPart{Targets: slices.Clone(p.Manifest.Targets), PartSHA256: p.SHA256, Reason: reason})
	}
	return out
}

// copy copies artifact a of part p into the staging folder and records it.
func (s JoinStage) copy(ctx context.Context, r *release.Release, p *Part, a dist.Artifact) error {
	found, ok := p.Folder.File(a.Path)
	if !ok || found.SHA256 != a.SHA256 || found.Size != a.Size {
		return fmt.Errorf("merge: part %s: %s does not match its %s", p.Dir, a.Path, dist.ArtifactsFile)
	}
	src := p.Folder.Path(a)
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("merge: part %s: %w", p.Dir, err)
	}
	if err := checksum.CopyFile(ctx, src, filepath.Join(r.Stage, filepath.FromSlash(a.Path)), a.SHA256, a.Size, treehash.NormalMode(st.Mode())); err != nil {
		return fmt.Errorf("merge: part %s: %w", p.Dir, err)
	}
	r.Artifacts.Add(a)
	return nil
}

// SBOMStage writes the release's SBOM from the descriptions the parts
// carry: the first part's sources, overlays and toolchains (every part's
// are the same, [Check] made sure), and each target's packages from its
// part, in release.toml's order.
type SBOMStage struct {
	Parts []*Part
}

// String names the stage.
func (SBOMStage) String() string { return "sbom" }

// Run writes the SBOM.
func (s SBOMStage) Run(_ context.Context, r *release.Release) error {
	doc := s.Parts[0].Manifest.SBOM
	doc.Targets = nil
	for _, t := range r.Targets {
		for _, p := range s.Parts {
			for _, st := range p.Manifest.SBOM.Targets {
				if st.Name == t.Name {
					doc.Targets = append(doc.Targets, st)
				}
			}
		}
	}
	if len(doc.Targets) == 0 {
		return nil // no part built wheels: a build writes no SBOM either
	}
	return bundle.WriteSBOM(r, doc)
}

// Provenance returns what the merged release's provenance adds for its
// parts: each part.json as a resolved dependency, and each part's builder
// as a byproduct (with its statement's digest when it carries one, and the
// trusted key whose signature on it verified), so that an auditor reads
// who built which targets. "signed" is true only for a signature a trusted
// key verified: a statement no key was trusted to check is recorded with
// "signature": "not checked".
func Provenance(parts []*Part) (materials, byproducts []provenance.Dependency) {
	for _, p := range parts {
		m := p.Manifest
		name := "part:" + strings.Join(m.Targets, ",")
		materials = append(materials, provenance.Dependency{Name: name, URI: "file:" + filepath.ToSlash(filepath.Base(filepath.Clean(p.Dir))) + "/" + dist.PartFile,
			Digest: map[string]string{"sha256": p.SHA256},
			Annotations: map[string]any{"targets": m.Targets, "builder": m.Host.Builder, "invocation": m.Host.Invocation,
				"host": map[string]any{"os": m.Host.OS, "arch": m.Host.Arch}}})
		b := provenance.Dependency{Name: "builder:" + strings.Join(m.Targets, ","), URI: m.Host.Builder,
			Annotations: map[string]any{"targets": m.Targets, "invocation": m.Host.Invocation, "os": m.Host.OS, "arch": m.Host.Arch,
				"sandbox": m.Sandbox.Executor().Level(), "signed": p.Verified()}}
		if p.Statement != "" {
			b.Digest = map[string]string{"sha256": p.Statement}
			if p.Verified() {
				b.Annotations["key"] = p.KeyID
			} else {
				b.Annotations["signature"] = "not checked"
			}
		}
		byproducts = append(byproducts, b)
	}
	return materials, byproducts
}

// checkShared reports where the parts' records of the shared inputs
// differ: manifest.json but for its targets and isolation, the SBOM's
// description but for its targets, the release notes, and the pure-Python
// wheels (each part carries them, byte for byte the same). A build from
// one release.toml and lock gives the same on every machine.
func checkShared(parts []*Part, rep *finding.Report) {
	if len(parts) < 2 {
		return
	}
	first := parts[0]
	ref := sharedOf(first)
	for _, p := range parts[1:] {
		got := sharedOf(p)
		for _, f := range []struct{ field, file, a, b string }{
			{"sources, overlays and toolchains", dist.ManifestFile, got.manifest, ref.manifest},
			{"sbom (sources, overlays and toolchains)", dist.PartFile, got.sbom, ref.sbom},
			{"digest", dist.NotesFile, got.notes, ref.notes},
		} {
			if f.a != f.b {
				rep.Add(finding.Finding{Check: CheckRelease, File: filepath.Join(p.Dir, f.file), Member: f.field,
					Msg: "differs from part " + first.Dir + "'s: the parts were not built from the same inputs"})
			}
		}
	}
	for _, p := range parts[1:] {
		want, got := wheelDigests(first), wheelDigests(p)
		for _, path := range slices.Sorted(maps.Keys(got)) {
			sha := got[path]
			switch ref, ok := want[path]; {
			case !ok:
				rep.Add(finding.Finding{Check: CheckRelease, File: filepath.Join(p.Dir, path),
					Msg: "a pure-Python wheel (py3-none-any, one file for every target) that part " + first.Dir + " lacks: the parts were not built from the same inputs"})
			case ref != sha:
				rep.Add(finding.Finding{Check: CheckRelease, File: filepath.Join(p.Dir, path),
					Msg: fmt.Sprintf("a pure-Python wheel (py3-none-any, one file for every target) whose bytes differ from part %s's (sha256 %s, not %s): the parts were not built from the same inputs", first.Dir, sha, ref)})
			}
			delete(want, path)
		}
		for _, path := range slices.Sorted(maps.Keys(want)) {
			rep.Add(finding.Finding{Check: CheckRelease, File: filepath.Join(first.Dir, path),
				Msg: "a pure-Python wheel (py3-none-any, one file for every target) that part " + p.Dir + " lacks: the parts were not built from the same inputs"})
		}
	}
}

// sharedWheels selects the wheels of no one target: pure-Python wheels,
// which every target's bundle holds.
func sharedWheels(a dist.Artifact) bool { return a.Kind == dist.KindWheel && a.Target == "" }

// wheelDigests returns the digest of each shared wheel part p lists, by path.
func wheelDigests(p *Part) map[string]string {
	out := map[string]string{}
	for _, a := range p.Folder.Listed(sharedWheels) {
		out[a.Path] = a.SHA256
	}
	return out
}

type shared struct{ manifest, sbom, notes string }

func sharedOf(p *Part) shared {
	var s shared
	if m := p.Folder.Manifest; m != nil {
		c := *m
		c.Targets, c.Build = nil, dist.ManifestBuild{}
		s.manifest = digestJSON(c)
	}
	d := p.Manifest.SBOM
	d.Targets = nil
	s.sbom = digestJSON(d)
	for _, a := range p.Folder.Files(dist.ByKind(dist.KindNotes)) {
		s.notes = a.SHA256
	}
	return s
}

func digestJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "unencodable: " + err.Error()
	}
	return checksum.Bytes(data)
}
