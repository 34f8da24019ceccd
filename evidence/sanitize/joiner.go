package sanitize

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// joinTarget is a sequence of values a value joins: the strings of one
// key in consecutive JSON records, every string of a JSON document in
// order, or the values of one column of an SQLite table in consecutive
// rows.
type joinTarget struct {
	id uint64
	// desc names the sequence in findings: "JSON strings of one key in
	// consecutive records joined".
	desc string
	// noRuns: only the patterns are matched across the join, runs of
	// digits are not decoded across it.
	noRuns bool
}

// maxJoinTargets bounds the sequences a joiner follows in one file; the
// values of any other are not joined.
const maxJoinTargets = 4096

// joinPart says that the bytes of a sequence's tail from at on (up to the
// next part) are of the value at file offset off; whole when the value
// starts there (it is not cut by the tail's start).
type joinPart struct {
	at    int
	off   int64
	whole bool
}

// joinSeq is what a joiner keeps of a sequence: the last k bytes of its
// values, decoded, and where they came from.
type joinSeq struct {
	tail  []byte
	parts []joinPart
	// last is the bytes around the last join: the same bytes again (the
	// keys of every record, a lane's name) are not scanned again.
	last []byte
}

// off returns the file offset of the value that tail[at] is of.
func (q *joinSeq) off(at int) int64 {
	k := sort.Search(len(q.parts), func(k int) bool { return q.parts[k].at > at })
	if k == 0 {
		return q.parts[0].off
	}
	return q.parts[k-1].off
}

// joiner finds what a value hides by being cut in pieces: each value
// (decoded: escapes, NFKC, invisible characters) is joined to the values
// before it in its sequences, and the k bytes on each side of the join
// are scanned for a match that spans it, and for a run of base64 or hex
// digits that spans it, whose decoding (at every alignment) is scanned for
// a match across the join. What lies on one side only is found in the
// value itself. k is twice the matcher's reach and more, so that a match
// decoded from a run across the join is seen whole.
type joiner struct {
	sc   *Scanner
	k    int
	prio int
	out  report
	seqs map[uint64]*joinSeq
	norm normaliser // decodes each value
	// The value being read: its file offset, first and last bytes, length.
	off        int64
	head, tail []byte
	n          int64
	win        []byte
	digits     []byte
	digitAt    []int // the position in win of each digit
	kinds      uint8 // the digitKinds of the digits
	nonHex     bool  // a digit is not a hex digit
	lo, hi     int   // where in win the digits collected are
	dec        []byte
	lv         *level
	hit        hitFunc
	// The join being scanned.
	seq     *joinSeq
	j       int
	desc    string
	align   int   // the digit the decoding starts at
	bits    int64 // bits a digit stands for
	runBits int64 // the join's bit offset in what the run decodes to
	runName string
}

func newJoiner(sc *Scanner, prio int, out report) *joiner {
	jn := &joiner{sc: sc, k: 2*sc.m.reach + 16, prio: prio, out: out, seqs: map[uint64]*joinSeq{}}
	jn.norm.noRegions = true
	jn.norm.emit = jn.add
	jn.hit = func(i, n int, r *rule, ex string) {
		if i < jn.j && jn.j < i+n {
			off := jn.seq.off(i)
			jn.out(off, off+1, r.kind, ex, jn.via(""), jn.prio)
		}
	}
	return jn
}

// begin starts a value at file offset off.
func (jn *joiner) begin(off int64) {
	jn.off, jn.head, jn.tail, jn.n = off, jn.head[:0], jn.tail[:0], 0
	jn.norm.reset()
}

// write adds bytes of the value as the file has them.
func (jn *joiner) write(b []byte) { jn.norm.write(b) }

// add receives the value's decoded bytes.
func (jn *joiner) add(b []byte) {
	jn.n += int64(len(b))
	if h := jn.k - len(jn.head); h > 0 {
		jn.head = append(jn.head, b[:min(h, len(b))]...)
	}
	if len(b) >= jn.k {
		jn.tail = append(jn.tail[:0], b[len(b)-jn.k:]...)
		return
	}
	jn.tail = append(jn.tail, b...)
	if len(jn.tail) > 2*jn.k {
		jn.tail = jn.tail[:copy(jn.tail, jn.tail[len(jn.tail)-jn.k:])]
	}
}

