package sbom

import (
	"encoding/base64"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pyname"
)

// idPart sanitises one component of an SPDX identifier: every byte outside
// [A-Za-z0-9.-] becomes "-" (SPDX 2.3 §7.2, §8.2: "letters, numbers, . and/or
// -").
func idPart(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isIDByte(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// joinID joins sanitised components with "-": joinID("Package", "wheel",
// "linux-x86_64", "vexl-compiler", "0.3.0") is
// "Package-wheel-linux-x86-64-vexl-compiler-0.3.0" (the SPDXRef- prefix is
// added by the writer).
func joinID(parts ...string) string {
	for i, p := range parts {
		parts[i] = idPart(p)
	}
	return strings.Join(parts, "-")
}

// isHex reports whether s is exactly n lower-case hex digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// isH1 reports whether s is an "h1:" tree hash: "h1:" and the standard
// base64 of 32 bytes.
func isH1(s string) bool {
	rest, ok := strings.CutPrefix(s, "h1:")
	if !ok {
		return false
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	return err == nil && len(b) == 32
}

// purlEncode percent-encodes one component of a purl (a version, a
// qualifier value) as the purl specification's "Character encoding" section
// says: the string's UTF-8 bytes are kept when they are ASCII letters or
// digits, the punctuation ". - _ ~" or the colon ":" (which must never be
// encoded), and every other byte becomes "%" and two upper-case hex digits
// (RFC 3986 §2.1): "+" of a local version is "%2B", "!" of an epoch "%21",
// a space "%20".
func purlEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isIDByte(c) || c == '_' || c == '~' || c == ':' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// WheelPURL is the purl of one wheel file (purl-spec, type pypi):
// pkg:pypi/NAME@VERSION?file_name=FILE, NAME PEP 503-normalised, VERSION
// and FILE percent-encoded. The file_name qualifier selects that
// distribution file, so the wheels of one version (one per platform or
// Python) each have their own purl. The SBOM and the provenance both name
// dependency wheels by it.
func WheelPURL(name, version, file string) string {
	return "pkg:pypi/" + purlEncode(pyname.Normalize(name)) + "@" + purlEncode(version) + "?file_name=" + purlEncode(file)
}

// singleLine reports whether s is non-empty after trimming and holds no
// control character.
func singleLine(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
