package sanitize

import (
	"encoding/binary"
	"sort"
)

// lookbehind is how many bytes before a literal a rule may look at.
const lookbehind = 8

// anchor is one literal of a rule.
type anchor struct {
	lit  string
	fold bool
	r    *rule
}

// matcher finds the rules' literals in one pass. Every literal is at
// least two bytes long, so a bitset of the byte pairs that start one
// (indexed by first byte | second byte<<8) rejects almost every position
// with a single lookup, seven positions per branch, and a second bitset of
// hashed four-byte prefixes rejects most of the rest (the "py" of
// "python" passes the first, not the second). At the few positions that
// pass both, the literals starting with that byte are tried longest
// first, and the first whose rule matches wins. Matching resumes after
// the match.
type matcher struct {
	pairs [1 << 16 / 64]uint64
	// quads is a second filter for the positions that pass pairs: a bitset
	// of a 16-bit hash of the first four bytes of every literal (of every
	// fourth byte after a three-byte one). anyQuad turns it off when a
	// literal is shorter than three bytes.
	quads   [1 << 16 / 64]uint64
	anyQuad bool
	first   [256][]anchor
	reach   int // the largest reach of any rule
}

// anchors returns the literals of the rules, longest first; ties keep
// their order (credentials, then private values, then generic shapes).
// Literals shorter than two bytes are dropped (no rule has one).
func anchors(ruleSets ...[]*rule) []anchor {
	var all []anchor
	for _, rules := range ruleSets {
		for _, r := range rules {
			for _, l := range r.lits {
				if len(l) >= 2 {
					all = append(all, anchor{lit: l, fold: r.fold, r: r})
				}
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return len(all[i].lit) > len(all[j].lit) })
	return all
}

func newMatcher(ruleSets ...[]*rule) *matcher {
	all := anchors(ruleSets...)
	m := &matcher{}
	for _, a := range all {
		m.reach = max(m.reach, a.r.reach, len(a.lit))
		for _, c0 := range caseVariants(a.lit[0], a.fold) {
			m.first[c0] = append(m.first[c0], a)
		}
		prefix := a.lit[:min(len(a.lit), 4)]
		for variant := range 1 << len(prefix) {
			// Bit k of variant flips the case of prefix[k]; variants that
			// would flip a non-letter, or any byte without fold, are skipped.
			var v [4]byte
			ok := true
			for k := range len(prefix) {
				v[k] = prefix[k]
				if variant&(1<<k) != 0 {
					ok = ok && a.fold && isAlpha(v[k])
					v[k] ^= 0x20
				}
			}
			if !ok {
				continue
			}
			x := uint16(v[0]) | uint16(v[1])<<8
			m.pairs[x>>6] |= 1 << (x & 63)
			q := binary.LittleEndian.Uint32(v[:])
			switch len(prefix) {
			case 4:
				m.addQuad(q)
			case 3:
				for c := range uint32(256) {
					m.addQuad(q | c<<24)
				}
			default:
				m.anyQuad = true
			}
		}
	}
	return m
}

// quadHash hashes four bytes (little-endian) to 16 bits.
func quadHash(q uint32) uint32 { return q * 0x9E3779B1 >> 16 }

func (m *matcher) addQuad(q uint32) {
	h := quadHash(q)
	m.quads[h>>6] |= 1 << (h & 63)
}

// quadAt reports whether the four bytes at d[j:] may start a literal.
func (m *matcher) quadAt(d []byte, j int) bool {
	if m.anyQuad || j+4 > len(d) {
		return true
	}
	h := quadHash(binary.LittleEndian.Uint32(d[j:]))
	return m.quads[h>>6]&(1<<(h&63)) != 0
}

// caseVariants returns c, and its other ASCII case when fold is set.
func caseVariants(c byte, fold bool) []byte {
	if fold && isAlpha(c) {
		return []byte{c | 0x20, c &^ 0x20}
	}
	return []byte{c}
}

// hitFunc receives a match of rule r at data[i:i+n].
type hitFunc func(i, n int, r *rule, excerpt string)

// scan reports the matches that start in data[start:end], none before
// skip, and returns the index before which the next match may not start.
// Rules see data as the whole input around a position: the caller makes
// sure that data[end:] holds at least m.reach bytes unless data ends the
// input, and that data[:start] holds lookbehind bytes unless data starts
// it.
func (m *matcher) scan(data []byte, start, end, skip int, hit hitFunc) int {
	end = min(end, len(data)-1) // a position needs two bytes for the pair lookup
	for i := max(start, 0); ; i++ {
		if i = m.next(data[:max(end+1, 0)], max(i, skip)); i >= end {
			return skip
		}
		if n := m.try(data, i, hit); n > 0 {
			skip = i + n
		}
	}
}

// next returns the first position from i on whose bytes pass both
// filters, or len(d)-1 when there is none. It is the hot loop: one 8-byte
// load tests the pairs of seven positions, with a single branch for all
// seven when none passes. Positions past len(d)-4 skip the second filter.
func (m *matcher) next(d []byte, i int) int {
	p := &m.pairs
	for ; i+8 <= len(d); i += 7 {
		w := binary.LittleEndian.Uint64(d[i:])
		h := p[uint16(w)>>6]>>(w&63) |
			p[uint16(w>>8)>>6]>>((w>>8)&63) |
			p[uint16(w>>16)>>6]>>((w>>16)&63) |
			p[uint16(w>>24)>>6]>>((w>>24)&63) |
			p[uint16(w>>32)>>6]>>((w>>32)&63) |
			p[uint16(w>>40)>>6]>>((w>>40)&63) |
			p[uint16(w>>48)>>6]>>((w>>48)&63)
		if h&1 == 0 {
			continue
		}
		for j := i; j < i+7; j++ {
			if m.pairAt(d, j) && m.quadAt(d, j) {
				return j
			}
		}
	}
	for ; i+1 < len(d); i++ {
		if m.pairAt(d, i) && m.quadAt(d, i) {
			return i
		}
	}
	return max(len(d)-1, i)
}

// pairAt reports whether the pair at data[i:i+2] starts some literal.
func (m *matcher) pairAt(data []byte, i int) bool {
	x := uint16(data[i]) | uint16(data[i+1])<<8
	return m.pairs[x>>6]&(1<<(x&63)) != 0
}

// try tries at data[i] the anchors of that byte, longest first; it
// reports the first match and returns its length, or 0.
func (m *matcher) try(data []byte, i int, hit hitFunc) int {
	n, r, ex := m.match(data[max(0, i-lookbehind):i], data[i:])
	if n > 0 {
		hit(i, n, r, ex)
	}
	return n
}

// match tries the anchors of rest[0] at the start of rest, longest first,
// with before as the bytes before it; it returns the first match, or n 0.
func (m *matcher) match(before, rest []byte) (n int, r *rule, excerpt string) {
	return firstMatch(m.first[rest[0]], before, rest)
}

// firstMatch returns the match of the first of as that matches at the
// start of rest, or n 0.
func firstMatch(as []anchor, before, rest []byte) (n int, r *rule, excerpt string) {
	c := rest[0]
	for k := range as {
		a := &as[k]
		if l := a.lit[0]; l != c && !(a.fold && isAlpha(c) && l|0x20 == c|0x20) ||
			len(rest) < len(a.lit) || !hasLiteral(rest, a.lit, a.fold) {
			continue
		}
		w := window{before: before, b: rest[:min(len(rest), a.r.reach)]}
		if n, ex, ok := a.r.match(w, a.lit); ok {
			return n, a.r, ex
		}
	}
	return 0, nil, ""
}

// hasLiteral reports whether b starts with lit (in any ASCII case when
// fold is set).
func hasLiteral(b []byte, lit string, fold bool) bool {
	if !fold {
		return string(b[:len(lit)]) == lit
	}
	for j := 0; j < len(lit); j++ {
		c, l := b[j], lit[j]
		if c != l && !(isAlpha(c) && c|0x20 == l|0x20) {
			return false
		}
	}
	return true
}

// defaultChunk is how much of a file Scan reads at a time.
const defaultChunk = 256 << 10

// stream runs a matcher over a stream written to it in pieces, in a
// buffer of lookbehind+reach+chunk bytes (memory does not grow with the
// input). Each round, when the buffer is full and at the end, scans the
// positions that have reach bytes after them (all of them at the end)
// and carries the last lookbehind+reach bytes over, so a match across a
// round's boundary is seen exactly as it would be in one piece.
type stream struct {
	m     *matcher
	buf   []byte
	n     int   // bytes of buf in use
	base  int64 // the stream offset of buf[0]
	start int   // the first position of buf not scanned yet
	skip  int   // the position before which no match may start
	hit   func(off int64, n int, r *rule, excerpt string)
	// focus, when set, limits a round to the stream positions it returns
	// for the round's scannable positions [from, to): ranges [a, b),
	// sorted by a (they may overlap).
	focus  func(from, to int64, buf [][2]int64) [][2]int64
	ranges [][2]int64
}

func newStream(m *matcher, chunk int, hit func(off int64, n int, r *rule, excerpt string)) *stream {
	chunk = max(chunk, 2*lookbehind)
	return &stream{m: m, buf: make([]byte, lookbehind+m.reach+chunk), hit: hit}
}

// reset makes s ready for a new stream, keeping its buffer.
func (s *stream) reset() {
	s.n, s.base, s.start, s.skip = 0, 0, 0, 0
}

// write adds p to the stream.
func (s *stream) write(p []byte) {
	for len(p) > 0 {
		k := copy(s.buf[s.n:], p)
		s.n += k
		p = p[k:]
		if s.n == len(s.buf) {
			s.round(false)
		}
	}
}

// close scans what is left: the stream has ended.
func (s *stream) close() { s.round(true) }

func (s *stream) round(eof bool) {
	data := s.buf[:s.n]
	end := len(data)
	if !eof {
		end -= s.m.reach
	}
	base := s.base
	hit := func(i, n int, r *rule, ex string) { s.hit(base+int64(i), n, r, ex) }
	if s.focus == nil {
		s.skip = s.m.scan(data, s.start, end, s.skip, hit)
	} else if s.start < end {
		lo := s.start
		s.ranges = s.focus(base+int64(s.start), base+int64(end), s.ranges[:0])
		for _, rg := range s.ranges {
			from, to := max(lo, int(max(rg[0]-base, 0))), min(end, int(min(rg[1]-base, int64(end))))
			if from < to {
				s.skip = s.m.scan(data, from, to, s.skip, hit)
				lo = to
			}
		}
	}
	if eof {
		return
	}
	from := end - lookbehind
	s.n = copy(s.buf, data[from:])
	s.base += int64(from)
	s.start, s.skip = end-from, max(s.skip-from, 0)
}