// end ends the value and joins it to each of targets.
func (jn *joiner) end(targets []joinTarget) {
	jn.norm.close()
	if jn.n == 0 {
		return
	}
	vtail := jn.tail[max(0, len(jn.tail)-jn.k):]
	for _, t := range targets {
		q := jn.seqs[t.id]
		if q == nil {
			if len(jn.seqs) >= maxJoinTargets {
				continue
			}
			q = &joinSeq{}
			jn.seqs[t.id] = q
		}
		if len(q.tail) > 0 {
			jn.join(q, t)
		}
		if jn.n >= int64(jn.k) {
			q.tail = append(q.tail[:0], vtail...)
			q.parts = append(q.parts[:0], joinPart{0, jn.off, jn.n == int64(jn.k)})
			continue
		}
		q.parts = append(q.parts, joinPart{len(q.tail), jn.off, true})
		q.tail = append(q.tail, jn.head...)
		if drop := len(q.tail) - jn.k; drop > 0 {
			q.tail = q.tail[:copy(q.tail, q.tail[drop:])]
			k := 0
			for k+1 < len(q.parts) && q.parts[k+1].at <= drop {
				k++
			}
			q.parts = append(q.parts[:0], q.parts[k:]...)
			for i := range q.parts {
				if q.parts[i].at < drop {
					q.parts[i].whole = false
				}
				q.parts[i].at = max(q.parts[i].at-drop, 0)
			}
		}
	}
}

// via describes a finding across the join, found in text decoded as inner.
func (jn *joiner) via(inner string) string {
	return within(inner, fmt.Sprintf("%s, the next at offset %d", jn.desc, jn.off))
}

// join scans the join of the current value to sequence q, of target t.
func (jn *joiner) join(q *joinSeq, t joinTarget) {
	jn.win = append(append(jn.win[:0], q.tail...), jn.head...)
	if len(q.tail) == len(q.last)-len(jn.head) && string(jn.win) == string(q.last) {
		return // scanned already, and its findings reported
	}
	q.last = append(q.last[:0], jn.win...)
	jn.seq, jn.j, jn.desc = q, len(q.tail), t.desc
	m := jn.sc.joined
	m.scan(jn.win, max(0, jn.j-m.reach), jn.j, 0, jn.hit)
	// A value begins text of its own: a match at its first byte is judged
	// as at the start of an input, whatever the value before it ends with
	// ("ok" then "ghp_…": the token is not inside a word).
	for _, pt := range q.parts {
		if p := pt.at; pt.whole && p > 0 && p < jn.j && p >= jn.j-m.reach && m.pairAt(jn.win, p) && m.quadAt(jn.win, p) {
			if n, r, ex := m.match(nil, jn.win[p:]); n > 0 {
				jn.hit(p, n, r, ex)
			}
		}
	}
	if !t.noRuns {
		jn.decodeAcross(runBase64)
		jn.decodeAcross(runHex)
	}
}

// decodeAcross decodes the run of kind that spans the join, if any, and
// scans what it decodes to for a match across the join. The nearJoin
// digits on each side are decoded first, at every alignment: most runs
// across a join are two values' digests or identifiers, which decode to
// no text and no pattern's literal there, and go no further.
func (jn *joiner) decodeAcross(kind runKind) {
	cl, bits, least, group := uint8(clB64), int64(6), minBase64Run, 4
	if kind == runHex {
		cl, bits, least, group = clHex, 4, minHexRun, 2
	}
	w, j := jn.win, jn.j
	if j == 0 || j == len(w) || runClass[w[j-1]]&(cl|clBreak) == 0 || runClass[w[j]]&(cl|clBreak) == 0 {
		return
	}
	// A match across the join is at most reach bytes long: the digits
	// that decode to it lie within span of the join on either side.
	span := int(int64(jn.sc.m.reach)*8/bits) + 8
	before, total := jn.collect(cl, nearJoin+group, false)
	if before == 0 || before == total || total < least && jn.runEnds(cl) ||
		kind == runBase64 && (!jn.nonHex || jn.kinds&(jn.kinds-1) == 0) {
		return
	}
	var want [4]bool
	anyWanted, nearBefore := false, before
	for a := range kind.alignments() {
		base := max(0, before-nearJoin)
		s0 := base + ((a-base)%group+group)%group
		if s0 >= before {
			continue
		}
		jn.dec = decodeRun(jn.dec[:0], kind, jn.digits[s0:min(total, before+nearJoin)], 0)
		if jn.candidate(jn.dec, int((int64(before-s0)*bits)/8)) {
			want[a], anyWanted = true, true
		}
	}
	if !anyWanted {
		return
	}
	before, total = jn.collect(cl, span, true)
	if total < least {
		return
	}
	if jn.lv == nil {
		jn.lv = newLevel(jn.sc, 1)
		jn.lv.up = jn.fromLevel
	}
	jn.runName, jn.bits = kind.String(), bits
	for a := range kind.alignments() {
		// want was for alignments of the near digits; counted from the
		// run's first digit they are the same modulo group only when the
		// digits before the join are too: shift to match.
		if a >= before || !want[((a-(before-nearBefore))%group+group)%group] {
			continue
		}
		jn.dec = decodeRun(jn.dec[:0], kind, jn.digits, a)
		jn.align, jn.runBits = a, int64(before-a)*bits
		jn.lv.scan(jn.dec)
	}
}

