package dist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/dist/ext"
	"github.com/mkrelease/mkrelease/wheel"
)

// The fixed file names of a release folder. A bundle and an evidence
// archive use the same names for their own manifest, checksums and notes.
const (
	// ManifestFile records every build input and output.
	ManifestFile = "manifest.json"
	// ArtifactsFile lists the reproducible artifacts: name, kind, target,
	// sha256 and size. SHA256SUMS is derived from it.
	ArtifactsFile = "artifacts.json"
	// ChecksumsFile lists the sha256 of the reproducible files, in
	// `sha256sum -c` format.
	ChecksumsFile = "SHA256SUMS"
	// NotesFile holds the release notes of this version.
	NotesFile = "RELEASE_NOTES.md"
	// SidecarSuffix ends the name of a file's sidecar: ARTIFACT.sha256
	// holds one `sha256sum -c` line for ARTIFACT.
	SidecarSuffix = ".sha256"
	// BinDir is the folder of the release folder that holds the build
	// outputs, one sub-folder per target.
	BinDir = "build"
	// PartFile is the record of a part (a folder one machine built for
	// some of a release's targets): what built it, from what, and every
	// file it holds.
	PartFile = "part.json"
	// PartStatementFile is a part's signed statement.
	PartStatementFile = "part" + statementsExt
	// ChannelStatementFile is a channel generation's signed statement of
	// its channel.json (package channel).
	ChannelStatementFile = "channel" + statementsExt
)

const (
	archiveExt    = ext.Sdist
	statementsExt = ".intoto.jsonl"
	sigstoreExt   = ".sigstore.json"
	spdxExt       = ".spdx.json"
	cyclonedxExt  = ".cdx.json"
	vsaExt        = ".vsa" + statementsExt
	evidenceInfix = "-verifier-evidence-"
)

// Names spells the file names of one release, NAME-VERSION (the project's
// normalised name and its version).
type Names struct {
	// Base is NAME-VERSION.
	Base string
}

// NamesOf returns the names of project's release version.
func NamesOf(project, version string) Names { return Names{Base: project + "-" + version} }

// BundleRoot is the root folder of target's bundle, NAME-VERSION-TARGET.
func (n Names) BundleRoot(target string) string { return n.Base + "-" + target }

// Bundle is target's offline install bundle, NAME-VERSION-TARGET.tar.gz.
func (n Names) Bundle(target string) string { return n.BundleRoot(target) + archiveExt }

// SBOM is the release's SPDX document, NAME-VERSION.spdx.json.
func (n Names) SBOM() string { return n.Base + spdxExt }

// TargetSBOM is the SPDX document of target that its bundle carries,
// NAME-VERSION-TARGET.spdx.json: named like the bundle, unlike the
// release's.
func (n Names) TargetSBOM(target string) string { return n.BundleRoot(target) + spdxExt }

// CycloneDX is the release's CycloneDX document, NAME-VERSION.cdx.json.
func (n Names) CycloneDX() string { return n.Base + cyclonedxExt }

// TargetCycloneDX is the CycloneDX document of target that its bundle
// carries, NAME-VERSION-TARGET.cdx.json, beside [Names.TargetSBOM].
func (n Names) TargetCycloneDX(target string) string { return n.BundleRoot(target) + cyclonedxExt }

// Provenance is the release's signed provenance as DSSE envelopes, one
// per line: NAME-VERSION.intoto.jsonl.
func (n Names) Provenance() string { return n.Base + statementsExt }

// ProvenanceBundle is the same provenance as a Sigstore bundle,
// NAME-VERSION.sigstore.json.
func (n Names) ProvenanceBundle() string { return n.Base + sigstoreExt }

// EvidenceRoot is the root folder of target's evidence archive,
// NAME-VERSION-verifier-evidence-TARGET.
func (n Names) EvidenceRoot(target string) string { return n.Base + evidenceInfix + target }

// Evidence is target's evidence archive.
func (n Names) Evidence(target string) string { return n.EvidenceRoot(target) + archiveExt }

// EvidenceStatements are the signed statements of target's evidence.
func (n Names) EvidenceStatements(target string) string {
	return n.EvidenceRoot(target) + statementsExt
}

// VSA is the signed verification summary publish writes,
// NAME-VERSION.vsa.intoto.jsonl.
func (n Names) VSA() string { return n.Base + vsaExt }

