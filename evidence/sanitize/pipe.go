package sanitize

import "unicode/utf8"

// Views of a text and their priorities: when two views find the same kind
// at the same offset, the finding of the first listed is kept.
const (
	prioRaw        = 0 // the bytes as they are
	prioNormalised = 1 // escapes decoded, NFKC, invisible characters out
	prioRun        = 2 // what a run of base64 or hex digits decodes to
	prioJSONJoin   = 3 // consecutive JSON strings joined
	prioCell       = 4 // an SQLite cell's value (added to the three first)
	prioCellJoin   = 7 // consecutive rows' values joined
)

// emitFunc receives a finding in the coordinates of the text it was found
// in: [s, e) are the bytes the match covers (for what a run decodes to,
// the run), via says how that text was decoded from them ("" when it was
// not).
type emitFunc func(s, e int64, kind, excerpt, via string)

// within describes a decoding inside another: "escape sequences decoded
// in base64".
func within(inner, outer string) string {
	switch {
	case inner == "":
		return outer
	case outer == "":
		return inner
	}
	return inner + " in " + outer
}

// level scans what a run decodes to, in memory: the bytes as they are,
// normalised, and the runs in them, decoded in turn by the next level up
// to maxDepth. Each level reuses its buffers from one run to the next.
type level struct {
	sc    *Scanner
	depth int
	up    emitFunc // where this level's findings go
	norm  normaliser
	nout  []byte // the normalised text
	runs  runFinder
	wins  [][2]int64
	dec   []byte
	next  *level
	// The run being decoded by next, to report its findings at.
	runStart, runEnd int64
	runName          string
	// Method values, made once.
	rawHit, normHit hitFunc
}

func newLevel(sc *Scanner, depth int) *level {
	lv := &level{sc: sc, depth: depth}
	lv.norm.emit = func(seg []byte) { lv.nout = append(lv.nout, seg...) }
	lv.runs.mapIn = lv.norm.toIn
	lv.runs.onRun = lv.onRun
	lv.rawHit = func(i, n int, r *rule, ex string) { lv.up(int64(i), int64(i+n), r.kind, ex, "") }
	lv.normHit = func(i, n int, r *rule, ex string) {
		if ok, fl := lv.norm.affected(int64(i), int64(n)); ok {
			lv.up(lv.norm.toIn(int64(i)), lv.norm.toInEnd(int64(i+n)), r.kind, ex, describeFlags(fl))
		}
	}
	return lv
}

// scan reports to lv.up the findings in data, a whole input. Binary data
// (what a run decodes to at a wrong alignment, or anything but text) is
// matched as it is only: normalising it and decoding runs in it is for
// text.
func (lv *level) scan(data []byte) {
	m := lv.sc.m
	m.scan(data, 0, len(data), 0, lv.rawHit)
	if !textLike(data) {
		return
	}
	lv.norm.reset()
	lv.nout = lv.nout[:0]
	lv.norm.write(data)
	lv.norm.close()
	if len(lv.norm.regions) > 0 {
		lv.wins = lv.norm.windows(0, int64(len(lv.nout)), m.reach, lv.wins[:0])
		scanWindows(m, lv.nout, lv.wins, lv.normHit)
	}
	if lv.depth >= maxDepth {
		return
	}
	lv.runs.reset()
	lv.runs.write(lv.nout)
	lv.runs.close()
}

// textLike reports whether at least three quarters of b are printable
// ASCII or white space, or b is valid UTF-8 with as little else.
func textLike(b []byte) bool {
	// Counted down: what a run decodes to at a wrong alignment is random
	// bytes, over a quarter of them neither printable nor UTF-8 lead or
	// continuation bytes, and the count stops there.
	budget := len(b) / 4
	high := false
	for _, c := range b {
		switch textClass[c] {
		case 0:
			if budget--; budget < 0 {
				return false
			}
		case 2:
			high = true
		}
	}
	return !high || utf8.Valid(b)
}

// textClass: 1 printable ASCII or white space, 2 a byte of a multi-byte
// UTF-8 character, 0 else.
var textClass = func() (t [256]uint8) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = 1
	}
	t['\t'], t['\n'], t['\r'] = 1, 1, 1
	for c := 0x80; c < 0xF5; c++ {
		if c < 0xC0 || c >= 0xC2 {
			t[c] = 2
		}
	}
	return t
}()

