package wheel

import (
	"strings"

	"github.com/mkrelease/mkrelease/internal/dist/ext"
)

// sdistExts are the extensions of a source distribution's file name, in
// the order they are tried.
var sdistExts = append([]string{ext.Sdist}, ext.OldSdists[:]...)

// SplitSdistFilename splits the file name of a source distribution,
// NAME-VERSION.EXT, at its last "-" into the distribution's name and its
// version, both as written (neither is normalised or checked). EXT is
// .tar.gz, the only extension PEP 625 allows, or one of the older .zip,
// .tar.bz2, .tar.xz, .tgz and .tar that indexes and find-links folders
// still hold. ok is false for a name with none of these extensions, or
// with nothing before the last "-".
func SplitSdistFilename(name string) (distribution, version string, ok bool) {
	for _, ext := range sdistExts {
		base, found := strings.CutSuffix(name, ext)
		if !found {
			continue
		}
		i := strings.LastIndexByte(base, '-')
		if i <= 0 {
			return "", "", false
		}
		return base[:i], base[i+1:], true
	}
	return "", "", false
}
