package dist

import (
	"testing"
)

func TestNamesClassifyRoundTrip(t *testing.T) {
	n := NamesOf("vexl", "0.3.0")
	cases := []struct {
		name   string
		kind   Kind
		target string
		of     Kind
	}{
		{n.Bundle("linux-x86_64"), KindBundle, "linux-x86_64", 0},
		{n.SBOM(), KindSBOM, "", 0},
		{n.CycloneDX(), KindCycloneDX, "", 0},
		{n.Provenance(), KindProvenance, "", 0},
		{n.ProvenanceBundle(), KindProvenance, "", 0},
		{n.Evidence("linux-aarch64"), KindEvidence, "linux-aarch64", 0},
		{n.EvidenceStatements("linux-aarch64"), KindEvidenceStatements, "linux-aarch64", 0},
		{n.VSA(), KindVSA, "", 0},
		{ManifestFile, KindManifest, "", 0},
		{ArtifactsFile, KindArtifacts, "", 0},
		{ChecksumsFile, KindChecksums, "", 0},
		{NotesFile, KindNotes, "", 0},
		{PartFile, KindPart, "", 0},
		{PartStatementFile, KindPartStatement, "", 0},
		{"vexl_plugin-0.3.0-py3-none-manylinux_2_28_x86_64.whl", KindWheel, "", 0},
		{Sidecar(n.Bundle("linux-x86_64")), KindSidecar, "linux-x86_64", KindBundle},
		{Sidecar("vexl_compiler-0.3.0-py3-none-any.whl"), KindSidecar, "", KindWheel},
		{Sidecar(ArtifactsFile), KindSidecar, "", KindArtifacts},
		// Not this release's, or not a release file at all.
		{"vexl-0.4.0-linux-x86_64.tar.gz", KindOther, "", 0},
		{"vexl-0.3.0-.tar.gz", KindOther, "", 0},
		{"vexl-0.3.0-linux.v2.tar.gz", KindBundle, "linux.v2", 0},
		{"vexl-0.3.0-Linux.tar.gz", KindOther, "", 0},
		{"vexl-0.3.0-a/b.tar.gz", KindOther, "", 0},
		{"vexl-0.3.0-verifier-evidence-linux.v2.intoto.jsonl", KindEvidenceStatements, "linux.v2", 0},
		{"vexl-0.3.0-verifier-evidence-.tar.gz", KindOther, "", 0},
		{"notes.txt", KindOther, "", 0},
		{".sha256", KindOther, "", 0},
		{"x.whl", KindOther, "", 0},
	}
	for _, c := range cases {
		got := n.Classify(c.name)
		if got.Kind != c.kind || got.Target != c.target || got.Of != c.of {
			t.Errorf("Classify(%q) = %+v, want kind %v target %q of %v", c.name, got, c.kind, c.target, c.of)
		}
	}
	if n.BundleRoot("t") != "vexl-0.3.0-t" || n.EvidenceRoot("t") != "vexl-0.3.0-verifier-evidence-t" {
		t.Errorf("roots: %s %s", n.BundleRoot("t"), n.EvidenceRoot("t"))
	}
	if r, ok := ArchiveRoot(n.Bundle("t")); !ok || r != n.BundleRoot("t") {
		t.Errorf("ArchiveRoot: %q %v", r, ok)
	}
	if StatementsOf(n.Evidence("t")) != n.EvidenceStatements("t") {
		t.Errorf("StatementsOf: %s", StatementsOf(n.Evidence("t")))
	}
}

