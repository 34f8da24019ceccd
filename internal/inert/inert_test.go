package inert

import (
	"bytes"
	"strings"
	"testing"
)

var cases = []struct {
	in, want string
}{
	{"plain text, tabs\tand\nnewlines", "plain text, tabs\tand\nnewlines"},
	{"é ü 日本 ✓", "é ü 日本 ✓"},
	{"denied\x1b[1A\x1b[2K\x1b[32mpublished", `denied\x1b[1A\x1b[2K\x1b[32mpublished`},
	{"overwrite\rpublished", `overwrite\rpublished`},
	{"bell\a del\x7f nul\x00", `bell\x07 del\x7f nul\x00`},
	{"c1 csi \u009b2K", `c1 csi \u009b2K`},
	{"bidi \u202eevil\u202c isolate \u2066x\u2069", `bidi \u202eevil\u202c isolate \u2066x\u2069`},
	{"separators \u2028 \u2029", `separators \u2028 \u2029`},
	{"bad utf-8 \xff\xc3", `bad utf-8 \xff\xc3`},
	{`a backslash \x1b stays`, `a backslash \x1b stays`},
}

func TestEscape(t *testing.T) {
	for _, c := range cases {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWriter writes each case in pieces of every size: the result is
// Escape's, a character split between writes included.
func TestWriter(t *testing.T) {
	for _, c := range cases {
		for size := 1; size <= len(c.in); size++ {
			var b bytes.Buffer
			w := NewWriter(&b)
			for i := 0; i < len(c.in); i += size {
				if n, err := w.Write([]byte(c.in[i:min(i+size, len(c.in))])); err != nil || n != min(size, len(c.in)-i) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want {
				t.Errorf("%q in writes of %d: %q, want %q", c.in, size, b.String(), c.want)
			}
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Escape(s)
		for _, r := range out {
			if escapes(r) {
				t.Fatalf("Escape(%q) = %q keeps %U", s, out, r)
			}
		}
		if strings.ContainsRune(out, 0xfffd) && !strings.ContainsRune(s, 0xfffd) {
			t.Fatalf("Escape(%q) = %q invents U+FFFD", s, out)
		}
	})
}
