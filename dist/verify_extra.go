package dist

import (
	"os"
	"path/filepath"
	"strings"
)

// Helpers the checkers (audit, publish, evidence, channel) need beside
// names.go.

// EvidenceInfix marks the names of a target's evidence files:
// NAME-VERSION + EvidenceInfix + TARGET, then .tar.gz or .intoto.jsonl.
const EvidenceInfix = evidenceInfix

// ClaimsWheel reports whether name ends as a wheel's file name does
// (.whl), whether or not the rest parses; [IsWheel] says whether it does.
// A checker that audits or refuses a file as a wheel asks this, so that a
// malformed wheel name is a finding about that wheel, not a file of no
// known kind.
func ClaimsWheel(name string) bool { return strings.HasSuffix(name, ".whl") }

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