func TestGuessLoneNames(t *testing.T) {
	n := NamesOf("vexl", "0.3.0")
	cases := []struct {
		name   string
		kind   Kind
		target string
		base   string
	}{
		{n.Evidence("linux-x86_64"), KindEvidence, "linux-x86_64", "vexl-0.3.0"},
		{n.EvidenceStatements("linux-x86_64"), KindEvidenceStatements, "linux-x86_64", "vexl-0.3.0"},
		{n.VSA(), KindVSA, "", "vexl-0.3.0"},
		{n.Provenance(), KindProvenance, "", "vexl-0.3.0"},
		{n.ProvenanceBundle(), KindProvenance, "", "vexl-0.3.0"},
		{n.SBOM(), KindSBOM, "", "vexl-0.3.0"},
		{n.Bundle("linux-x86_64"), KindBundle, "", ""},
		{ChecksumsFile, KindChecksums, "", ""},
		{PartFile, KindPart, "", ""},
		{PartStatementFile, KindPartStatement, "", ""},
		{"a_b-1.0-py3-none-any.whl", KindWheel, "", ""},
		{".tar.gz", KindOther, "", ""},
		{"README", KindOther, "", ""},
	}
	for _, c := range cases {
		got, names := Guess(c.name)
		if got.Kind != c.kind || got.Target != c.target || names.Base != c.base {
			t.Errorf("Guess(%q) = %+v %q, want %v %q %q", c.name, got, names.Base, c.kind, c.target, c.base)
		}
	}
	if c, _ := Guess(Sidecar(n.Evidence("t"))); c.Kind != KindSidecar || c.Of != KindEvidence || c.Target != "t" {
		t.Errorf("sidecar of evidence: %+v", c)
	}
}

func TestKinds(t *testing.T) {
	for k := KindOther; k <= lastKind; k++ {
		got, ok := ParseKind(k.String())
		if !ok || got != k {
			t.Errorf("ParseKind(%q) = %v %v", k.String(), got, ok)
		}
		b, _ := k.MarshalText()
		var back Kind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("text round trip of %v: %v %v", k, back, err)
		}
		if k.Subject() && !k.Reproducible() {
			t.Errorf("%v is a subject but not reproducible: a signed statement would vouch for bytes that change", k)
		}
	}
	var k Kind
	if err := k.UnmarshalText([]byte("wheel2")); err == nil {
		t.Error("unknown kind accepted")
	}
	for _, k := range []Kind{KindWheel, KindBundle, KindSBOM, KindCycloneDX} {
		if !k.Subject() {
			t.Errorf("%v is not a provenance subject", k)
		}
	}
	// The verification summary names every provenance subject, and the
	// release notes, which the provenance does not.
	for k := KindOther; k <= lastKind; k++ {
		if want := k.Subject() || k == KindNotes; k.Summarised() != want {
			t.Errorf("%v: Summarised() = %v, want %v", k, k.Summarised(), want)
		}
	}
	if KindNotes.Subject() {
		t.Error("the release notes are a provenance subject: the published notes are not the ones built")
	}
	for _, k := range []Kind{KindProvenance, KindEvidence, KindVSA, KindChecksums, KindSidecar} {
		if k.Reproducible() {
			t.Errorf("%v counted reproducible", k)
		}
	}
}

func TestCheckTargetName(t *testing.T) {
	n := NamesOf("vexl", "0.3.0")
	if err := CheckTargetName("verifier-evidence-linux"); err == nil {
		t.Errorf("a target whose bundle is named %s, like evidence, accepted", n.Bundle("verifier-evidence-linux"))
	}
	for _, ok := range []string{"linux-x86_64", "verifier", "evidence-x", "linux.verifier-evidence-x"} {
		if err := CheckTargetName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestArchiveOfIsTheInverseOfArchiveRoot(t *testing.T) {
	for _, root := range []string{"demo-1.0-linux", "demo-1.0-verifier-evidence-linux"} {
		name := ArchiveOf(root)
		if got, ok := ArchiveRoot(name); !ok || got != root {
			t.Errorf("ArchiveRoot(ArchiveOf(%q)) = %q, %v; want %q, true", root, got, ok, root)
		}
	}
	n := NamesOf("demo", "1.0")
	if got, want := ArchiveOf(n.BundleRoot("linux")), n.Bundle("linux"); got != want {
		t.Errorf("ArchiveOf(BundleRoot) = %q, want Bundle's %q", got, want)
	}
}