// collect gathers in jn.digits (and, with at, their positions in
// jn.digitAt) the digits of class cl of the run across the join, at most
// limit on each side, with their kinds; it returns how many are before
// the join and in all.
func (jn *joiner) collect(cl uint8, limit int, at bool) (before, total int) {
	w, j := jn.win, jn.j
	l, r := j, j
	for n := 0; l > 0 && n < limit; l-- {
		c := runClass[w[l-1]]
		if c&(cl|clBreak) == 0 {
			break
		}
		if c&cl != 0 {
			n++
		}
	}
	for n := 0; r < len(w) && n < limit; r++ {
		c := runClass[w[r]]
		if c&(cl|clBreak) == 0 {
			break
		}
		if c&cl != 0 {
			n++
		}
	}
	jn.digits, jn.digitAt = jn.digits[:0], jn.digitAt[:0]
	jn.kinds, jn.nonHex = 0, false
	for i := l; i < r; i++ {
		c := w[i]
		if runClass[c]&cl == 0 {
			continue
		}
		if i < j {
			before++
		}
		jn.kinds |= digitKind[c]
		jn.nonHex = jn.nonHex || runClass[c]&clHex == 0
		jn.digits = append(jn.digits, c)
		if at {
			jn.digitAt = append(jn.digitAt, i)
		}
	}
	jn.lo, jn.hi = l, r
	return before, len(jn.digits)
}

// runEnds reports whether the run collected ends on both sides inside the
// window, before the limit: it is all there is.
func (jn *joiner) runEnds(cl uint8) bool {
	w := jn.win
	return (jn.lo == 0 || runClass[w[jn.lo-1]]&(cl|clBreak) == 0) && (jn.hi == len(w) || runClass[w[jn.hi]]&(cl|clBreak) == 0)
}

// nearJoin is how many digits on each side of a join are decoded first.
const nearJoin = 16

// candidate reports whether b, decoded from the digits around a join
// (the join before byte jd), may hold a match across the join: it is
// text there (three printable bytes on each side, or valid UTF-8 with a
// multi-byte character), or a pattern's literal starts in it.
func (jn *joiner) candidate(b []byte, jd int) bool {
	lo, hi := max(0, jd-3), min(len(b), jd+3)
	printable, high := true, false
	for _, c := range b[lo:hi] {
		switch {
		case c >= utf8.RuneSelf:
			high = true
			printable = false
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F:
			printable = false
		}
	}
	if printable || high && utf8.Valid(b[max(0, jd-8):min(len(b), jd+8)]) {
		return true
	}
	return jn.sc.m.next(b, 0) < len(b)-1
}

// fromLevel reports a finding in what the run across the join decodes to
// when it spans the join, at the value that holds the digit its first
// byte was decoded from.
func (jn *joiner) fromLevel(s, e int64, kind, excerpt, via string) {
	if s*8 < jn.runBits && jn.runBits < e*8 {
		d := min(jn.align+int(s*8/jn.bits), len(jn.digitAt)-1)
		off := jn.seq.off(jn.digitAt[d])
		jn.out(off, off+1, kind, excerpt, jn.via(within(via, jn.runName)), jn.prio)
	}
}