// Sidecar returns the name of name's sidecar.
func Sidecar(name string) string { return name + SidecarSuffix }

// SidecarOf returns the artifact a sidecar's name is for.
func SidecarOf(name string) (artifact string, ok bool) {
	a, ok := strings.CutSuffix(name, SidecarSuffix)
	return a, ok && a != "" && !strings.HasSuffix(a, "/")
}

// Class is what a file name of a release folder is.
type Class struct {
	Kind Kind
	// Target is the target the name carries (bundle, evidence), or ""
	// for a shared file and for a wheel (whose name carries a platform
	// tag, not a target: the artifact list says which target built it).
	Target string
	// Of is the kind of the file a sidecar is for.
	Of Kind
}

// Classify says what a base name of this release's folder is. A name
// none of the release's patterns matches is [KindOther].
func (n Names) Classify(name string) Class {
	if a, ok := SidecarOf(name); ok {
		c := n.Classify(a)
		return Class{Kind: KindSidecar, Target: c.Target, Of: c.Kind}
	}
	switch name {
	case ManifestFile:
		return Class{Kind: KindManifest}
	case ArtifactsFile:
		return Class{Kind: KindArtifacts}
	case ChecksumsFile:
		return Class{Kind: KindChecksums}
	case NotesFile:
		return Class{Kind: KindNotes}
	case n.SBOM():
		return Class{Kind: KindSBOM}
	case n.CycloneDX():
		return Class{Kind: KindCycloneDX}
	case n.Provenance(), n.ProvenanceBundle():
		return Class{Kind: KindProvenance}
	case n.VSA():
		return Class{Kind: KindVSA}
	case PartFile:
		return Class{Kind: KindPart}
	case PartStatementFile:
		return Class{Kind: KindPartStatement}
	}
	if IsWheel(name) {
		return Class{Kind: KindWheel}
	}
	if rest, ok := strings.CutPrefix(name, n.Base+evidenceInfix); ok {
		if t, ok := strings.CutSuffix(rest, archiveExt); ok && validTarget(t) {
			return Class{Kind: KindEvidence, Target: t}
		}
		if t, ok := strings.CutSuffix(rest, statementsExt); ok && validTarget(t) {
			return Class{Kind: KindEvidenceStatements, Target: t}
		}
		return Class{Kind: KindOther}
	}
	if rest, ok := strings.CutPrefix(name, n.Base+"-"); ok {
		if t, ok := strings.CutSuffix(rest, archiveExt); ok && validTarget(t) {
			return Class{Kind: KindBundle, Target: t}
		}
	}
	return Class{Kind: KindOther}
}

// CheckTargetName refuses a target name whose release file names would
// read as another file's: a bundle of target "verifier-evidence-T" would
// be named like the evidence of target T.
func CheckTargetName(t string) error {
	if strings.HasPrefix("-"+t, evidenceInfix) {
		return fmt.Errorf("target %q: its bundle would be named like the verifier evidence of target %q", t, strings.TrimPrefix("-"+t, evidenceInfix))
	}
	return nil
}

// validTarget reports whether t can be a target's name in a file name:
// what release.toml accepts for a target (a lower-case letter or digit,
// then letters, digits, ".", "_" and "-"), so no path separator, no
// upper case and no white space.
// IsTargetName reports whether t has the shape of a target name: lower-case
// letters, digits, '.', '_' and '-', starting with a letter or a digit.
func IsTargetName(t string) bool { return validTarget(t) }

