package evidence

import "github.com/mkrelease/mkrelease/dist"

// The evidence file names are package dist's ([dist.Names.Evidence],
// [dist.Names.EvidenceStatements], [dist.Guess]); these wrappers remain
// for the callers that have not moved to dist yet.

// Infix marks evidence files: NAME-VERSION-verifier-evidence-TARGET.
const Infix = dist.EvidenceInfix

// Name is the base name of a target's evidence ([dist.Names.EvidenceRoot]):
// the archive is NAME.tar.gz (root folder NAME/), its signed statements
// NAME.intoto.jsonl, each with a .sha256 sidecar.
func Name(project, version, target string) string {
	return dist.NamesOf(project, version).EvidenceRoot(target)
}

// IsFile reports whether a file name is one of evidence's: the archive,
// the statements, or their sidecars. Evidence is never reproducible, so a
// release folder's SHA256SUMS and its provenance leave these files out.
func IsFile(name string) bool {
	c, _ := dist.Guess(name)
	k := c.Kind
	if k == dist.KindSidecar {
		k = c.Of
	}
	return k == dist.KindEvidence || k == dist.KindEvidenceStatements
}

// SplitName splits an evidence archive's base name into the release's
// NAME-VERSION and the target.
func SplitName(base string) (release, target string, ok bool) {
	c, n := dist.Guess(base)
	if c.Kind != dist.KindEvidence {
		return "", "", false
	}
	return n.Base, c.Target, true
}
