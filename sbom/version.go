package sbom

import (
	"regexp"
	"strings"
)

// versionRule reads a version out of one shape of toolchain identity line.
type versionRule struct {
	// name says which tools print the shape, for tests and readers.
	name string
	// re matches the whole line; its first group is the version.
	re *regexp.Regexp
}

// version is the character set of a version token: "1.26.8",
// "12.2.0-14+deb12u1", "12-win32", "0.12.0-dev.1+abc".
const version = `[0-9][0-9A-Za-z.+~_-]*`

// versionRules are tried in order on a toolchain's identity line (the first
// line its version command printed, as release.lock locks it); the first
// that matches gives the version.
var versionRules = []versionRule{
	// go version go1.26.8 linux/amd64; go version devel go1.27-4a5b6c7 …
	{"go", regexp.MustCompile(`^go version (?:devel )?go(` + version + `)(?:\s.*)?$`)},
	// Debian clang version 14.0.6; Apple clang version 15.0.0 (clang-1500.1.0.2.5)
	{"clang", regexp.MustCompile(`^(?:.*\s)?clang version (` + version + `)(?:\s.*)?$`)},
	// gcc (Debian 12.2.0-14+deb12u1) 12.2.0; x86_64-w64-mingw32-gcc (GCC) 12-win32;
	// gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4); GNU ld (GNU Binutils for Debian) 2.40:
	// PROGRAM (PACKAGE VERSION) VERSION, the version GCC's --version reports
	// after the package's.
	{"gcc", regexp.MustCompile(`^[^()]*\S \([^()]*\) (` + version + `)(?:\s.*)?$`)},
	// 0.11.0 (zig version); v20.11.1 (node --version)
	{"bare", regexp.MustCompile(`^v?(` + version + `)$`)},
	// rustc 1.75.0 (82e1608df 2023-12-21); cmake version 3.25.1; GNU Make 4.3;
	// Python 3.12.1: the first word of the form N.N, outside parentheses.
	{"words", regexp.MustCompile(`^[^()]*?(?:^|\s)v?([0-9]+\.[0-9A-Za-z.+~_-]+)(?:[\s,].*)?$`)},
}

// toolchainVersion reads the version out of a toolchain's identity line:
// "go version go1.26.8 linux/amd64" is 1.26.8, "0.11.0" (zig) 0.11.0,
// "x86_64-w64-mingw32-gcc (GCC) 12-win32" 12-win32. ok is false when no
// rule reads one; the caller keeps the line in a comment then, never in
// versionInfo.
func toolchainVersion(line string) (v string, ok bool) {
	line = strings.TrimSpace(line)
	for _, r := range versionRules {
		if m := r.re.FindStringSubmatch(line); m != nil {
			return m[1], true
		}
	}
	return "", false
}