func validTarget(t string) bool {
	if t == "" || !isLowerAlnum(t[0]) {
		return false
	}
	for i := 1; i < len(t); i++ {
		if c := t[i]; !isLowerAlnum(c) && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// IsWheel reports whether name is a wheel's file name
// (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl).
func IsWheel(name string) bool {
	_, err := wheel.ParseFilename(name)
	return err == nil
}

// Guess classifies a lone file's base name without knowing its release,
// by its shape alone, for `mkrelease verify FILE`: it returns the kind,
// and for evidence and bundles, the release's names and the target the
// name carries. A bundle's name (NAME-VERSION-TARGET) cannot be split
// without the release, so its Names is empty.
func Guess(name string) (Class, Names) {
	if a, ok := SidecarOf(name); ok {
		c, n := Guess(a)
		return Class{Kind: KindSidecar, Target: c.Target, Of: c.Kind}, n
	}
	switch name {
	case ManifestFile:
		return Class{Kind: KindManifest}, Names{}
	case ArtifactsFile:
		return Class{Kind: KindArtifacts}, Names{}
	case ChecksumsFile:
		return Class{Kind: KindChecksums}, Names{}
	case NotesFile:
		return Class{Kind: KindNotes}, Names{}
	case PartFile:
		return Class{Kind: KindPart}, Names{}
	case PartStatementFile:
		return Class{Kind: KindPartStatement}, Names{}
	}
	if IsWheel(name) {
		return Class{Kind: KindWheel}, Names{}
	}
	if stem, ok := strings.CutSuffix(name, vsaExt); ok && stem != "" {
		return Class{Kind: KindVSA}, Names{Base: stem}
	}
	for _, ext := range []struct {
		ext  string
		kind Kind
	}{{archiveExt, KindEvidence}, {statementsExt, KindEvidenceStatements}} {
		stem, ok := strings.CutSuffix(name, ext.ext)
		if !ok {
			continue
		}
		if i := strings.LastIndex(stem, evidenceInfix); i > 0 && validTarget(stem[i+len(evidenceInfix):]) {
			return Class{Kind: ext.kind, Target: stem[i+len(evidenceInfix):]}, Names{Base: stem[:i]}
		}
	}
	switch {
	case strings.HasSuffix(name, archiveExt) && len(name) > len(archiveExt):
		return Class{Kind: KindBundle}, Names{}
	case strings.HasSuffix(name, statementsExt) && len(name) > len(statementsExt):
		return Class{Kind: KindProvenance}, Names{Base: strings.TrimSuffix(name, statementsExt)}
	case strings.HasSuffix(name, sigstoreExt) && len(name) > len(sigstoreExt):
		return Class{Kind: KindProvenance}, Names{Base: strings.TrimSuffix(name, sigstoreExt)}
	case strings.HasSuffix(name, spdxExt) && len(name) > len(spdxExt):
		return Class{Kind: KindSBOM}, Names{Base: strings.TrimSuffix(name, spdxExt)}
	case strings.HasSuffix(name, cyclonedxExt) && len(name) > len(cyclonedxExt):
		return Class{Kind: KindCycloneDX}, Names{Base: strings.TrimSuffix(name, cyclonedxExt)}
	}
	return Class{Kind: KindOther}, Names{}
}

// ArchiveRoot is the root folder an archive's base name promises: its name
// without .tar.gz (bundles and evidence hold one folder of that name).
func ArchiveRoot(name string) (string, bool) {
	root, ok := strings.CutSuffix(name, archiveExt)
	return root, ok && root != ""
}

// StatementsOf returns the statements file signed beside an archive
// (X.tar.gz → X.intoto.jsonl): evidence archives carry their signed
// statements there.
func StatementsOf(archive string) string {
	return strings.TrimSuffix(archive, archiveExt) + statementsExt
}

// ArchiveOf returns the base name of the archive that holds the one root
// folder root (root → root.tar.gz): the inverse of [ArchiveRoot]. A
// bundle's checker names the archive after the root folder it found, not
// after the name the release would give it.
func ArchiveOf(root string) string { return root + archiveExt }

// EvidenceInfix marks the names of a target's evidence files:
// NAME-VERSION + EvidenceInfix + TARGET, then .tar.gz or .intoto.jsonl.
const EvidenceInfix = evidenceInfix

// ClaimsWheel reports whether name ends as a wheel's file name does
// (.whl), whether or not the rest parses; [IsWheel] says whether it does.
// A checker that audits or refuses a file as a wheel asks this, so that a
// malformed wheel name is a finding about that wheel, not a file of no
// known kind.
func ClaimsWheel(name string) bool { return strings.HasSuffix(name, wheel.Ext) }

// WheelFiles returns the paths of the entries of folder whose names end
// as a wheel's ([ClaimsWheel]), sorted: what the glob FOLDER/*.whl
// matches. A folder that cannot be read holds none.
func WheelFiles(folder string) []string {
	entries, _ := os.ReadDir(folder)
	var out []string
	for _, e := range entries {
		if ClaimsWheel(e.Name()) {
			out = append(out, filepath.Join(folder, e.Name()))
		}
	}
	return out
}
