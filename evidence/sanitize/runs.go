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

// run is an open run of digits.
type run struct {
	active bool
	digits []byte // its digits (line breaks left out), at most runSegment
	start  int64  // input offset of its first digit (mapped)
	total  int    // digits in the whole run so far
	breaks int    // line-break bytes since its last digit
	pad    int    // "=" after its last digit (base64)
	allHex bool   // every digit so far is a hex digit (base64)
	last   int64  // stream offset after its last digit
}

// runFinder finds the runs of base64 and of hex digits in a stream
// written to it in pieces and hands each, a segment at a time, to onRun.
// A base64 run is a maximal sequence of base64 digits of either alphabet,
// in lines (at most two line-break bytes between two digits), ended by at
// most two "="; a hex run a maximal sequence of hex digits, in lines too.
// A base64 run of hex digits only is a hex run alone.
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
	r.active, r.digits, r.total, r.breaks, r.pad = false, r.digits[:0], 0, 0, 0
}

// write adds seg to the stream.
func (f *runFinder) write(seg []byte) {
	for i := 0; i < len(seg); {
		cl := runClass[seg[i]]
		switch {
		case cl&clB64 != 0:
			j := i + 1
			for j < len(seg) && runClass[seg[j]]&clB64 != 0 {
				j++
			}
			f.add(&f.b64, runBase64, seg[i:j], f.pos+int64(i))
			for k := i; k < j; {
				if runClass[seg[k]]&clHex == 0 {
					f.end(&f.hex, runHex)
					for k < j && runClass[seg[k]]&clHex == 0 {
						k++
					}
					continue
				}
				h := k + 1
				for h < j && runClass[seg[h]]&clHex != 0 {
					h++
				}
				f.add(&f.hex, runHex, seg[k:h], f.pos+int64(k))
				if h < j {
					f.end(&f.hex, runHex)
				}
				k = h
			}
			i = j
		case cl&clBreak != 0:
			f.lineBreak(&f.b64, runBase64)
			f.lineBreak(&f.hex, runHex)
			i++
		case seg[i] == '=':
			if r := &f.b64; r.active && r.breaks == 0 && r.pad < 2 {
				r.pad++
			} else {
				f.end(r, runBase64)
			}
			f.end(&f.hex, runHex)
			i++
		default:
			f.end(&f.b64, runBase64)
			f.end(&f.hex, runHex)
			i++
			for i < len(seg) && runClass[seg[i]] == 0 && seg[i] != '=' {
				i++
			}
		}
	}
	f.pos += int64(len(seg))
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

// add appends digits (at stream offset at) to run r.
func (f *runFinder) add(r *run, kind runKind, digits []byte, at int64) {
	if r.active && r.pad > 0 {
		f.end(r, kind)
	}
	if !r.active {
		r.active, r.allHex, r.start = true, true, f.mapIn(at)
	}
	if kind == runBase64 && r.allHex {
		for _, c := range digits {
			if runClass[c]&clHex == 0 {
				r.allHex = false
				break
			}
		}
	}
	r.breaks = 0
	r.total += len(digits)
	r.last = at + int64(len(digits))
	for len(digits) > 0 {
		k := min(len(digits), runSegment-len(r.digits))
		r.digits = append(r.digits, digits[:k]...)
		digits = digits[k:]
		if len(r.digits) == runSegment {
			f.segment(r, kind)
			// The next segment repeats the last runOverlap digits (a
			// multiple of 4, so every alignment stays the same).
			r.digits = append(r.digits[:0], r.digits[runSegment-runOverlap:]...)
		}
	}
}

// end closes run r: its last segment is decoded when the run is long
// enough.
func (f *runFinder) end(r *run, kind runKind) {
	if r.active && r.total > len(r.digits)-0 && len(r.digits) > runOverlap || r.active && r.total == len(r.digits) {
		f.segment(r, kind)
	}
	r.reset()
}

// segment hands the digits of r to onRun when the run is long enough and,
// for base64, not all hex digits.
func (f *runFinder) segment(r *run, kind runKind) {
	switch {
	case kind == runBase64 && (r.total < minBase64Run || r.allHex),
		kind == runHex && r.total < minHexRun:
		return
	}
	f.onRun(kind, r.digits, r.start, r.last)
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
		dst = append(dst, byte(hexVal(digits[i])<<4|hexVal(digits[i+1])))
	}
	return dst
}

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
