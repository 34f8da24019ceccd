package sanitize

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

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

// invisiblePairs is a bitset of the first two bytes of the UTF-8 encoding
// of every invisible character (indexed by b0 | b1<<8). The matcher adds
// it to its own pair filter, so that finding them costs no pass of its
// own over the data.
var invisiblePairs = func() *[1 << 16 / 64]uint64 {
	var t [1 << 16 / 64]uint64
	add := func(r rune) {
		if !isInvisible(r) {
			return
		}
		var b [utf8.UTFMax]byte
		utf8.EncodeRune(b[:], r)
		x := uint16(b[0]) | uint16(b[1])<<8
		t[x>>6] |= 1 << (x & 63)
	}
	for _, r16 := range unicode.Cf.R16 {
		for r := rune(r16.Lo); r <= rune(r16.Hi); r += rune(r16.Stride) {
			add(r)
		}
	}
	for _, r32 := range unicode.Cf.R32 {
		for r := rune(r32.Lo); r <= rune(r32.Hi); r += rune(r32.Stride) {
			add(r)
		}
	}
	for _, rg := range [][2]rune{{0x034F, 0x034F}, {0x115F, 0x1160}, {0x17B4, 0x17B5}, {0x180B, 0x180F},
		{0x3164, 0x3164}, {0xFE00, 0xFE0F}, {0xFFA0, 0xFFA0}, {0xE0100, 0xE01EF}} {
		for r := rg[0]; r <= rg[1]; r++ {
			add(r)
		}
	}
	return &t
}()

// invisibleAt returns the length of the invisible character at d[i], or
// 0 when there is none.
func invisibleAt(d []byte, i int) int {
	if i+1 >= len(d) {
		return 0
	}
	if x := uint16(d[i]) | uint16(d[i+1])<<8; invisiblePairs[x>>6]&(1<<(x&63)) == 0 {
		return 0
	}
	if r, n := utf8.DecodeRune(d[i:]); n > 1 && isInvisible(r) {
		return n
	}
	return 0
}

// removal records that invisible characters were taken out of a stream
// just before the byte at stripped offset pos; cum is the number of bytes
// taken out so far, these included.
type removal struct {
	pos, cum int64
}

// invisibleChar is an invisible character of n bytes at offset off of
// the input.
type invisibleChar struct {
	off int64
	n   int
}

// stripper takes the invisible characters out of a stream, as the
// matcher found them (note), keeping what it needs to map an offset of
// its output back to the input's: the removals from the oldest offset
// still asked about on (see forget).
type stripper struct {
	notes []invisibleChar // found, not yet taken out, by offset
	out   []byte
	// outPos and inPos are the offsets, in the output and in the input,
	// of the next byte strip takes.
	outPos, inPos int64
	cum           int64 // bytes taken out so far
	// removals are sorted by pos; baseCum is the cum of those forgotten.
	removals []removal
	baseCum  int64
}

// note records an invisible character of n bytes at input offset off;
// notes come in increasing order.
func (s *stripper) note(off int64, n int) {
	s.notes = append(s.notes, invisibleChar{off, n})
}

// strip returns seg, the next bytes of the input, without the invisible
// characters noted in it (seg ends after the last of them, if any). The
// result is valid until the next call.
func (s *stripper) strip(seg []byte) []byte {
	start, end := s.inPos, s.inPos+int64(len(seg))
	s.inPos = end
	k := 0
	for k < len(s.notes) && s.notes[k].off < end {
		k++
	}
	if k == 0 {
		s.outPos += int64(len(seg))
		return seg // nothing taken out: no copy
	}
	out := s.out[:0]
	copied := 0 // seg[:copied] is in out
	for _, c := range s.notes[:k] {
		i := int(c.off - start)
		if i < copied {
			continue // cannot happen: notes do not overlap
		}
		out = append(out, seg[copied:i]...)
		pos := s.outPos + int64(len(out))
		s.cum += int64(c.n)
		if r := len(s.removals); r > 0 && s.removals[r-1].pos == pos {
			s.removals[r-1].cum = s.cum
		} else {
			s.removals = append(s.removals, removal{pos: pos, cum: s.cum})
		}
		copied = min(i+c.n, len(seg))
	}
	s.notes = append(s.notes[:0], s.notes[k:]...)
	out = append(out, seg[copied:]...)
	s.outPos += int64(len(out))
	s.out = out
	return out
}

// original maps the stripped offset off to the input's offset: the
// characters taken out before the byte at off count.
func (s *stripper) original(off int64) int64 {
	k := sort.Search(len(s.removals), func(k int) bool { return s.removals[k].pos > off })
	if k == 0 {
		return off + s.baseCum
	}
	return off + s.removals[k-1].cum
}

// removedWithin reports whether characters were taken out strictly
// inside the stripped range (from, to): between two bytes of a match.
func (s *stripper) removedWithin(from, to int64) bool {
	k := sort.Search(len(s.removals), func(k int) bool { return s.removals[k].pos > from })
	return k < len(s.removals) && s.removals[k].pos < to
}

// within returns, in increasing order, the stripped offsets strictly
// inside (from, to) where characters were taken out, in buf.
func (s *stripper) within(from, to int64, buf []int64) []int64 {
	k := sort.Search(len(s.removals), func(k int) bool { return s.removals[k].pos > from })
	out := buf[:0]
	for ; k < len(s.removals) && s.removals[k].pos < to; k++ {
		out = append(out, s.removals[k].pos)
	}
	return out
}

// forget drops the removals before stripped offset off, which will not
// be asked about again.
func (s *stripper) forget(off int64) {
	k := sort.Search(len(s.removals), func(k int) bool { return s.removals[k].pos >= off })
	if k == 0 {
		return
	}
	s.baseCum = s.removals[k-1].cum
	s.removals = append(s.removals[:0], s.removals[k:]...)
}
