package pyname

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// nameTests gives the normalised and wheel-escaped forms of valid names.
var nameTests = []struct {
	in, normalized, wheel string
}{
	{"a", "a", "a"},
	{"Z", "z", "z"},
	{"7", "7", "7"},
	{"requests", "requests", "requests"},
	{"Foo.Bar-baz", "foo-bar-baz", "foo_bar_baz"},
	{"friendly-bard", "friendly-bard", "friendly_bard"},
	{"Friendly-Bard", "friendly-bard", "friendly_bard"},
	{"FRIENDLY-BARD", "friendly-bard", "friendly_bard"},
	{"friendly.bard", "friendly-bard", "friendly_bard"},
	{"friendly_bard", "friendly-bard", "friendly_bard"},
	{"friendly--bard", "friendly-bard", "friendly_bard"},
	{"FrIeNdLy-._.-bArD", "friendly-bard", "friendly_bard"},
	{"zope.interface", "zope-interface", "zope_interface"},
	{"typing_extensions", "typing-extensions", "typing_extensions"},
	{"a1.2b", "a1-2b", "a1_2b"},
	{"1-2-3", "1-2-3", "1_2_3"},
	{"mkrelease", "mkrelease", "mkrelease"},
}

func TestNormalize(t *testing.T) {
	for _, tt := range nameTests {
		t.Run(tt.in, func(t *testing.T) {
			if err := Valid(tt.in); err != nil {
				t.Errorf("Valid(%q) = %v, want nil", tt.in, err)
			}
			if got := Normalize(tt.in); got != tt.normalized {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.normalized)
			}
			if got := WheelEscape(tt.in); got != tt.wheel {
				t.Errorf("WheelEscape(%q) = %q, want %q", tt.in, got, tt.wheel)
			}
			if !Equal(tt.in, tt.normalized) || !Equal(tt.wheel, tt.in) {
				t.Errorf("Equal(%q, %q/%q) = false, want true", tt.in, tt.normalized, tt.wheel)
			}
		})
	}
}

// equalTests checks Equal on pairs.
var equalTests = []struct {
	a, b string
	want bool
}{
	{"Django", "django", true},
	{"zope.interface", "Zope_Interface", true},
	{"a-b", "a__b", true},
	{"a-b", "ab", false},
	{"a-b", "a-b-", false},
	{"pip", "pipx", false},
	{"", "", true},
	{"É", "é", false}, // only ASCII letters are folded
}

func TestEqual(t *testing.T) {
	for _, tt := range equalTests {
		t.Run(tt.a+"="+tt.b, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// invalidNameTests gives invalid names with the offending offset and
// character, and text the hint should contain.
var invalidNameTests = []struct {
	in     string
	offset int
	char   rune
	hint   string
}{
	{"", -1, 0, `"my-project"`},
	{"-", 0, '-', "start and end"},
	{"_foo", 0, '_', `did you mean "foo"?`},
	{".foo", 0, '.', `"foo"`},
	{"foo-", 3, '-', `did you mean "foo"?`},
	{"foo.", 3, '.', `"foo"`},
	{"foo bar", 3, ' ', `did you mean "foo-bar"?`},
	{"My Package", 2, ' ', `did you mean "My-Package"?`},
	{"foo/bar", 3, '/', `"foo-bar"`},
	{"foo+bar", 3, '+', `"foo-bar"`},
	{"foo@1.0", 3, '@', `"foo-1.0"`},
	{"a!b", 1, '!', `"a-b"`},
	{"foo\tbar", 3, '\t', `"foo-bar"`},
	{" foo", 0, ' ', `"foo"`},
	{"foo ", 3, ' ', `"foo"`},
	{"café", 3, 'é', "ASCII"},
	{"naïve-pkg", 2, 'ï', "ASCII"},
	{"foo\xffbar", 3, utf8.RuneError, "ASCII"},
	{"a-\u0130", 2, '\u0130', "ASCII"},
	{"\u212a", 0, '\u212a', "ASCII"}, // KELVIN SIGN is not the letter K
}

func TestValidInvalid(t *testing.T) {
	for _, tt := range invalidNameTests {
		t.Run(tt.in, func(t *testing.T) {
			err := Valid(tt.in)
			if err == nil {
				t.Fatalf("Valid(%q) = nil, want error", tt.in)
			}
			var ine *InvalidNameError
			if !errors.As(err, &ine) {
				t.Fatalf("Valid(%q) error %T, want *InvalidNameError", tt.in, err)
			}
			if ine.Name != tt.in || ine.Offset != tt.offset || ine.Char != tt.char {
				t.Errorf("Valid(%q) = {Name: %q, Offset: %d, Char: %q}, want {%q, %d, %q}",
					tt.in, ine.Name, ine.Offset, ine.Char, tt.in, tt.offset, tt.char)
			}
			if !strings.Contains(ine.Hint, tt.hint) {
				t.Errorf("Valid(%q) hint = %q, want it to contain %q", tt.in, ine.Hint, tt.hint)
			}
			if !strings.Contains(err.Error(), ine.Reason) || ine.Reason == "" {
				t.Errorf("Valid(%q) Error() = %q, missing reason", tt.in, err)
			}
		})
	}
}

// validByRule is the specification's rule written independently.
func validByRule(name string) bool {
	alnum := func(c byte) bool { return strings.IndexByte(asciiAlnum, c) >= 0 }
	if name == "" || !alnum(name[0]) || !alnum(name[len(name)-1]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !alnum(name[i]) && strings.IndexByte("._-", name[i]) < 0 {
			return false
		}
	}
	return true
}

const asciiAlnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func FuzzName(f *testing.F) {
	for _, tt := range nameTests {
		f.Add(tt.in)
	}
	for _, tt := range invalidNameTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := Valid(name)
		if (err == nil) != validByRule(name) {
			t.Fatalf("Valid(%q) = %v, but the rule says valid=%v", name, err, validByRule(name))
		}
		n := Normalize(name)
		if Normalize(n) != n {
			t.Fatalf("Normalize(Normalize(%q)) = %q, want %q", name, Normalize(n), n)
		}
		if strings.Contains(n, "--") || strings.ContainsAny(n, "._ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("Normalize(%q) = %q is not normalised", name, n)
		}
		w := WheelEscape(name)
		if w != strings.ReplaceAll(n, "-", "_") || strings.Contains(w, "-") {
			t.Fatalf("WheelEscape(%q) = %q, Normalize = %q", name, w, n)
		}
		if !Equal(name, n) || !Equal(w, name) {
			t.Fatalf("Equal(%q, %q/%q) = false", name, n, w)
		}
		if err == nil {
			if Valid(n) != nil || Valid(w) != nil {
				t.Fatalf("Valid(%q) ok but normalised %q or escaped %q is not", name, n, w)
			}
			return
		}
		var ine *InvalidNameError
		if !errors.As(err, &ine) {
			t.Fatalf("Valid(%q) error %T, want *InvalidNameError", name, err)
		}
		if name != "" && (ine.Offset < 0 || ine.Offset >= len(name)) {
			t.Fatalf("Valid(%q) Offset = %d out of range", name, ine.Offset)
		}
		if s, ok := strings.CutPrefix(ine.Hint, rule+`; did you mean "`); ok {
			if s = strings.TrimSuffix(s, `"?`); !validByRule(s) {
				t.Fatalf("Valid(%q) suggests %q, which is invalid", name, s)
			}
		}
	})
}
