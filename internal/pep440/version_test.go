package pep440

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// normalizeTests maps accepted spellings to their normalised form.
var normalizeTests = []struct {
	in, want string
}{
	// Canonical forms are kept.
	{"0", "0"},
	{"1.0", "1.0"},
	{"1.0.0.0.0", "1.0.0.0.0"},
	{"2024.11.30", "2024.11.30"},
	{"3!4.5a6.post7.dev8+x.9", "3!4.5a6.post7.dev8+x.9"},
	{"1.0.post0.dev0", "1.0.post0.dev0"},

	// Case, leading "v" and surrounding white space.
	{"V1.0-ALPHA_1", "1.0a1"},
	{"v2.3", "2.3"},
	{"1.1RC1", "1.1rc1"},
	{"1.0.Post2.DEV3", "1.0.post2.dev3"},
	{"  1.0\t\n", "1.0"},
	{"\v\f1.0\r ", "1.0"},
	{"\u00a01.0\u2029", "1.0"}, // Unicode white space, as the reference implementation

	// Integers are read by value.
	{"01.02", "1.2"},
	{"1.0a05", "1.0a5"},
	{"1.0.post007", "1.0.post7"},
	{"1.0.dev0900", "1.0.dev900"},
	{"000!1", "1"},
	{"0!2.0", "2.0"},
	{"007!1", "7!1"},
	{"1.000000000000000000000000000000000000001", "1.1"},
	{"18446744073709551616.99999999999999999999999", "18446744073709551616.99999999999999999999999"},

	// Pre-release spellings and separators.
	{"1.0a", "1.0a0"},
	{"1.0.a.1", "1.0a1"},
	{"1.0-a-1", "1.0a1"},
	{"1.0_a_1", "1.0a1"},
	{"1.0alpha2", "1.0a2"},
	{"1.0-beta-2", "1.0b2"},
	{"1.0B", "1.0b0"},
	{"1.0c", "1.0rc0"},
	{"1.0_c_3", "1.0rc3"},
	{"1.0pre4", "1.0rc4"},
	{"1.0-preview", "1.0rc0"},
	{"1.0.RC5", "1.0rc5"},
	{"1.0rc", "1.0rc0"},

	// Post-release spellings, separators and the implicit form.
	{"1.0-1", "1.0.post1"},
	{"1.0-0", "1.0.post0"},
	{"1.0b2-3", "1.0b2.post3"},
	{"1.0post", "1.0.post0"},
	{"1.0.post", "1.0.post0"},
	{"1.0_post_3", "1.0.post3"},
	{"1.0.post-7", "1.0.post7"},
	{"1.0-r", "1.0.post0"},
	{"1.0r4", "1.0.post4"},
	{"1.0.rev2", "1.0.post2"},
	{"1.0-REV", "1.0.post0"},

	// Development release spellings.
	{"1.0dev", "1.0.dev0"},
	{"1.0-dev", "1.0.dev0"},
	{"1.0_dev_9", "1.0.dev9"},
	{"1.0.dev-1", "1.0.dev1"},
	{"1.0-dev-1", "1.0.dev1"},

	// Combinations.
	{"1.0a1-2", "1.0a1.post2"},
	{"1.0b2.post3-dev4", "1.0b2.post3.dev4"},
	{"1.0RC1.POST.DEV", "1.0rc1.post0.dev0"},
	{"1.0a.post1", "1.0a0.post1"},
	// A separator that may precede a number may also be left dangling, as
	// in the specification's regular expression.
	{"1.0a-", "1.0a0"},
	{"1.0.post.", "1.0.post0"},
	{"1.0.dev_", "1.0.dev0"},
	{"1.0a-dev", "1.0a0.dev0"},

	// Local labels.
	{"1.0+ubuntu-1", "1.0+ubuntu.1"},
	{"1.0+Ubuntu_01.Foo", "1.0+ubuntu.1.foo"},
	{"1.0+abc0100", "1.0+abc0100"},
	{"1.0+0100", "1.0+100"},
	{"1.0+000", "1.0+0"},
	{"v1.0+LOCAL", "1.0+local"},
	{"1.0.dev1+g1234abc.d20240101", "1.0.dev1+g1234abc.d20240101"},
	{"1!1+1", "1!1+1"},
}

