package evidence

import "strings"

// Infix marks evidence files: NAME-VERSION-verifier-evidence-TARGET.
const Infix = "-verifier-evidence-"

// Name is the base name of a target's evidence: the archive is
// NAME.tar.gz (root folder NAME/), its signed statements NAME.intoto.jsonl,
// each with a .sha256 sidecar.
func Name(project, version, target string) string {
	return project + "-" + version + Infix + target
}

// IsFile reports whether a file name is one of evidence's: the archive,
// the statements, or their sidecars. Evidence is never reproducible, so a
// release folder's SHA256SUMS and its provenance leave these files out.
func IsFile(name string) bool {
	base := strings.TrimSuffix(name, ".sha256")
	for _, ext := range []string{".tar.gz", ".intoto.jsonl"} {
		if stem, ok := strings.CutSuffix(base, ext); ok {
			_, target, found := strings.Cut(stem, Infix)
			return found && target != ""
		}
	}
	return false
}

// SplitName splits an evidence archive's base name into the release's
// NAME-VERSION and the target.
func SplitName(base string) (release, target string, ok bool) {
	stem, isArchive := strings.CutSuffix(base, ".tar.gz")
	if !isArchive {
		return "", "", false
	}
	i := strings.LastIndex(stem, Infix)
	if i <= 0 || i+len(Infix) == len(stem) {
		return "", "", false
	}
	return stem[:i], stem[i+len(Infix):], true
}
