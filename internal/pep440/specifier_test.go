package pep440

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// specifierStringTests maps accepted specifier sets to their normalised form.
var specifierStringTests = []struct {
	in, want string
}{
	{"", ""},
	{" \t ", ""},
	{">=1.0", ">=1.0"},
	{">= 1.0 , < 2", ">=1.0,<2"},
	{"~= 0.9, >= 1.0, != 1.3.4.*, < 2.0", "~=0.9,>=1.0,!=1.3.4.*,<2.0"},
	{"~=1.4.5a4", "~=1.4.5a4"},
	{"~=2.2.post3", "~=2.2.post3"},
	{"~=1!1.0", "~=1!1.0"},
	{"== 01.0.*", "==1.0.*"},
	{"!=v1.0.*", "!=1.0.*"},
	{"==1!2.*", "==1!2.*"},
	{"==1.0+Ubuntu-1", "==1.0+ubuntu.1"},
	{"!=1.0+abc.01", "!=1.0+abc.1"},
	{">1.0POST1", ">1.0.post1"},
	{"<=2!1.0", "<=2!1.0"},
	{"<V1.0-ALPHA_1", "<1.0a1"},
	{">1.0-1", ">1.0.post1"},
	{"\t==1.0\n,\n!=1.0.1 ", "==1.0,!=1.0.1"},
	{"===FooBar", "===FooBar"},
	{"=== 1.0+Local", "===1.0+Local"},
	{"====1", "===" + "=1"}, // "===" takes any text
	{"<2,>=1", "<2,>=1"},    // order is kept
}

func TestParseSpecifiersString(t *testing.T) {
	for _, tt := range specifierStringTests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSpecifiers(tt.in)
			if err != nil {
				t.Fatalf("ParseSpecifiers(%q) error: %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Errorf("ParseSpecifiers(%q) = %q, want %q", tt.in, got, tt.want)
			}
			s2, err := ParseSpecifiers(tt.want)
			if err != nil {
				t.Fatalf("ParseSpecifiers(%q) error: %v", tt.want, err)
			}
			if got := s2.String(); got != tt.want {
				t.Errorf("ParseSpecifiers(%q) = %q, want %q", tt.want, got, tt.want)
			}
		})
	}
}

// invalidSpecifierTests lists invalid specifier sets, the clause that should
// be blamed and a word the reason or hint should contain.
var invalidSpecifierTests = []struct {
	in, clause, mention string
}{
	{"~=1", "~=1", "~=1.0"},
	{"~=1!2", "~=1!2", "two release numbers"},
	{"==1.0.*+local", "==1.0.*+local", "*"},
	{"!=1.0.*+deadbeef", "!=1.0.*+deadbeef", "*"},
	{"<1.0.*", "<1.0.*", `"<1.0"`},
	{">1.0.*", ">1.0.*", "prefix"},
	{"<=1.0.*", "<=1.0.*", "prefix"},
	{">=1.0.*", ">=1.0.*", `">=1.0"`},
	{"~=1.0.*", "~=1.0.*", "prefix"},
	{"==1.0.*.5", "==1.0.*.5", "*"},
	{"==1.*.*", "==1.*.*", "trailing"},
	{"==*", "==*", "*"},
	{"==.*", "==.*", "release"},
	{"==1.0a1.*", "==1.0a1.*", `"==1.0.*"`},
	{"!=1.0.post1.*", "!=1.0.post1.*", "prefix"},
	{"==1.0.dev1.*", "==1.0.dev1.*", "prefix"},
	{"==1.0+abc.*", "==1.0+abc.*", "prefix"},
	{">=1.0+local", ">=1.0+local", `">=1.0"`},
	{"<=1.0+local", "<=1.0+local", "local"},
	{"~=1.0+local", "~=1.0+local", "local"},
	{">1.0+x", ">1.0+x", "local"},
	{"<1.0+x", "<1.0+x", "local"},
	{"1.0", "1.0", `"==1.0"`},
	{"=>1.0", "=>1.0", `">=1.0"`},
	{"=<1.0", "=<1.0", `"<=1.0"`},
	{"=1.0", "=1.0", `"==1.0"`},
	{"<>1.0", "<>1.0", "invalid version"},
	{"lolwat", "lolwat", "operator"},
	{"==", "==", "missing version"},
	{">= ", ">=", "missing version"},
	{"===", "===", "missing version"},
	{"~=", "~=", "missing version"},
	{"== 1.0 .*", "== 1.0 .*", "white space"},
	{"==1. 0", "==1. 0", "white space"},
	{">=1.0,", "", "empty clause"},
	{",>=1.0", "", "empty clause"},
	{">=1.0,,<2", "", "empty clause"},
	{">=1.0, <2, lolwat", "lolwat", "operator"},
	{">=lolwat", ">=lolwat", "invalid version"},
	{">=1.0-", ">=1.0-", "1.0-1"},
	{"===foo;bar", "===foo;bar", ";"},
	{"===foo)", "===foo)", ")"},
	{"(>=1.0)", "(>=1.0)", "operator"},
}