func TestParseNormalize(t *testing.T) {
	for _, tt := range normalizeTests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.in, err)
			}
			if got := v.String(); got != tt.want {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// The normalised form is a fixed point.
			w, err := Parse(tt.want)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.want, err)
			}
			if got := w.String(); got != tt.want {
				t.Errorf("Parse(%q) = %q, want %q", tt.want, got, tt.want)
			}
			if c := v.Compare(w); c != 0 {
				t.Errorf("Parse(%q).Compare(Parse(%q)) = %d, want 0", tt.in, tt.want, c)
			}
		})
	}
}

// invalidVersionTests lists strings that are not versions, with the offset
// of the reported problem and a word the hint should contain.
var invalidVersionTests = []struct {
	in     string
	offset int
	hint   string
}{
	{"", 0, "release"},
	{"   ", 3, "release"},
	{"v", 1, "release"},
	{"vv1.0", 1, "release"},
	{"french toast", 0, "release"},
	{"-1.0", 0, "release"},
	{"+1.0", 0, "release"},
	{".1", 0, "release"},
	{"١.٠", 0, "release"}, // non-ASCII digits
	{"!1.0", 0, "release"},
	{"1!", 2, "release"},
	{"1!2!3", 3, "valid versions"},
	{"1.", 1, "valid versions"},
	{"1..0", 1, "valid versions"},
	{"1.0.", 3, "valid versions"},
	{"1.0-", 3, "1.0-1"},
	{"1.0a1-", 5, "1.0-1"},
	{"1.0--1", 3, "valid versions"},
	{"1.0x", 3, "valid versions"},
	{"1.0ab", 4, "valid versions"},
	{"1.0a1a2", 5, "valid versions"},
	{"1.0.post1.post2", 9, "valid versions"},
	{"1.0.dev1.post1", 8, "valid versions"},
	{"1.0.dev1a1", 8, "valid versions"},
	{"1.0-alpha.beta", 10, "valid versions"},
	{"1 .0", 1, "white space"},
	{"1. 0", 1, "white space"},
	{"1.0 a1", 3, "white space"},
	{"1.0a 1", 4, "white space"},
	{" 1.0 a1 ", 4, "white space"},
	{"1.0.*", 3, ".*"},
	{"1.*", 1, ".*"},
	{"1.0+", 4, "local"},
	{"1.0++", 4, "local"},
	{"1.0+a+", 5, "local"},
	{"1.0+_x", 4, "local"},
	{"1.0+x_", 5, "local"},
	{"1.0+x..y", 5, "local"},
	{"1.0+x&y", 5, "local"},
	{"1.0+\u0130", 4, "local"},    // only ASCII letters
	{"1.0+\u212a", 4, "local"},    // KELVIN SIGN folds to k, but is not ASCII
	{"1.0po\u017ft1", 3, "valid"}, // LATIN SMALL LETTER LONG S folds to s
	{"1.0\x00", 3, "valid"},
	{"1.0\xff", 3, "valid"},
}

func TestParseInvalid(t *testing.T) {
	for _, tt := range invalidVersionTests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, v)
			}
			var ive *InvalidVersionError
			if !errors.As(err, &ive) {
				t.Fatalf("Parse(%q) error %T, want *InvalidVersionError", tt.in, err)
			}
			if ive.Input != tt.in {
				t.Errorf("Parse(%q) error Input = %q", tt.in, ive.Input)
			}
			if ive.Offset != tt.offset {
				t.Errorf("Parse(%q) error Offset = %d, want %d (%v)", tt.in, ive.Offset, tt.offset, err)
			}
			if ive.Reason == "" || !strings.Contains(ive.Hint, tt.hint) {
				t.Errorf("Parse(%q) error = %v, want a reason and a hint mentioning %q", tt.in, err, tt.hint)
			}
			if !strings.Contains(err.Error(), ive.Reason) {
				t.Errorf("Parse(%q) Error() = %q, does not contain the reason", tt.in, err)
			}
		})
	}
}

