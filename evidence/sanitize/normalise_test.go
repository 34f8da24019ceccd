package sanitize

import (
	"strings"
	"testing"
)

// normaliseCases are inputs and what the normaliser makes of them.
var normaliseCases = []struct{ in, want string }{
	{"", ""},
	{"plain ascii text / 50% & co", "plain ascii text / 50% & co"},
	// JSON, C and Python escapes.
	{`a\"b\\c\/d\'e`, `a"b\c/d'e`},
	{`x\ny\rz\tw\bv\fu\vt\as`, "x\ny\rz\tw\bv\fu\vt\as"},
	{`\u0067hp_ \u00e9 \u20AC`, "ghp_ é €"},
	{`\ud83d\ude00 and a lone \ud83d here \ude00`, "😀 and a lone \\ud83d here \\ude00"},
	{`\u{1F600} \u{67} \U0001F600 \U00000067`, "😀 g 😀 g"},
	{`\x67\x68\x70 \xef\xbd\x87 \147\150\160 \303\251`, "ghp g ghp é"}, // \xef\xbd\x87 is fullwidth g, NFKC g
	{`\q \x \xZZ \u12 \U1234 \8`, `\q \x \xZZ \u12 \U1234 \8`},
	// Escaped escapes, as JSON writes a string holding an escape: a
	// decoded backslash begins an escape with the bytes after it. Twice
	// escaped, the backslashes decode one level at a time.
	{`\\u0067 \\/ \\\\u0067`, `g / \u0067`},
	{`%255C%2575%2530%2530%2536%2537`, `\u0067`}, // two levels of percent then stops: \u0067 was three
	// URL percent-encoding.
	{"%2Fhome%2Falice %E2%80%8B %zz %4", "/home/alice  %zz %4"},
	{"%u0067hp", "ghp"},
	// HTML character references.
	{"&#103;&#x68;&#X70;&lowbar; &amp;#47; &sol; &bogus; &#; &#xZZ;", "ghp_ / / &bogus; &#; &#xZZ;"},
	// NFKC.
	{"ｇｈｐ＿ ﬁle ½ ①\u00a0x ＼ｕ", "ghp_ file 1⁄2 1 x \\u"},
	// Invisible characters out.
	{"g\u200bh\u00adp\u2060_\ufeff \u202ex\u202c \U000E0041y", "ghp_ x y"},
	{`g\u200bhp`, "ghp"},
	// A cut character or escape at the end stays as it is.
	{"\xe2\x80 \\u00", "\xe2\x80 \\u00"},
	{"bad \xff\xfe utf-8 \xc3", "bad \xff\xfe utf-8 \xc3"},
}

func TestNormaliser(t *testing.T) {
	for _, c := range normaliseCases {
		if got := normalised(c.in); got != c.want {
			t.Errorf("normalised(%q) = %q, want %q", c.in, got, c.want)
		}
		// Written a byte at a time, the same.
		var out []byte
		n := normaliser{emit: func(seg []byte) { out = append(out, seg...) }}
		for i := range len(c.in) {
			n.write([]byte{c.in[i]})
		}
		n.close()
		if string(out) != c.want {
			t.Errorf("normalised(%q) a byte at a time = %q, want %q", c.in, out, c.want)
		}
	}
}

// Output offsets map back to the input: exactly outside what changed, to
// the start of a changed region inside it.
func TestNormaliserOffsets(t *testing.T) {
	in := `ab\u0063d\u200bef ｇh`
	var out []byte
	n := normaliser{exact: true}
	n.emit = func(seg []byte) { out = append(out, seg...) }
	n.write([]byte(in))
	n.close()
	if string(out) != "abcdef gh" {
		t.Fatalf("normalised = %q", out)
	}
	for x, want := range map[int64]int64{0: 0, 1: 1, 2: 2, 3: 8, 4: 15, 5: 16, 6: 17, 7: 18, 8: 21} {
		if got := n.toIn(x); got != want {
			t.Errorf("toIn(%d) = %d, want %d", x, got, want)
		}
	}
	if got := n.toInEnd(3); got != 8 {
		t.Errorf("toInEnd(3) = %d, want 8 (after the escape)", got)
	}
}

// A match depends on a change in the bytes its pattern looks at (8
// before, its own, 1 after), on a removal only between two of its bytes.
func TestNormaliserAffected(t *testing.T) {
	for _, c := range []struct {
		in   string
		p, m int64
		want bool
	}{
		{"0123456789\u200bABCDEFGHIJ", 9, 2, true},   // "9A": the removal inside
		{"0123456789\u200bABCDEFGHIJ", 10, 2, false}, // "AB": the removal before
		{"0123456789\u200bABCDEFGHIJ", 5, 5, false},  // "56789": the removal after
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 10, 2, true},
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 12, 2, true},  // the escape 2 bytes before
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 18, 2, true},  // 8 bytes before
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 19, 2, false}, // 9 bytes before
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 8, 2, true},   // the byte after
		{`0123456789\u0041BCDEFGHIJKLMNOP`, 7, 2, false},
	} {
		n := normaliser{emit: func([]byte) {}}
		n.write([]byte(c.in))
		n.close()
		if got, _ := n.affected(c.p, c.m); got != c.want {
			t.Errorf("%q: affected(%d, %d) = %v, want %v", c.in, c.p, c.m, got, c.want)
		}
	}
}

// Normalising ASCII text without escapes copies nothing.
func TestNormaliserPassesTextThrough(t *testing.T) {
	in := []byte(strings.Repeat("plain evidence text, no escapes. ", 100))
	var got []byte
	n := normaliser{emit: func(seg []byte) { got = seg }}
	n.write(in)
	if &got[0] != &in[0] || len(n.regions) != 0 {
		t.Error("the text was copied or regions were recorded")
	}
}
