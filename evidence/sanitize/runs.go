package sanitize

// Runs of base64 or hex digits are decoded and the bytes they decode to
// are scanned in turn (see the package documentation).
const (
	// minBase64Run and minHexRun are the shortest runs decoded: 12 base64
	// digits are 9 bytes, 10 hex digits 5 (as long as "/root").
	minBase64Run = 12
	minHexRun    = 10
	// runSegment is how many digits of a run are decoded at a time; each
	// segment after the first starts runOverlap digits before the end of
	// the one before, so that what the segments decode to overlaps by more
	// than any pattern's reach, even nested in a second encoding.
	runSegment = 64 << 10
	runOverlap = 1 << 10
	// maxDepth bounds encodings inside encodings: a file's bytes are depth
	// 0, what a run of them decodes to depth 1, and so on.
	maxDepth = 3
)

// runKind is the encoding of a run.
type runKind uint8

const (
	runBase64 runKind = iota
	runHex
)

func (k runKind) String() string {
	if k == runHex {
		return "hex"
	}
	return "base64"
}

// Byte classes of runs.
const (
	clB64   = 1 << iota // a base64 digit of either alphabet: [A-Za-z0-9+/_-]
	clHex               // [0-9A-Fa-f]
	clBreak             // CR, LF: a run may be wrapped in lines
)

var runClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		if isAlnum(b) || b == '+' || b == '/' || b == '_' || b == '-' {
			t[c] |= clB64
		}
		if hexVal(b) >= 0 {
			t[c] |= clHex
		}
	}
	t['\n'], t['\r'] = clBreak, clBreak
	return t
}()