// orderedVersions is in strictly ascending PEP 440 order.
var orderedVersions = []string{
	"0.dev0",
	"0a0",
	"0",
	"0.1",
	"0.9.9.post1",
	"1.0.dev0",
	"1.0.dev2",
	"1.0.dev10",
	"1.0.dev10+local",
	"1.0a0.dev0",
	"1.0a0",
	"1.0a0.post0.dev0",
	"1.0a0.post0",
	"1.0a1",
	"1.0a1+1",
	"1.0a2.dev3",
	"1.0a2",
	"1.0a10",
	"1.0b0",
	"1.0b1.post1",
	"1.0rc1.dev0",
	"1.0rc1",
	"1.0rc2",
	"1.0",
	"1.0+abc",
	"1.0+abc.2",
	"1.0+abc.10",
	"1.0+abd",
	"1.0+1",
	"1.0+1.a",
	"1.0+1.0",
	"1.0+2",
	"1.0+10",
	"1.0.post0.dev0",
	"1.0.post0",
	"1.0.post1.dev5",
	"1.0.post1",
	"1.0.post1+x",
	"1.0.post10",
	"1.0.0.1.dev0",
	"1.0.0.1",
	"1.0.1a1",
	"1.0.1",
	"1.1",
	"1.10",
	"2",
	"2.0.0.1",
	"18446744073709551615",
	"18446744073709551616",
	"100000000000000000000000000000",
	"1!0.dev0",
	"1!1.0",
	"2!0",
	"18446744073709551616!0",
}

func TestCompareOrder(t *testing.T) {
	parsed := make([]Version, len(orderedVersions))
	for i, s := range orderedVersions {
		v, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) error: %v", s, err)
		}
		if v.String() != s {
			t.Fatalf("Parse(%q) = %q, want %q (table must be normalised)", s, v, s)
		}
		parsed[i] = v
	}
	for i := range parsed {
		for j := range parsed {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := parsed[i].Compare(parsed[j]); got != want {
				t.Errorf("Parse(%q).Compare(Parse(%q)) = %d, want %d", orderedVersions[i], orderedVersions[j], got, want)
			}
		}
	}
	for seed := range uint64(20) {
		t.Run("shuffle", func(t *testing.T) {
			shuffled := slices.Clone(parsed)
			r := rand.New(rand.NewPCG(seed, 440))
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			slices.SortFunc(shuffled, Version.Compare)
			got := make([]string, len(shuffled))
			for i, v := range shuffled {
				got[i] = v.String()
			}
			if !slices.Equal(got, orderedVersions) {
				t.Errorf("sorted(shuffle %d) = %q, want %q", seed, got, orderedVersions)
			}
		})
	}
}

