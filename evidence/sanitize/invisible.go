package sanitize

import "unicode"

// isInvisible reports the characters that render as nothing and so can
// split a credential without a reader (or a grep) noticing: every format
// character (Unicode category Cf: the soft hyphen U+00AD, the zero-width
// space, non-joiner and joiner U+200B..U+200D, the marks U+200E, U+200F
// and U+061C, the bidi embeddings, overrides and isolates U+202A..U+202E
// and U+2066..U+2069, the word joiner and invisible operators
// U+2060..U+2064, U+FEFF, the tag characters U+E0001 and
// U+E0020..U+E007F, …), the variation selectors (U+180B..U+180F,
// U+FE00..U+FE0F, U+E0100..U+E01EF), the combining grapheme joiner
// U+034F, and the fillers U+115F, U+1160, U+17B4, U+17B5, U+3164 and
// U+FFA0.
func isInvisible(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0x034F, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5, r == 0x3164, r == 0xFFA0,
		0x180B <= r && r <= 0x180F, 0xFE00 <= r && r <= 0xFE0F, 0xE0100 <= r && r <= 0xE01EF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}
