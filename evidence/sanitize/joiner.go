package sanitize

import (
	"fmt"
	"sort"
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
}

// maxJoinTargets bounds the sequences a joiner follows in one file; the
// values of any other are not joined.
const maxJoinTargets = 4096

// joinPart says that the bytes of a sequence's tail from at on (up to the
// next part) are of the value at file offset off.
type joinPart struct {
	at  int
	off int64
}

// joinSeq is what a joiner keeps of a sequence: the last k bytes of its
// values, decoded, and where they came from.
type joinSeq struct {
	tail  []byte
	parts []joinPart
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
			jn.join(q, t.desc)
		}
		if jn.n >= int64(jn.k) {
			q.tail = append(q.tail[:0], vtail...)
			q.parts = append(q.parts[:0], joinPart{0, jn.off})
			continue
		}
		q.parts = append(q.parts, joinPart{len(q.tail), jn.off})
		q.tail = append(q.tail, jn.head...)
		if drop := len(q.tail) - jn.k; drop > 0 {
			q.tail = q.tail[:copy(q.tail, q.tail[drop:])]
			k := 0
			for k+1 < len(q.parts) && q.parts[k+1].at <= drop {
				k++
			}
			q.parts = append(q.parts[:0], q.parts[k:]...)
			for i := range q.parts {
				q.parts[i].at = max(q.parts[i].at-drop, 0)
			}
		}
	}
}

// via describes a finding across the join, found in text decoded as inner.
func (jn *joiner) via(inner string) string {
	return within(inner, fmt.Sprintf("%s, the next at offset %d", jn.desc, jn.off))
}

// join scans the join of the current value to sequence q.
func (jn *joiner) join(q *joinSeq, desc string) {
	jn.win = append(append(jn.win[:0], q.tail...), jn.head...)
	jn.seq, jn.j, jn.desc = q, len(q.tail), desc
	m := jn.sc.m
	m.scan(jn.win, max(0, jn.j-m.reach), jn.j, 0, jn.hit)
	jn.decodeAcross(runBase64)
	jn.decodeAcross(runHex)
}

// decodeAcross decodes the run of kind that spans the join, if any, and
// scans what it decodes to for a match across the join.
func (jn *joiner) decodeAcross(kind runKind) {
	cl, bits, least := uint8(clB64), int64(6), minBase64Run
	if kind == runHex {
		cl, bits, least = clHex, 4, minHexRun
	}
	w, j := jn.win, jn.j
	l, r := j, j
	for l > 0 && runClass[w[l-1]]&(cl|clBreak) != 0 {
		l--
	}
	for r < len(w) && runClass[w[r]]&(cl|clBreak) != 0 {
		r++
	}
	jn.digits, jn.digitAt = jn.digits[:0], jn.digitAt[:0]
	before, allHex := 0, true
	for i := l; i < r; i++ {
		if c := w[i]; runClass[c]&cl != 0 {
			if i < j {
				before++
			}
			allHex = allHex && runClass[c]&clHex != 0
			jn.digits = append(jn.digits, c)
			jn.digitAt = append(jn.digitAt, i)
		}
	}
	if before == 0 || before == len(jn.digits) || len(jn.digits) < least || kind == runBase64 && allHex {
		return
	}
	if jn.lv == nil {
		jn.lv = newLevel(jn.sc, 1)
		jn.lv.up = jn.fromLevel
	}
	jn.runName, jn.bits = kind.String(), bits
	for a := range kind.alignments() {
		if a >= before {
			break
		}
		jn.dec = decodeRun(jn.dec[:0], kind, jn.digits, a)
		jn.align, jn.runBits = a, int64(before-a)*bits
		jn.lv.scan(jn.dec)
	}
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