// compareTests checks pairs whose spellings differ.
var compareTests = []struct {
	a, b string
	want int
}{
	{"1.0", "1.0.0", 0},
	{"1", "1.0.0.0.0", 0},
	{"1.0rc1", "1.0c1", 0},
	{"1.0rc1", "1.0pre1", 0},
	{"v1.0", "1.0", 0},
	{"0!1.0", "1.0", 0},
	{"1.0-1", "1.0.post1", 0},
	{"1.0+ABC", "1.0+abc", 0},
	{"1.0+01", "1.0+1", 0},
	{"1.0+a-b_c", "1.0+a.b.c", 0},
	{"1.0+abc0100", "1.0+abc100", -1}, // alphanumeric segments compare as text
	{"1.0+1", "1.0+1.0", -1},
	{"1.0.0+1", "1.0+1", 0},
	{"1.0a1", "1.0.0a1", 0},
	{"1.0a1", "1.0.0.1a1", -1},
	{"1.0.post1", "1.0.0.post1", 0},
	{"1.0.dev1", "1.0.0.dev1", 0},
	{"99999999999999999999999", "99999999999999999999998", 1},
	{"1.99999999999999999999", "1.100000000000000000000", -1},
	{"1.0a18446744073709551616", "1.0a18446744073709551615", 1},
	{"1.0.post18446744073709551616", "1.0.post18446744073709551617", -1},
	{"1.0.dev99999999999999999999", "1.0.dev100000000000000000000", -1},
	{"1!0", "99999999999999999999999", 1},
	{"1.0.post1.dev1", "1.0.post1", -1},
	{"1.0.post1.dev1", "1.0", 1},
	{"1.0a1.dev1", "1.0a1", -1},
	{"1.0a1.dev1", "1.0a0", 1},
	{"1.0.dev1", "1.0a0.dev0", -1},
	{"1.0a1.post1", "1.0a2", -1},
}

func TestCompare(t *testing.T) {
	for _, tt := range compareTests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			a, err := Parse(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := Parse(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Compare(b); got != tt.want {
				t.Errorf("Parse(%q).Compare(Parse(%q)) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := b.Compare(a); got != -tt.want {
				t.Errorf("Parse(%q).Compare(Parse(%q)) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
		})
	}
}

// partsTests checks the accessors on one version each.
var partsTests = []struct {
	in                  string
	pre                 bool
	public, base, local string
}{
	{"1.0", false, "1.0", "1.0", ""},
	{"1.0a1", true, "1.0a1", "1.0", ""},
	{"1.0b2.post3", true, "1.0b2.post3", "1.0", ""},
	{"1.0rc1.dev2", true, "1.0rc1.dev2", "1.0", ""},
	{"1.0.dev0", true, "1.0.dev0", "1.0", ""},
	{"1.0.post1", false, "1.0.post1", "1.0", ""},
	{"1.0.post1.dev1", true, "1.0.post1.dev1", "1.0", ""},
	{"1!2.0rc1.post3+Ubuntu-1", true, "1!2.0rc1.post3", "1!2.0", "ubuntu.1"},
	{"2.0+local", false, "2.0", "2.0", "local"},
}

func TestParts(t *testing.T) {
	for _, tt := range partsTests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.IsPrerelease(); got != tt.pre {
				t.Errorf("Parse(%q).IsPrerelease() = %v, want %v", tt.in, got, tt.pre)
			}
			if got := v.Public().String(); got != tt.public {
				t.Errorf("Parse(%q).Public() = %q, want %q", tt.in, got, tt.public)
			}
			if got := v.Base().String(); got != tt.base {
				t.Errorf("Parse(%q).Base() = %q, want %q", tt.in, got, tt.base)
			}
			if got := v.Local(); got != tt.local {
				t.Errorf("Parse(%q).Local() = %q, want %q", tt.in, got, tt.local)
			}
			if got := v.String(); got != tt.public && tt.local == "" {
				t.Errorf("Parse(%q) = %q, want %q", tt.in, got, tt.public)
			}
		})
	}
}

func TestZeroVersion(t *testing.T) {
	var zero Version
	if got := zero.String(); got != "0" {
		t.Errorf("Version{}.String() = %q, want %q", got, "0")
	}
	v, err := Parse("0.0")
	if err != nil {
		t.Fatal(err)
	}
	if c := zero.Compare(v); c != 0 {
		t.Errorf("Version{}.Compare(Parse(%q)) = %d, want 0", "0.0", c)
	}
}

func TestIncr(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "1"}, {"0", "1"}, {"8", "9"}, {"9", "10"}, {"199", "200"}, {"99999999999999999999", "100000000000000000000"},
	} {
		if got := incr(tt.in); got != tt.want {
			t.Errorf("incr(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
