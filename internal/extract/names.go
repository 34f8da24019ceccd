package extract

import (
	"path"
	"strings"
)

// maxNameLen bounds entry names and link targets (PATH_MAX on Linux).
const maxNameLen = 4096

// cleanName validates an entry name as stored in the archive and returns it
// cleaned: relative, slash-separated, without "." or empty elements, and
// "." for the root itself. It never resolves "..": any ".." is refused.
func cleanName(name string) (string, *violation) {
	switch {
	case name == "":
		return "", refusal(ErrInvalidName, "empty name")
	case len(name) > maxNameLen:
		return "", refusal(ErrInvalidName, "name is %d bytes long, more than %d", len(name), maxNameLen)
	case strings.IndexByte(name, 0) >= 0:
		return "", refusal(ErrInvalidName, "name contains a NUL byte")
	}
	// Look at the name the way Windows tools (and some zip writers) would,
	// with "\" as a separator, so that "..\x" and "C:\x" are caught.
	slashed := strings.ReplaceAll(name, `\`, "/")
	if strings.HasPrefix(slashed, "/") {
		return "", refusal(ErrAbsolute, "name starts with a path separator")
	}
	if hasDriveLetter(slashed) {
		return "", refusal(ErrAbsolute, "name starts with a Windows drive letter")
	}
	for elem := range strings.SplitSeq(slashed, "/") {
		if elem == ".." {
			return "", refusal(ErrTraversal, "")
		}
	}
	if slashed != name {
		return "", refusal(ErrInvalidName, "name contains a backslash")
	}
	return path.Clean(name), nil
}

// hasDriveLetter reports whether a slash-separated name starts with a
// Windows drive specification such as "C:".
func hasDriveLetter(name string) bool {
	if len(name) < 2 || name[1] != ':' {
		return false
	}
	c := name[0] | 0x20 // ASCII lower case
	return 'a' <= c && c <= 'z'
}

// stripName removes the first n elements of a cleaned name. It reports
// false when the name has n elements or fewer (the root "." has none).
func stripName(clean string, n int) (string, bool) {
	if clean == "." {
		return "", false
	}
	if n == 0 {
		return clean, true
	}
	rest := clean
	for range n {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return "", false
		}
		rest = rest[i+1:]
	}
	return rest, true
}

// depth returns the number of elements of a cleaned relative name ("." has
// none).
func depth(clean string) int {
	if clean == "." {
		return 0
	}
	return strings.Count(clean, "/") + 1
}

// checkSymlinkTarget checks that a symlink at linkPath (a cleaned, stripped
// name) pointing at target cannot resolve outside the extraction root,
// whatever other symlinks the archive holds.
//
// The rule: the target is relative, and all its ".." elements come first
// (at most as many as linkPath has parent directories). The link's parent
// directories are real directories (nothing is ever written through a
// symlink), so the leading ".." elements stay inside the root; after them
// the target only descends, and descending from inside the root reaches a
// file, a directory or another symlink that obeys the same rule. A ".."
// after a normal element ("a/../b") is refused: if "a" is itself a symlink
// (say to "."), lexical cleaning would misjudge where it leads.
func checkSymlinkTarget(linkPath, target string) *violation {
	switch {
	case target == "":
		return refusal(ErrBadLink, "symlink has an empty target")
	case len(target) > maxNameLen:
		return refusal(ErrBadLink, "symlink target is %d bytes long, more than %d", len(target), maxNameLen)
	case strings.IndexByte(target, 0) >= 0:
		return refusal(ErrBadLink, "symlink target contains a NUL byte")
	}
	slashed := strings.ReplaceAll(target, `\`, "/")
	if strings.HasPrefix(slashed, "/") || hasDriveLetter(slashed) {
		return refusal(ErrLinkEscape, "symlink target %q is absolute", target)
	}
	ups, descended := 0, false
	for elem := range strings.SplitSeq(slashed, "/") {
		switch elem {
		case "", ".":
		case "..":
			if descended {
				return refusal(ErrLinkEscape, "symlink target %q goes up after going down, which cannot be checked without following links", target)
			}
			ups++
		default:
			descended = true
		}
	}
	if ups > depth(path.Dir(linkPath)) {
		return refusal(ErrLinkEscape, "symlink target %q leaves the extraction root", target)
	}
	if slashed != target {
		return refusal(ErrBadLink, "symlink target %q contains a backslash", target)
	}
	return nil
}