func TestParseSpecifiersInvalid(t *testing.T) {
	for _, tt := range invalidSpecifierTests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseSpecifiers(tt.in)
			if err == nil {
				t.Fatalf("ParseSpecifiers(%q) = %q, want error", tt.in, s)
			}
			var ise *InvalidSpecifierError
			if !errors.As(err, &ise) {
				t.Fatalf("ParseSpecifiers(%q) error %T, want *InvalidSpecifierError", tt.in, err)
			}
			if ise.Input != tt.in {
				t.Errorf("ParseSpecifiers(%q) error Input = %q", tt.in, ise.Input)
			}
			if ise.Clause != tt.clause {
				t.Errorf("ParseSpecifiers(%q) error Clause = %q, want %q", tt.in, ise.Clause, tt.clause)
			}
			if text := ise.Reason + " " + ise.Hint; !strings.Contains(text, tt.mention) {
				t.Errorf("ParseSpecifiers(%q) error = %v, want it to mention %q", tt.in, err, tt.mention)
			}
			if ise.Err != nil {
				var ive *InvalidVersionError
				if !errors.As(err, &ive) {
					t.Errorf("ParseSpecifiers(%q) error does not unwrap to *InvalidVersionError", tt.in)
				}
			}
		})
	}
}

// containsTests checks membership; pre is the allowPre argument.
var containsTests = []struct {
	spec, version string
	pre, want     bool
}{
	// The specification's version matching examples for 1.1.post1, 1.1a1
	// and 1.1.
	{"==1.1", "1.1.post1", false, false},
	{"==1.1.post1", "1.1.post1", false, true},
	{"==1.1.*", "1.1.post1", false, true},
	{"==1.1", "1.1a1", true, false},
	{"==1.1a1", "1.1a1", false, true},
	{"==1.1.*", "1.1a1", true, true},
	{"==1.1.*", "1.1a1", false, false},
	{"==1.1", "1.1", false, true},
	{"==1.1.0", "1.1", false, true},
	{"==1.1.dev1", "1.1", false, false},
	{"==1.1a1", "1.1", false, false},
	{"==1.1.post1", "1.1", false, false},
	{"==1.1.*", "1.1", false, true},
	{"!=1.1", "1.1.post1", false, true},
	{"!=1.1.post1", "1.1.post1", false, false},
	{"!=1.1.*", "1.1.post1", false, false},

	// Prefix matching pads the release with zeros and ignores suffixes.
	{"==2.*", "2", false, true},
	{"==2.0.0.*", "2", false, true},
	{"==2.0.*", "2.0.0.0", false, true},
	{"==2.0.*", "2.1", false, false},
	{"==2.0.*", "2.1.0.0", false, false},
	{"==2.*", "2c1.post1.dev1", true, true},
	{"==2.*", "2+local", false, true},
	{"==2.*", "20", false, false},
	{"==2.*", "1!2", false, false},
	{"==1!2.*", "1!2.5", false, true},
	{"!=2.0.*", "2.1", false, true},
	{"!=2.*", "2.dev1", true, false},
	{"!=3.*", "2.0", false, true},

	// Local labels: a public version in the clause ignores them, a local
	// one requires an exact (normalised) match.
	{"==1.0", "1.0+local", false, true},
	{"==1.0+local", "1.0", false, false},
	{"==1.0+local", "1.0.0+local", false, true},
	{"==1.0+Local", "1.0+local", false, true},
	{"==1.0+abc.00", "1.0+abc.0", false, true},
	{"==1.0+local", "1.0+local.1", false, false},
	{"!=1.0", "1.0+local", false, false},
	{"!=1.0+local", "1.0", false, true},
	{"!=1.0+local", "1.0+local", false, false},
	{">=1.0", "1.0+local", false, true},
	{"<=1.0", "1.0+local", false, true},
	{">1.0", "1.0+local", false, false},
	{"<1.0", "1.0+local", false, false},
	{"<1.0.post1", "1.0+local", false, true},
	{">1.0", "1.0.1+local", false, true},

	// Inclusive ordered comparison.
	{">=2", "2.0", false, true},
	{">=2", "2.0.post1", false, true},
	{">=2", "2.0rc1", true, false},
	{">=3.0a7", "3.0a8", false, true},
	{"<=2", "2.0a1", true, true},
	{"<=2", "2.0.post1", false, false},
	{"<=2!0.1", "1.0", false, true},
	{">=2.0", "2!1.0", false, true},

	// Exclusive ordered comparison: the specification's examples.
	{">1.7", "1.7.1", false, true},
	{">1.7", "1.7.0.post1", false, false},
	{">1.7.post2", "1.7.1", false, true},
	{">1.7.post2", "1.7.0.post3", false, true},
	{">1.7.post2", "1.7.0", false, false},
	{">1.7.post2", "1.7.post2+local", false, false},
	{">1.7.post2", "1.7.post3.dev0", true, true},
	// >V excludes post-releases and local versions of V only.
	{">2", "2.0.post1.dev1", true, false},
	{">2", "2.1.post1", false, true},
	{">2", "2.0", false, false},
	{">2", "3", false, true},
	{">1.0a1", "1.0a1.post0", true, false},
	{">1.0a1", "1.0a1+local", true, false},
	{">1.0a1", "1.0a2.post0", true, true},
	{">1.0a1", "1.0.post0", false, true},
	{">1.0a1", "1.0", false, true},
	{">1.0.dev1", "1.0.dev1+local", true, false},
	{">1.0.dev1", "1.0.dev2", true, true},
	{">1.0.dev1", "1.0.post0", false, true},
	{">1.0.dev1", "1.0.dev0", true, false},
	{">1.0.post1.dev1", "1.0.post1.dev1+x", true, false},
	{">1.0.post1.dev1", "1.0.post1", false, true},
	{">2.0dev", "2.0.5", false, true},
	// <V excludes pre-releases of V unless V is one.
	{"<2", "2.0a1", true, false},
	{"<2", "2.0.dev0", true, false},
	{"<2", "1.9", false, true},
	{"<2", "1.9a1", true, true},
	{"<2", "1.9a1", false, false},
	{"<2", "2.post1", false, false},
	{"<2.0rc1", "2.0a1", false, true},
	{"<2.0rc1", "2.0rc1.dev0", false, true},
	{"<2.0rc1", "2.0rc1", false, false},
	{"<1.0.post1", "1.0.post1.dev0", true, false},
	{"<1.0.post1", "1.0.post0.dev0", true, true},
	{"<1.0.post1", "1.0a1", true, true},
	{"<1.0.post1", "1.0", false, true},
	{"<1.0.dev5", "1.0.dev4", false, true},
	{"<2!0.1", "1.0", false, true},

	// Compatible release.
	{"~=2.2", "2.2", false, true},
	{"~=2.2", "2.9.9", false, true},
	{"~=2.2", "2.1", false, false},
	{"~=2.2", "3.0", false, false},
	{"~=2.2", "3.0.dev0", true, false},
	{"~=2.2", "2.2+local", false, true},
	{"~=1.4.5", "1.4.5", false, true},
	{"~=1.4.5", "1.4.99", false, true},
	{"~=1.4.5", "1.5.0", false, false},
	{"~=1.4.5", "1.4.4", false, false},
	{"~=2.2.post3", "2.2.post3", false, true},
	{"~=2.2.post3", "2.2", false, false},
	{"~=2.2.post3", "2.9", false, true},
	{"~=2.2.post3", "3", false, false},
	{"~=1.4.5a4", "1.4.5a4", false, true},
	{"~=1.4.5a4", "1.4.5a3", false, false},
	{"~=1.4.5a4", "1.4.5", false, true},
	{"~=1.4.5a4", "1.4.6b1", false, true}, // the clause names a pre-release
	{"~=1.4.5a4", "1.5", false, false},
	{"~=2.2.0", "2.2.9", false, true},
	{"~=2.2.0", "2.3", false, false},
	{"~=1.0", "1", false, true},
	{"~=2022.01.01", "2022.1.1", false, true},
	{"~=2!1.0", "2!1.5", false, true},
	{"~=2!1.0", "1.5", false, false},
	{"~=1.0", "2!1.5", false, false},

	// Epochs.
	{"==1.0", "1!1.0", false, false},
	{"!=1.0", "1!1.0", false, true},
	{">=1.0", "1!0.1", false, true},
	{"<2!0", "1!99", false, true},
	{"==1!1.*", "1.5", false, false},

	// Arbitrary equality compares the normalised text, ignoring case.
	{"===1.0", "1.0", false, true},
	{"===1.0", "1.0.0", false, false},
	{"===1.0", "1.0+local", false, false},
	{"===1.0+LOCAL", "1.0+local", false, true},
	{"===1.0A1", "1.0a1", false, true},
	{"===01.0", "01.0", false, false},
	{"===1.0", "v1.0", false, true},
	{"===foobar", "1.0", false, false},

	// Pre-release handling.
	{"", "1.0", false, true},
	{"", "1.0a1", false, false},
	{"", "1.0a1", true, true},
	{">=1.0", "2.0a1", false, false},
	{">=1.0", "2.0a1", true, true},
	{">=1.0", "1.1.dev1", false, false},
	{">=1.0", "1.1.post1.dev1", false, false},
	{">=1.0", "1.1.post1", false, true},
	{">=1.0a1", "2.0a1", false, true},
	{">=1.0.dev0", "1.0.dev0", false, true},
	{"==1.0.*", "1.0.dev1", false, false},
	{"!=1.0a1", "2.0b1", false, false},
	{"!=1.0a1", "2.0b1", true, true},
	{">=1.0, <2.0a1", "1.5b1", false, true},
	{">=1.0, !=1.5a1", "1.6a1", false, false},
	{"<1.0.dev1", "0.9.dev1", false, true},

	// Sets.
	{">=1.0,<2.0", "1.5", false, true},
	{">=1.0,<2.0", "2.0", false, false},
	{">=1.0,<2.0", "0.9", false, false},
	{">= 1.0, != 1.3.4.*, < 2.0", "1.3.4", false, false},
	{">= 1.0, != 1.3.4.*, < 2.0", "1.3.4.1", false, false},
	{">= 1.0, != 1.3.4.*, < 2.0", "1.3.5", false, true},
	{">= 1.0, != 1.3.4.*, < 2.0", "1.3.40", false, true},
	{">= 1.0, != 1.3.4.*, < 2.0", "0.9.5", false, false},
	{"~=0.9, >=1.0", "0.9.5", false, false}, // ~=0.9 is ==0.*, so this set is empty
	{"~=0.9, >=1.0", "1.0", false, false},
	{"~=3.1.0, != 3.1.3", "3.1.3", false, false},
	{"~=3.1.0, != 3.1.3", "3.1.4", false, true},
	{"~=3.1.0, != 3.1.3", "3.2.0", false, false},
	{">=2,<1", "1.5", true, false},

	// Numbers beyond 64 bits.
	{">=18446744073709551616", "18446744073709551617", false, true},
	{"<18446744073709551616", "18446744073709551617", false, false},
	{"~=99999999999999999999.9", "99999999999999999999.10", false, true},
	{"~=99999999999999999999.9", "100000000000000000000.0", false, false},
	{">1.dev99999999999999999999", "1.dev100000000000000000000", true, true},
	{">1.dev99999999999999999999", "1.dev99999999999999999999+x", true, false},
	{">1.post99999999999999999999", "1.post99999999999999999999+x", false, false},
	{">1.post99999999999999999999", "1.post100000000000000000000", false, true},
	{"==18446744073709551616.*", "18446744073709551616.5", false, true},
}

func TestContains(t *testing.T) {
	for _, tt := range containsTests {
		t.Run(fmt.Sprintf("%s/%s/%v", tt.spec, tt.version, tt.pre), func(t *testing.T) {
			s, err := ParseSpecifiers(tt.spec)
			if err != nil {
				t.Fatalf("ParseSpecifiers(%q) error: %v", tt.spec, err)
			}
			v, err := Parse(tt.version)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.version, err)
			}
			if got := s.Contains(v, tt.pre); got != tt.want {
				t.Errorf("ParseSpecifiers(%q).Contains(%q, %v) = %v, want %v", tt.spec, tt.version, tt.pre, got, tt.want)
			}
		})
	}
}
