// Package namefold tells when two archive member names would be one file
// on some file system although they differ byte for byte.
//
// Two spellings of one name: Unicode canonical equivalence (é as one code
// point U+00E9, or as e followed by U+0301), which macOS file systems
// treat as one name (HFS+ stores NFD, APFS compares normalised); and case,
// which the default file systems of macOS and Windows ignore. An archive
// holding both spellings extracts to two files on Linux and to one,
// whichever came last, elsewhere; and a checker comparing bytes (RECORD,
// SHA256SUMS) can be shown one file while an installer writes the other.
//
// [NFC] gives the key for the first, [Fold] for both: canonical caseless
// matching (Unicode 15, section 3.13, D145: NFD, case fold, NFD again),
// with each code point folded to the smallest member of its simple case
// folding orbit ([unicode.SimpleFold]), so that K, k and the Kelvin sign
// fold together, and S, s and the long s. File systems fold case with
// their own tables; this is at least as eager as any of them, so it may
// flag names that one of them keeps apart, never the reverse for simple
// case pairs. Bytes that are not UTF-8 are kept as they are.
package namefold

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NFC returns name in Unicode Normalization Form C; two names are
// canonically equivalent exactly when their NFC forms are equal. Invalid
// UTF-8 bytes are kept as they are.
func NFC(name string) string {
	if isASCII(name) {
		return name
	}
	return norm.NFC.String(name)
}

// Fold returns a key that is equal for two names exactly when they are
// canonically equivalent ignoring case (see the package documentation).
func Fold(name string) string {
	if isASCII(name) {
		// ASCII folds to ASCII: each letter's orbit is {upper, lower}
		// (plus, for K and S, non-ASCII members larger than both).
		return strings.ToUpper(name)
	}
	d := norm.NFD.String(name)
	var b strings.Builder
	b.Grow(len(d))
	for i := 0; i < len(d); {
		r, size := utf8.DecodeRuneInString(d[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(d[i]) // not UTF-8: keep the byte, so it folds with itself only
			i++
			continue
		}
		b.WriteRune(foldRune(r))
		i += size
	}
	return norm.NFD.String(b.String())
}

// foldRune returns the smallest code point of r's simple case folding
// orbit.
func foldRune(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