// b64Value maps both base64 alphabets (standard "+/" and URL-safe "-_")
// to digit values; -1 for other bytes.
var b64Value = func() (t [256]int8) {
	for c := range t {
		t[c] = -1
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(std) {
		t[std[i]] = int8(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// Kinds of base64 digits, for telling a word from an encoding.
const (
	kindUpper = 1 << iota
	kindLower
	kindDigit
)

var digitKind = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = kindUpper
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = kindLower
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = kindDigit
	}
	return t
}()

// run is an open run of digits.
type run struct {
	active bool
	// pending is the run's digits in the piece being written, not copied
	// yet: a run that starts and ends in one piece, in one line, is
	// decoded from the piece itself.
	pending []byte
	digits  []byte // its digits copied (line breaks left out), at most runSegment
	// segmented: a segment of the run was handed over already.
	segmented bool
	startPos  int64 // stream offset of its first digit
	start     int64 // input offset of its first digit, once mapped
	mapped    bool
	last      int64 // stream offset after its last digit
	total     int   // digits in the whole run so far
	breaks    int   // line-break bytes since its last digit
	pad       int   // "=" after its last digit (base64)
	kinds     uint8 // the digitKinds of its digits (base64)
	nonHex    bool  // a digit is not a hex digit (base64)
}

// runFinder finds the runs of base64 and of hex digits in a stream
// written to it in pieces and hands each, a segment at a time, to onRun.
// A base64 run is a maximal sequence of base64 digits of either alphabet,
// in lines (at most two line-break bytes between two digits), ended by at
// most two "="; a hex run a maximal sequence of hex digits, in lines too.
// A base64 run is decoded unless it is all hex digits (it is a hex run
// too) or a word: digits of one kind only, upper-case letters,
// lower-case letters or decimal digits (and "+/-_"), which base64 of 9
// bytes or more hardly ever is.
type runFinder struct {
	// mapIn maps a stream offset to the input offset reported for a run
	// that starts there.
	mapIn func(int64) int64
	// onRun receives a segment of a run: its digits, the input offset of
	// the run's start and the stream offset after its last digit.
	onRun    func(kind runKind, digits []byte, start, end int64)
	b64, hex run
	pos      int64 // stream offset of the next byte
}

func (f *runFinder) reset() {
	f.b64.reset()
	f.hex.reset()
	f.pos = 0
}

func (r *run) reset() {
	*r = run{digits: r.digits[:0]}
}

// write adds seg to the stream.
func (f *runFinder) write(seg []byte) {
	n := len(seg)
	for i := 0; i < n; {
		c := seg[i]
		cl := runClass[c]
		if cl&clB64 == 0 {
			switch {
			case cl&clBreak != 0:
				f.lineBreak(&f.b64, runBase64)
				f.lineBreak(&f.hex, runHex)
			case c == '=':
				if r := &f.b64; r.active && r.breaks == 0 && r.pad < 2 {
					r.pad++
				} else {
					f.end(r, runBase64)
				}
				f.end(&f.hex, runHex)
			default:
				f.end(&f.b64, runBase64)
				f.end(&f.hex, runHex)
			}
			i++
			continue
		}
		// A span of digits, and the hex runs in it.
		j, hs := i, -1
		var kinds uint8
		nonHex := false
		for ; j < n; j++ {
			c := seg[j]
			cl := runClass[c]
			if cl&clB64 == 0 {
				break
			}
			kinds |= digitKind[c]
			if cl&clHex != 0 {
				if hs < 0 {
					hs = j
				}
				continue
			}
			nonHex = true
			if hs >= 0 {
				f.extend(&f.hex, runHex, seg[hs:j], f.pos+int64(hs), 0, false)
				hs = -1
			}
			f.end(&f.hex, runHex)
		}
		if hs >= 0 {
			f.extend(&f.hex, runHex, seg[hs:j], f.pos+int64(hs), 0, false)
		}
		f.extend(&f.b64, runBase64, seg[i:j], f.pos+int64(i), kinds, nonHex)
		i = j
	}
	f.keep(&f.b64, runBase64)
	f.keep(&f.hex, runHex)
	f.pos += int64(n)
}

// close ends the stream, and with it the open runs.
func (f *runFinder) close() {
	f.end(&f.b64, runBase64)
	f.end(&f.hex, runHex)
}

func (f *runFinder) lineBreak(r *run, kind runKind) {
	if !r.active {
		return
	}
	if r.breaks++; r.breaks > 2 || r.pad > 0 {
		f.end(r, kind)
	}
}

// extend adds span, digits at stream offset at (of kinds, not all hex
// digits when nonHex), to run r.
func (f *runFinder) extend(r *run, kind runKind, span []byte, at int64, kinds uint8, nonHex bool) {
	if r.active && (r.pad > 0 || r.breaks > 2) {
		f.end(r, kind)
	}
	if !r.active {
		r.active, r.startPos = true, at
	}
	r.kinds |= kinds
	r.nonHex = r.nonHex || nonHex
	r.breaks = 0
	r.total += len(span)
	r.last = at + int64(len(span))
	if r.pending == nil && len(r.digits) == 0 && !r.segmented && len(span) < runSegment {
		r.pending = span
		return
	}
	f.keep(r, kind)
	f.copyDigits(r, kind, span)
}

// keep copies the pending digits of r, and maps its start: the piece they
// are in is about to go, and the normaliser may forget how it mapped it.
func (f *runFinder) keep(r *run, kind runKind) {
	if r.active && !r.mapped {
		r.start, r.mapped = f.mapIn(r.startPos), true
	}
	if r.pending != nil {
		p := r.pending
		r.pending = nil
		f.copyDigits(r, kind, p)
	}
}

// copyDigits appends digits to r's, handing over a segment whenever
// runSegment digits are there.
func (f *runFinder) copyDigits(r *run, kind runKind, digits []byte) {
	for len(digits) > 0 {
		k := min(len(digits), runSegment-len(r.digits))
		r.digits = append(r.digits, digits[:k]...)
		digits = digits[k:]
		if len(r.digits) == runSegment {
			f.segment(r, kind, r.digits)
			r.segmented = true
			// The next segment repeats the last runOverlap digits (a
			// multiple of 4, so every alignment stays the same).
			r.digits = append(r.digits[:0], r.digits[runSegment-runOverlap:]...)
		}
	}
}

// end closes run r: its last segment is decoded when it has digits no
// segment before had.
func (f *runFinder) end(r *run, kind runKind) {
	if !r.active {
		return
	}
	switch {
	case r.pending != nil && len(r.digits) == 0:
		f.segment(r, kind, r.pending)
	default:
		f.keep(r, kind)
		if !r.segmented || len(r.digits) > runOverlap {
			f.segment(r, kind, r.digits)
		}
	}
	r.reset()
}

// segment hands digits, a segment of r, to onRun when the run is long
// enough and, for base64, no word and not all hex digits.
func (f *runFinder) segment(r *run, kind runKind, digits []byte) {
	switch {
	case kind == runBase64 && (r.total < minBase64Run || !r.nonHex || r.kinds&(r.kinds-1) == 0),
		kind == runHex && r.total < minHexRun:
		return
	}
	if !r.mapped {
		r.start, r.mapped = f.mapIn(r.startPos), true
	}
	f.onRun(kind, digits, r.start, r.last)
}

// decodeBase64 appends to dst what digits decode to from digit align on
// (0..3): four digits are three bytes, a last group of two or three
// digits one or two bytes.
func decodeBase64(dst, digits []byte, align int) []byte {
	if align >= len(digits) {
		return dst
	}
	d := digits[align:]
	var acc uint32
	n := 0
	for _, c := range d {
		acc = acc<<6 | uint32(b64Value[c]&63)
		if n++; n == 4 {
			dst = append(dst, byte(acc>>16), byte(acc>>8), byte(acc))
			acc, n = 0, 0
		}
	}
	switch n {
	case 2:
		dst = append(dst, byte(acc>>4))
	case 3:
		dst = append(dst, byte(acc>>10), byte(acc>>2))
	}
	return dst
}

// decodeHex appends to dst what digits decode to from digit align on
// (0 or 1); an odd last digit is dropped.
func decodeHex(dst, digits []byte, align int) []byte {
	for i := align; i+1 < len(digits); i += 2 {
		dst = append(dst, hexValue[digits[i]]<<4|hexValue[digits[i+1]])
	}
	return dst
}

// hexValue maps hex digits to their values.
var hexValue = func() (t [256]byte) {
	for c := range t {
		if v := hexVal(byte(c)); v >= 0 {
			t[c] = byte(v)
		}
	}
	return t
}()

// alignments is how many digit alignments a run of kind is decoded at:
// a run may start with digits that are not part of the encoding (an
// identifier's letters before a base64 string), so every alignment is
// tried.
func (k runKind) alignments() int {
	if k == runHex {
		return 2
	}
	return 4
}

// decodeRun appends what digits decode to at alignment align.
func decodeRun(dst []byte, kind runKind, digits []byte, align int) []byte {
	if kind == runHex {
		return decodeHex(dst, digits, align)
	}
	return decodeBase64(dst, digits, align)
}
