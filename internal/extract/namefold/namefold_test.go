package namefold

import (
	"testing"
	"unicode/utf8"
)

var pairs = []struct {
	a, b      string
	nfc, fold bool // NFC(a) == NFC(b), Fold(a) == Fold(b)
}{
	{"a", "a", true, true},
	{"a", "b", false, false},
	{"Makefile", "makefile", false, true},
	{"pkg/README", "pkg/readme", false, true},
	{"caf\u00e9", "cafe\u0301", true, true},            // precomposed é, e + combining acute
	{"CAF\u00c9", "cafe\u0301", false, true},           // É vs decomposed é
	{"\u212a", "k", false, true},                       // Kelvin sign
	{"\u212a", "K", true, true},                        // Kelvin sign is canonically K
	{"\u017f", "s", false, true},                       // long s
	{"\u00c5", "\u212b", true, true},                   // Å and the angstrom sign
	{"a;b", "a\u037eb", true, true},                    // Greek question mark is canonically ";"
	{"\u00df", "ss", false, false},                     // ß: full folding only, file systems keep it apart
	{"\u0130", "i", false, false},                      // İ has no simple fold to i
	{"\xff", "\xfe", false, false},                     // not UTF-8: bytes kept
	{"a\xff", "A\xff", false, true},                    // not UTF-8, but the ASCII part folds
	{"\u1e9b\u0323", "\u017f\u0323\u0307", true, true}, // ẛ̣ in two orders of combining marks
	{"d\u0307\u0323", "d\u0323\u0307", true, true},     // combining marks reordered canonically
	{"\u03a3", "\u03c2", false, true},                  // Σ and final sigma share an orbit
	{"dir/\u00e9/f", "dir/e\u0301/f", true, true},      // inside a path
	{"\u2126", "\u03c9", false, true},                  // ohm sign: canonically Ω, folds with ω
	{"\ufb01", "fi", false, false},                     // the fi ligature is only compatibility-equal
	{"\uff21", "A", false, false},                      // fullwidth A: compatibility only
	{"x\u0000", "x", false, false},                     // NUL is a byte like any other here
	{"\u00e9\xff", "e\u0301\xff", true, true},          // invalid byte after a composed pair
	{"\u1100\u1161", "\uac00", true, true},             // Hangul jamo compose to a syllable
	{"\u0041\u030a", "\u00e5", false, true},            // A + ring above vs å
	{"I", "\u0131", false, false},                      // dotless ı is not in I's simple orbit
	{"\u01c5", "\u01c4", false, true},                  // titlecase Dž and DŽ
	{"\u1e9e", "\u00df", false, true},                  // capital sharp s folds to ß
	{"\U00010400", "\U00010428", false, true},          // Deseret, outside the BMP
}

func TestPairs(t *testing.T) {
	for _, p := range pairs {
		if got := NFC(p.a) == NFC(p.b); got != p.nfc {
			t.Errorf("NFC(%+q) == NFC(%+q) is %v, want %v", p.a, p.b, got, p.nfc)
		}
		if got := Fold(p.a) == Fold(p.b); got != p.fold {
			t.Errorf("Fold(%+q) == Fold(%+q) is %v (%+q, %+q), want %v", p.a, p.b, got, Fold(p.a), Fold(p.b), p.fold)
		}
	}
}

// FuzzFold checks the properties the callers rely on: NFC-equal names
// are Fold-equal, folding is idempotent, and ASCII folds to ASCII.
func FuzzFold(f *testing.F) {
	for _, p := range pairs {
		f.Add(p.a, p.b)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if NFC(a) == NFC(b) && Fold(a) != Fold(b) {
			t.Errorf("NFC(%+q) == NFC(%+q) but Fold differs: %+q, %+q", a, b, Fold(a), Fold(b))
		}
		if a == b && (NFC(a) != NFC(b) || Fold(a) != Fold(b)) {
			t.Errorf("equal names with different keys: %+q", a)
		}
		if k := Fold(a); Fold(k) != k {
			t.Errorf("Fold(%+q) = %+q, not a fixed point (Fold of it %+q)", a, k, Fold(k))
		}
		if isASCII(a) && !isASCII(Fold(a)) {
			t.Errorf("Fold(%+q) = %+q is not ASCII", a, Fold(a))
		}
		if utf8.ValidString(a) && !utf8.ValidString(Fold(a)) {
			t.Errorf("Fold(%+q) = %+q is not valid UTF-8", a, Fold(a))
		}
	})
}