// scanWindows runs m over the positions of data in wins (sorted by start),
// each position once.
func scanWindows(m *matcher, data []byte, wins [][2]int64, hit hitFunc) {
	lo, skip := 0, 0
	for _, w := range wins {
		from := max(lo, int(max(w[0], 0)))
		to := int(min(w[1], int64(len(data))))
		if from < to {
			skip = m.scan(data, from, to, skip, hit)
			lo = to
		}
	}
}

// onRun decodes a run of the normalised text at every alignment and scans
// what it decodes to one level up.
func (lv *level) onRun(kind runKind, digits []byte, start, end int64) {
	if lv.next == nil {
		lv.next = newLevel(lv.sc, lv.depth+1)
		lv.next.up = lv.fromNext
	}
	lv.runStart, lv.runEnd, lv.runName = start, lv.norm.toInEnd(end), kind.String()
	for a := range kind.alignments() {
		lv.dec = decodeRun(lv.dec[:0], kind, digits, a)
		if len(lv.dec) >= 2 {
			lv.next.scan(lv.dec)
		}
	}
}

// fromNext reports a finding of the next level at the run it decoded.
func (lv *level) fromNext(_, _ int64, kind, excerpt, via string) {
	lv.up(lv.runStart, lv.runEnd, kind, excerpt, within(via, lv.runName))
}

// report receives a finding of a file's view at byte offset off of the
// file; the bytes it was found in end at end.
type report func(off, end int64, kind, excerpt, via string, prio int)

// pipe scans one input streamed to it in pieces (a file, an SQLite
// cell's value, a string): the bytes as they are, the normalised text
// around what normalising changed, and what the runs of base64 and hex
// digits of the normalised text decode to (by levels). Its memory does
// not depend on the input's length.
type pipe struct {
	sc      *Scanner
	raw, ns *stream
	norm    normaliser
	runs    runFinder
	lv      *level // depth 1, made for the first run
	dec     []byte
	out     report
	prio    int // added to every finding's priority (an SQLite cell's)
	// The run being decoded.
	runStart, runEnd int64
	runName          string
}

func newPipe(sc *Scanner, chunk int, out report) *pipe {
	p := &pipe{sc: sc, out: out}
	p.raw = newStream(sc.m, chunk, func(off int64, n int, r *rule, ex string) {
		p.out(off, off+int64(n), r.kind, ex, "", p.prio+prioRaw)
	})
	p.ns = newStream(sc.m, chunk, func(off int64, n int, r *rule, ex string) {
		if ok, fl := p.norm.affected(off, int64(n)); ok {
			p.out(p.norm.toIn(off), p.norm.toInEnd(off+int64(n)), r.kind, ex, describeFlags(fl), p.prio+prioNormalised)
		}
	})
	p.ns.focus = func(from, to int64, buf [][2]int64) [][2]int64 {
		p.norm.forget(from - lookbehind - 1)
		return p.norm.windows(from, to, sc.m.reach, buf)
	}
	// The runs see each piece first: they map the offsets of their starts
	// at once, before a round of ns lets the normaliser forget regions.
	p.norm.emit = func(seg []byte) {
		p.runs.write(seg)
		p.ns.write(seg)
	}
	p.runs.mapIn = p.norm.toIn
	p.runs.onRun = p.onRun
	return p
}

// reset makes p ready for a new input.
func (p *pipe) reset() {
	p.raw.reset()
	p.ns.reset()
	p.norm.reset()
	p.runs.reset()
}

func (p *pipe) write(b []byte) {
	p.raw.write(b)
	p.norm.write(b)
}

func (p *pipe) close() {
	p.raw.close()
	p.norm.close()
	p.runs.close()
	p.ns.close()
}

func (p *pipe) onRun(kind runKind, digits []byte, start, end int64) {
	if p.lv == nil {
		p.lv = newLevel(p.sc, 1)
		p.lv.up = p.fromRun
	}
	p.runStart, p.runEnd, p.runName = start, p.norm.toInEnd(end), kind.String()
	for a := range kind.alignments() {
		p.dec = decodeRun(p.dec[:0], kind, digits, a)
		if len(p.dec) >= 2 {
			p.lv.scan(p.dec)
		}
	}
}

// fromRun reports a finding in what a run decodes to at the run's start.
func (p *pipe) fromRun(_, _ int64, kind, excerpt, via string) {
	p.out(p.runStart, p.runEnd, kind, excerpt, within(via, p.runName), p.prio+prioRun)
}
