package sanitize

import (
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What a normaliser changed in a region of its output, for a finding's
// description.
const (
	flagEscape    uint8 = 1 << iota // an escape sequence was decoded
	flagNFKC                        // a character was replaced by its NFKC form
	flagInvisible                   // an invisible character was taken out
)

// describeFlags names what was done to the text a finding was matched on.
func describeFlags(f uint8) string {
	var parts []string
	if f&flagEscape != 0 {
		parts = append(parts, "escape sequences decoded")
	}
	if f&flagNFKC != 0 {
		parts = append(parts, "NFKC-normalised")
	}
	if f&flagInvisible != 0 {
		parts = append(parts, "invisible characters removed")
	}
	return strings.Join(parts, ", ")
}

// maxNest bounds the escapes decoded inside one another: "\\u0067" (an
// escaped backslash, then "u0067") is "g" after two levels, "%255C" after
// two.
const maxNest = 3

// region is a part of a normaliser's output that differs from its input:
// output bytes [out, out+outN) stand for input bytes [in, in+inN). outN is
// 0 where invisible characters were taken out.
type region struct {
	out, outN, in, inN int64
	flags              uint8
}

// normaliser turns text into the form the patterns are matched on a
// second time (see the package documentation): escape sequences decoded
// (JSON's, C's and Python's backslash escapes, URL percent-encoding, HTML
// character references), every character replaced by its NFKC form and
// the invisible characters (isInvisible) taken out. It is written in
// pieces and emits its output in pieces, as it goes; an escape or a
// character cut by the end of a piece waits for the next one, so the
// output does not depend on how the input was cut.
//
// It keeps the regions where output and input differ, so that a position
// of the output maps back to the input: a position inside a region maps
// to the region's start. Regions that touch are merged (unless exact is
// set), and the caller forgets those it will not ask about again.
type normaliser struct {
	emit func(seg []byte)
	// noRegions: the caller needs the text only (values to join).
	noRegions bool
	// exact: regions are not merged, so that a match maps to exactly the
	// input it was decoded from (what Private.String replaces).
	exact bool

	pend    []byte // input carried to the next write
	work    []byte // pend and the next piece, when pend is not empty
	inPos   int64  // input bytes written so far
	outPos  int64  // output bytes emitted so far
	out     []byte // output of the current piece, when it differs
	regions []region
	// baseDelta is in-out for positions before the first region kept.
	baseDelta int64
	rb        [maxNest + 1][]byte // escape results, one per nesting level
	rune4     [utf8.UTFMax]byte
}

// reset makes n ready for new input, keeping its buffers.
func (n *normaliser) reset() {
	n.pend, n.inPos, n.outPos, n.regions, n.baseDelta = n.pend[:0], 0, 0, n.regions[:0], 0
}

// write adds p to the input.
func (n *normaliser) write(p []byte) { n.feed(p, false) }

// close ends the input: what waited is decided.
func (n *normaliser) close() { n.feed(nil, true) }

func (n *normaliser) feed(p []byte, eof bool) {
	data := p
	at := n.inPos - int64(len(n.pend))
	if len(n.pend) > 0 {
		n.work = append(append(n.work[:0], n.pend...), p...)
		data = n.work
	}
	n.inPos += int64(len(p))
	done := n.process(data, at, eof)
	n.pend = append(n.pend[:0], data[done:]...)
}

// normSpecial marks the bytes where the output may differ from the input:
// the starts of escapes and of multi-byte UTF-8 characters.
var normSpecial = func() (t [256]bool) {
	t['\\'], t['%'], t['&'] = true, true, true
	for c := 0xC0; c < 0x100; c++ {
		t[c] = true
	}
	return t
}()

// hasNormSpecial reports whether s holds a byte where normalising may
// change something.
func hasNormSpecial(s string) bool {
	for i := 0; i < len(s); i++ {
		if normSpecial[s[i]] {
			return true
		}
	}
	return false
}

// process normalises data (input offset at) and emits the output of all
// but an undecided tail, whose length it returns the start of.
func (n *normaliser) process(data []byte, at int64, eof bool) int {
	out := n.out[:0]
	copied, i, end := 0, 0, len(data)
	changed := false
	for i < len(data) {
		if !normSpecial[data[i]] {
			i++
			continue
		}
		k, repl, flags, st := n.decodeAt(data, i, eof)
		if st == stMore {
			end = i
			break
		}
		if st == stPlain {
			i += k
			continue
		}
		out = append(out, data[copied:i]...)
		n.addRegion(n.outPos+int64(len(out)), int64(len(repl)), at+int64(i), int64(k), flags)
		out = append(out, repl...)
		changed = true
		i += k
		copied = i
	}
	seg := data[:end]
	if changed {
		out = append(out, data[copied:end]...)
		seg = out
		n.out = out
	}
	if len(seg) > 0 {
		n.outPos += int64(len(seg))
		n.emit(seg)
	}
	return end
}

// Outcomes of decoding at a position.
const (
	stPlain  = iota // the bytes stay as they are
	stChange        // they are replaced
	stMore          // the input ends before it can be decided
)

// decodeAt decides the special byte at data[i]: it returns how many bytes
// it covers and, when they change, their replacement.
func (n *normaliser) decodeAt(data []byte, i int, eof bool) (k int, repl []byte, flags uint8, st int) {
	c := data[i]
	if c >= 0xC0 {
		if !utf8.FullRune(data[i:]) {
			if !eof {
				return 0, nil, 0, stMore
			}
			return 1, nil, 0, stPlain
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return 1, nil, 0, stPlain
		}
		repl, flags, changed := n.mapRune(r, data[i:i+size], 0)
		if !changed {
			return size, nil, 0, stPlain
		}
		return size, repl, flags, stChange
	}
	k, repl, flags, st = n.escape(c, data[i+1:], eof, 0)
	if st != stChange {
		return 1, nil, 0, st
	}
	return 1 + k, repl, flags, stChange
}

// mapRune returns what character r (encoded as b) becomes: nothing when
// it is invisible, else its NFKC form; changed is false when that is b.
func (n *normaliser) mapRune(r rune, b []byte, level int) (repl []byte, flags uint8, changed bool) {
	if isInvisible(r) {
		return nil, flagInvisible, true
	}
	if r < utf8.RuneSelf || norm.NFKC.Properties(b).Decomposition() == nil {
		return b, 0, false
	}
	out := norm.NFKC.Append(n.rb[level][:0], b...)
	n.rb[level] = out
	if string(out) == string(b) {
		return b, 0, false
	}
	return out, flagNFKC, true
}

// escape decodes the escape that begins with c (a backslash, "%" or "&")
// and continues with rest. It returns the bytes of rest it covers and the
// decoded bytes; stPlain when c begins no escape; stMore when rest ends
// before that can be decided (and more input may follow). A decoded
// backslash, "%" or "&" may begin another escape with the bytes after it
// (an escaped escape), up to maxNest levels.
func (n *normaliser) escape(c byte, rest []byte, eof bool, level int) (k int, repl []byte, flags uint8, st int) {
	e, st := parseEscape(c, rest, eof)
	if st != stChange {
		return 0, nil, 0, st
	}
	k = e.k
	r := e.r
	if e.isByte {
		r = -1
		if e.b < utf8.RuneSelf {
			r = rune(e.b)
		} else if want := utf8Len(e.b); want > 1 {
			// A UTF-8 character spelled as escaped bytes: "\xef\xbd\x87",
			// "%EF%BD%87".
			var b [utf8.UTFMax]byte
			b[0] = e.b
			j, got := k, 1
			for got < want {
				if j >= len(rest) {
					if !eof {
						return 0, nil, 0, stMore
					}
					break
				}
				e2, st2 := parseEscape(rest[j], rest[j+1:], eof)
				if st2 == stMore {
					return 0, nil, 0, stMore
				}
				if st2 != stChange || !e2.isByte || e2.fam != e.fam || e2.b&0xC0 != 0x80 {
					break
				}
				b[got] = e2.b
				got++
				j += 1 + e2.k
			}
			if got == want {
				if rr, size := utf8.DecodeRune(b[:got]); size == got && rr != utf8.RuneError {
					r, k = rr, j
				}
			}
		}
	}
	flags = flagEscape
	if r < 0 {
		repl = append(n.rb[level][:0], e.b)
		n.rb[level] = repl
	} else {
		w := utf8.EncodeRune(n.rune4[:], r)
		var f uint8
		repl, f, _ = n.mapRune(r, n.rune4[:w], level)
		if len(repl) > 0 && &repl[0] == &n.rune4[0] {
			repl = append(n.rb[level][:0], repl...)
			n.rb[level] = repl
		}
		flags |= f
	}
	if len(repl) == 1 && level+1 < maxNest && (repl[0] == '\\' || repl[0] == '%' || repl[0] == '&') {
		k2, repl2, f2, st2 := n.escape(repl[0], rest[k:], eof, level+1)
		switch st2 {
		case stMore:
			return 0, nil, 0, stMore
		case stChange:
			return k + k2, repl2, flags | f2, stChange
		}
	}
	return k, repl, flags, stChange
}

// utf8Len returns the length of the UTF-8 sequence that lead byte b
// begins, 0 when b begins none.
func utf8Len(b byte) int {
	switch {
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 0
}

// escaped is one decoded escape: k bytes after its first, standing for a
// character r, or for a byte b (isByte) of family fam ('x', 'o' or '%':
// those that spell UTF-8 byte by byte).
type escaped struct {
	k      int
	r      rune
	b      byte
	isByte bool
	fam    byte
}

// parseEscape decodes one escape beginning with c and continuing with
// rest:
//
//	\" \\ \/ \' \n \r \t \b \f \v \a   JSON, C, Python
//	\uXXXX (UTF-16 surrogate pairs combined), \u{X…}, \UXXXXXXXX
//	\xHH, \NNN (octal)                 bytes
//	%HH (bytes), %uXXXX                URL
//	&#NNN; &#xHH; &name;               HTML (the named references of ASCII
//	                                   punctuation and the no-break space)
func parseEscape(c byte, rest []byte, eof bool) (escaped, int) {
	more := func() (escaped, int) {
		if eof {
			return escaped{}, stPlain
		}
		return escaped{}, stMore
	}
	if len(rest) == 0 {
		return more()
	}
	switch c {
	case '\\':
		switch d := rest[0]; d {
		case '"', '\\', '/', '\'':
			return escaped{k: 1, r: rune(d)}, stChange
		case 'n', 'r', 't', 'b', 'f', 'v', 'a':
			return escaped{k: 1, r: rune(controlEscape(d))}, stChange
		case 'x':
			v, st := hexDigits(rest[1:], 2, eof)
			if st != stChange {
				return escaped{}, st
			}
			return escaped{k: 3, b: byte(v), isByte: true, fam: 'x'}, stChange
		case 'u':
			if len(rest) < 2 {
				return more()
			}
			if rest[1] == '{' {
				return braceRune(rest, 2, eof)
			}
			v, st := hexDigits(rest[1:], 4, eof)
			if st != stChange {
				return escaped{}, st
			}
			switch {
			case 0xD800 <= v && v < 0xDC00:
				// A high surrogate: the low one must follow as \uXXXX.
				if len(rest) < 7 {
					return more()
				}
				if rest[5] != '\\' || rest[6] != 'u' {
					return escaped{}, stPlain
				}
				lo, st := hexDigits(rest[7:], 4, eof)
				if st != stChange {
					return escaped{}, st
				}
				if lo < 0xDC00 || lo > 0xDFFF {
					return escaped{}, stPlain
				}
				return escaped{k: 11, r: 0x10000 + (v-0xD800)<<10 + (lo - 0xDC00)}, stChange
			case 0xDC00 <= v && v <= 0xDFFF:
				return escaped{}, stPlain // a lone low surrogate stands for no character
			}
			return escaped{k: 5, r: v}, stChange
		case 'U':
			v, st := hexDigits(rest[1:], 8, eof)
			if st != stChange {
				return escaped{}, st
			}
			if !utf8.ValidRune(v) {
				return escaped{}, stPlain
			}
			return escaped{k: 9, r: v}, stChange
		}
		if '0' <= rest[0] && rest[0] <= '7' {
			v, j := 0, 0
			for j < 3 && j < len(rest) && '0' <= rest[j] && rest[j] <= '7' {
				v = v*8 + int(rest[j]-'0')
				j++
			}
			if j < 3 && j == len(rest) && !eof {
				return escaped{}, stMore
			}
			if v > 0xFF {
				return escaped{}, stPlain
			}
			return escaped{k: j, b: byte(v), isByte: true, fam: 'o'}, stChange
		}
	case '%':
		if rest[0] == 'u' {
			v, st := hexDigits(rest[1:], 4, eof)
			if st != stChange {
				return escaped{}, st
			}
			if !utf8.ValidRune(v) {
				return escaped{}, stPlain
			}
			return escaped{k: 5, r: v}, stChange
		}
		v, st := hexDigits(rest, 2, eof)
		if st != stChange {
			return escaped{}, st
		}
		return escaped{k: 2, b: byte(v), isByte: true, fam: '%'}, stChange
	case '&':
		if rest[0] == '#' {
			if len(rest) < 2 {
				return more()
			}
			base, j, maxDigits := rune(10), 1, 7
			if rest[1] == 'x' || rest[1] == 'X' {
				base, j, maxDigits = 16, 2, 6
			}
			var v rune
			d := 0
			for ; j < len(rest) && d <= maxDigits; j++ {
				x := hexVal(rest[j])
				if x < 0 || rune(x) >= base {
					break
				}
				v = v*base + rune(x)
				d++
			}
			if j == len(rest) && d <= maxDigits {
				return more()
			}
			if d == 0 || d > maxDigits || rest[j] != ';' || !utf8.ValidRune(v) {
				return escaped{}, stPlain
			}
			return escaped{k: j + 1, r: v}, stChange
		}
		j := 0
		for j < len(rest) && j <= maxEntityName && isAlnum(rest[j]) {
			j++
		}
		if j == len(rest) && j <= maxEntityName {
			return more()
		}
		if j == 0 || j > maxEntityName || rest[j] != ';' {
			return escaped{}, stPlain
		}
		r, ok := namedEntity(string(rest[:j]))
		if !ok {
			return escaped{}, stPlain
		}
		return escaped{k: j + 1, r: r}, stChange
	}
	return escaped{}, stPlain
}

// controlEscape returns the control character of a C escape letter.
func controlEscape(d byte) byte {
	switch d {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'v':
		return '\v'
	}
	return '\a'
}

// braceRune decodes the "\u{X…}" escape whose hex digits start at rest[j].
func braceRune(rest []byte, j int, eof bool) (escaped, int) {
	var v rune
	d := 0
	for ; j < len(rest) && d <= 6; j++ {
		x := hexVal(rest[j])
		if x < 0 {
			break
		}
		v = v<<4 | rune(x)
		d++
	}
	if j == len(rest) && d <= 6 {
		if eof {
			return escaped{}, stPlain
		}
		return escaped{}, stMore
	}
	if d == 0 || d > 6 || rest[j] != '}' || !utf8.ValidRune(v) {
		return escaped{}, stPlain
	}
	return escaped{k: j + 1, r: v}, stChange
}

// hexDigits reads exactly n hex digits from b.
func hexDigits(b []byte, n int, eof bool) (rune, int) {
	var v rune
	for j := range n {
		if j >= len(b) {
			if eof {
				return 0, stPlain
			}
			return 0, stMore
		}
		x := hexVal(b[j])
		if x < 0 {
			return 0, stPlain
		}
		v = v<<4 | rune(x)
	}
	return v, stChange
}

// hexVal returns the value of hex digit c, or -1.
func hexVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// maxEntityName is the longest named character reference namedEntity
// knows.
const maxEntityName = 8

// namedEntity returns the character of an HTML named character reference
// of ASCII punctuation (and of the no-break space).
func namedEntity(name string) (rune, bool) {
	r, ok := map[string]rune{
		"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "sol": '/', "bsol": '\\',
		"lowbar": '_', "UnderBar": '_', "colon": ':', "period": '.', "equals": '=', "semi": ';',
		"comma": ',', "excl": '!', "num": '#', "dollar": '$', "percnt": '%', "plus": '+', "quest": '?',
		"commat": '@', "lpar": '(', "rpar": ')', "lsqb": '[', "rsqb": ']', "lcub": '{', "rcub": '}',
		"verbar": '|', "ast": '*', "Hat": '^', "grave": '`', "tilde": '~', "dash": '-', "hyphen": '-',
		"nbsp": 0xA0, "Tab": '\t', "NewLine": '\n',
	}[name]
	return r, ok
}

// addRegion records that output [out, out+outN) stands for input
// [in, in+inN).
func (n *normaliser) addRegion(out, outN, in, inN int64, flags uint8) {
	if n.noRegions {
		return
	}
	if k := len(n.regions); k > 0 && !n.exact {
		r := &n.regions[k-1]
		if r.out+r.outN == out && r.in+r.inN == in {
			r.outN += outN
			r.inN += inN
			r.flags |= flags
			return
		}
	}
	n.regions = append(n.regions, region{out: out, outN: outN, in: in, inN: inN, flags: flags})
}

// toIn maps output offset x to the input: the start of the region it is
// in, else the same distance from the regions before.
func (n *normaliser) toIn(x int64) int64 {
	k := sort.Search(len(n.regions), func(k int) bool { return n.regions[k].out > x })
	if k == 0 {
		return x + n.baseDelta
	}
	r := n.regions[k-1]
	if x < r.out+r.outN {
		return r.in
	}
	return x + r.in + r.inN - r.out - r.outN
}

// toInEnd maps the output offset x that ends a range: the end of the
// region that holds the byte before it.
func (n *normaliser) toInEnd(x int64) int64 {
	if x <= 0 {
		return n.toIn(x)
	}
	k := sort.Search(len(n.regions), func(k int) bool { return n.regions[k].out > x-1 })
	if k > 0 {
		if r := n.regions[k-1]; x-1 < r.out+r.outN {
			return r.in + r.inN
		}
	}
	return n.toIn(x-1) + 1
}

// forget drops the regions that end before output offset x: no position
// before x is asked about any more.
func (n *normaliser) forget(x int64) {
	k := 0
	for k < len(n.regions) && n.regions[k].out < x && n.regions[k].out+n.regions[k].outN <= x {
		k++
	}
	if k == 0 {
		return
	}
	r := n.regions[k-1]
	n.baseDelta = r.in + r.inN - r.out - r.outN
	n.regions = append(n.regions[:0], n.regions[k:]...)
}

// affected reports whether a match at output [p, p+m) depends on what
// the normaliser changed, and what that was: a region with output lies
// in the bytes the match's rule may look at ([p-lookbehind, p+m+1)); a
// removal (no output) lies strictly inside the match, between two of its
// bytes. Any other match is one of the input as it is.
func (n *normaliser) affected(p, m int64) (bool, uint8) {
	lo := sort.Search(len(n.regions), func(k int) bool {
		r := n.regions[k]
		return r.out+r.outN >= p-lookbehind
	})
	hit, flags := false, uint8(0)
	for k := lo; k < len(n.regions) && n.regions[k].out <= p+m; k++ {
		r := n.regions[k]
		if r.outN == 0 {
			if p < r.out && r.out < p+m {
				hit, flags = true, flags|r.flags
			}
			continue
		}
		if r.out < p+m+1 && r.out+r.outN > p-lookbehind {
			hit, flags = true, flags|r.flags
		}
	}
	return hit, flags
}

// windows appends to buf the output positions [a, b) where a match may
// depend on a region that lies in [from-lookbehind-1, to+reach): from
// reach bytes before each region to lookbehind bytes after it.
func (n *normaliser) windows(from, to int64, reach int, buf [][2]int64) [][2]int64 {
	lo := sort.Search(len(n.regions), func(k int) bool {
		r := n.regions[k]
		return r.out+r.outN+lookbehind+1 > from
	})
	for k := lo; k < len(n.regions); k++ {
		r := n.regions[k]
		a := r.out - int64(reach)
		if a >= to {
			break
		}
		buf = append(buf, [2]int64{a, r.out + r.outN + lookbehind + 1})
	}
	return buf
}
