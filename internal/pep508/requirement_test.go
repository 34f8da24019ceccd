package pep508

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// requirementStringTests maps valid dependency specifiers to their
// canonical form.
var requirementStringTests = []struct {
	in, want string
}{
	// The specification's examples and its test program's inputs.
	{`requests [security,tests] >= 2.8.1, == 2.8.* ; python_version < "2.7"`, `requests[security,tests]>=2.8.1,==2.8.*; python_version < "2.7"`},
	{"pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686", "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee9982d4bbb3c72346a6de940a148ea686"},
	{"A", "A"},
	{"A.B-C_D", "A.B-C_D"},
	{"aa", "aa"},
	{"name<=1", "name<=1"},
	{"name>=3", "name>=3"},
	{"name>=3,", "name>=3"},
	{"name>=3,<2", "name>=3,<2"},
	{"name@http://foo.com", "name @ http://foo.com"},
	{"name [fred,bar] @ http://foo.com ; python_version=='2.7'", `name[bar,fred] @ http://foo.com ; python_version == "2.7"`},
	{"name[quux, strange];python_version<'2.7' and platform_version=='2'", `name[quux,strange]; python_version < "2.7" and platform_version == "2"`},
	{"name; os_name=='a' or os_name=='b'", `name; os_name == "a" or os_name == "b"`},
	{"name; os_name=='a' and os_name=='b' or os_name=='c'", `name; os_name == "a" and os_name == "b" or os_name == "c"`},
	{"name; os_name=='a' and (os_name=='b' or os_name=='c')", `name; os_name == "a" and (os_name == "b" or os_name == "c")`},
	{"name; os_name=='a' or os_name=='b' and os_name=='c'", `name; os_name == "a" or os_name == "b" and os_name == "c"`},
	{"name; (os_name=='a' or os_name=='b') and os_name=='c'", `name; (os_name == "a" or os_name == "b") and os_name == "c"`},
	{"pip ~= 23.1", "pip~=23.1"},
	{"resolvelib > 0.5, != 0.6.0", "resolvelib>0.5,!=0.6.0"},
	// White space.
	{" \tname\t ", "name"},
	{"name ;os_name=='a'", `name; os_name == "a"`},
	{"name\t>=\t1.0\t,\t<2\t;\tos_name\t==\t'a'\t", `name>=1.0,<2; os_name == "a"`},
	{"name [ a , b ] >=1", "name[a,b]>=1"},
	// Extras: normalised, sorted, without duplicates; "[]" is no extras.
	{"name[]", "name"},
	{"name[ ]>=1", "name>=1"},
	{"name[Foo_Bar,foo.bar,BAZ]", "name[baz,foo-bar]"},
	{"Name_With.Dots[X]", "Name_With.Dots[x]"},
	// Versions: parenthesised, trailing commas, normalised by pep440.
	{"name (>=1.0)", "name>=1.0"},
	{"name( >= 1.0 , < 2 , )", "name>=1.0,<2"},
	{"name(==1.0);os_name=='a'", `name==1.0; os_name == "a"`},
	{"name==1.0.*", "name==1.0.*"},
	{"name!=1.0+Local-1", "name!=1.0+local.1"},
	{"name===foo", "name===foo"},
	{"name===1.0+X", "name===1.0+X"},
	{"name~=1.0a1", "name~=1.0a1"},
	{"name>=V1.0-ALPHA_1", "name>=1.0a1"},
	{"name==1!2.0", "name==1!2.0"},
	// URLs.
	{"name @ file:///tmp/name-1.0.tar.gz", "name @ file:///tmp/name-1.0.tar.gz"},
	{"name @ ./relative/path", "name @ ./relative/path"},
	{"name[x]@ https://example.com/a%20b.whl ;extra=='Y'", `name[x] @ https://example.com/a%20b.whl ; extra == "y"`},
	{"name @ https://example.com/a;b", "name @ https://example.com/a;b"},
	{"name @ https://example.com/a; ; os_name=='a'", `name @ https://example.com/a; ; os_name == "a"`},
	{"name @ git+https://example.com/repo.git@v1.0#egg=name", "name @ git+https://example.com/repo.git@v1.0#egg=name"},
	// Markers.
	{`name; extra == "Foo_Bar"`, `name; extra == "foo-bar"`},
	{`name; "Foo.Bar" == extra`, `name; "foo-bar" == extra`},
	{`name; "3.9" <= python_version`, `name; "3.9" <= python_version`},
	{`name; os.name == "posix" and sys.platform == "linux"`, `name; os_name == "posix" and sys_platform == "linux"`},
	{`name; platform.machine == "x86_64" or platform.version == "1"`, `name; platform_machine == "x86_64" or platform_version == "1"`},
	{`name; python_implementation == "CPython"`, `name; platform_python_implementation == "CPython"`},
	{`name; platform.python_implementation == "CPython"`, `name; platform_python_implementation == "CPython"`},
	{`name; os_name == 'say "hi"'`, `name; os_name == 'say "hi"'`},
	{`name; os_name == "it's"`, `name; os_name == "it's"`},
	{`name; platform_version == "#1 SMP (x) [y]; a,b @c"`, `name; platform_version == "#1 SMP (x) [y]; a,b @c"`},
	{`name; os_name == ""`, `name; os_name == ""`},
	{`name; os_name == "  spaced  "`, `name; os_name == "  spaced  "`},
	{`name; os_name == "ünï"`, `name; os_name == "ünï"`},
	{`name; "SMP" in platform_version`, `name; "SMP" in platform_version`},
	{`name; "SMP"in platform_version`, `name; "SMP" in platform_version`},
	{`name; "x" not   in os_name`, `name; "x" not in os_name`},
	{`name; "x" not	in os_name`, `name; "x" not in os_name`},
	{`name; python_version==='3.8'`, `name; python_version === "3.8"`},
	{`name; os_name=="a"and os_name=="b"`, `name; os_name == "a" and os_name == "b"`},
	{`name; (os_name=="a")or(os_name=="b")`, `name; os_name == "a" or os_name == "b"`},
	{`name; ((((os_name=="a"))))`, `name; os_name == "a"`},
	{`name; (os_name=="a" and (os_name=="b" and os_name=="c")) and os_name=="d"`, `name; os_name == "a" and os_name == "b" and os_name == "c" and os_name == "d"`},
	{`name; (os_name=="a" or os_name=="b") or (os_name=="c" or os_name=="d")`, `name; os_name == "a" or os_name == "b" or os_name == "c" or os_name == "d"`},
	{`name; os_name=="a" and (os_name=="b" or (os_name=="c" and os_name=="d"))`, `name; os_name == "a" and (os_name == "b" or os_name == "c" and os_name == "d")`},
}

func TestParseRequirementString(t *testing.T) {
	for _, tt := range requirementStringTests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRequirement(tt.in)
			if err != nil {
				t.Fatalf("ParseRequirement(%q) error: %v", tt.in, err)
			}
			if got := r.String(); got != tt.want {
				t.Errorf("ParseRequirement(%q) = %q, want %q", tt.in, got, tt.want)
			}
			r2, err := ParseRequirement(tt.want)
			if err != nil {
				t.Fatalf("ParseRequirement(%q) error: %v", tt.want, err)
			}
			if got := r2.String(); got != tt.want {
				t.Errorf("ParseRequirement(%q) = %q, want %q", tt.want, got, tt.want)
			}
		})
	}
}

// requirementFieldTests checks the parts of parsed requirements.
var requirementFieldTests = []struct {
	in        string
	name      string
	extras    []string
	specifier string
	url       string
	marker    string
}{
	{"Requests[Security, tests] (>=2.8.1,==2.8.*); python_version<'2.7'", "Requests", []string{"security", "tests"}, ">=2.8.1,==2.8.*", "", `python_version < "2.7"`},
	{"name", "name", nil, "", "", ""},
	{"name[]", "name", nil, "", "", ""},
	{"name[b,a,B]", "name", []string{"a", "b"}, "", "", ""},
	{"name @ https://x.example/n.whl ; os_name == 'nt'", "name", nil, "", "https://x.example/n.whl", `os_name == "nt"`},
	{"name@https://x.example/n.whl", "name", nil, "", "https://x.example/n.whl", ""},
	{"name;os_name=='nt'", "name", nil, "", "", `os_name == "nt"`},
}

func TestParseRequirementFields(t *testing.T) {
	for _, tt := range requirementFieldTests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRequirement(tt.in)
			if err != nil {
				t.Fatalf("ParseRequirement(%q) error: %v", tt.in, err)
			}
			if r.Name != tt.name {
				t.Errorf("ParseRequirement(%q).Name = %q, want %q", tt.in, r.Name, tt.name)
			}
			if !slices.Equal(r.Extras, tt.extras) {
				t.Errorf("ParseRequirement(%q).Extras = %q, want %q", tt.in, r.Extras, tt.extras)
			}
			if got := r.Specifier.String(); got != tt.specifier {
				t.Errorf("ParseRequirement(%q).Specifier = %q, want %q", tt.in, got, tt.specifier)
			}
			if r.URL != tt.url {
				t.Errorf("ParseRequirement(%q).URL = %q, want %q", tt.in, r.URL, tt.url)
			}
			if (r.Marker == nil) != (tt.marker == "") {
				t.Errorf("ParseRequirement(%q).Marker = %v, want %q", tt.in, r.Marker, tt.marker)
			}
			if got := r.Marker.String(); got != tt.marker {
				t.Errorf("ParseRequirement(%q).Marker = %q, want %q", tt.in, got, tt.marker)
			}
		})
	}
}

// invalidRequirementTests lists invalid dependency specifiers, the byte
// offset the error should point at and a word its reason or hint should
// contain.
var invalidRequirementTests = []struct {
	in     string
	offset int
	word   string
}{
	{"", 0, "project name"},
	{"   ", 3, "project name"},
	{">=1.0", 0, "project name"},
	{"-name", 0, "starts with"},
	{"name-", 4, "ends with"},
	{"name_ >=1", 4, "ends with"},
	{"naïve", 2, "unexpected"},
	{"name 1.0", 5, `"==1.0"`},
	{"name=1.0", 4, `"=="`},
	{"name==", 6, "missing version"},
	{"name>=1.0x", 9, "invalid version"},
	{"name>=1.0.*", 4, "prefix matching"},
	{"name~=1", 4, "two release numbers"},
	{"name<1.0+local", 4, "local version"},
	{"name>=1,,", 8, "version clause"},
	{"name>=1,<", 9, "missing version"},
	{"name>=1 <2", 8, "unexpected"},
	{"name>=1 , x", 10, "version clause"},
	{"name (>=1", 9, "close the '('"},
	{"name ()", 6, "empty parentheses"},
	{"name (>=1))", 10, "unexpected"},
	{"name>=1.0 # comment", 10, "comments"},
	{"name\n", 4, "single line"},
	{"name>=1\r\n", 7, "single line"},
	{"name\u00a0>=1", 4, "spaces and tabs"},
	{"name[", 5, "extra name"},
	{"name[a", 6, "missing ']'"},
	{"name[a,]", 7, "trailing comma"},
	{"name[a b]", 7, "missing ','"},
	{"name[a-]", 6, "ends with"},
	{"name[a;b]", 6, "unexpected"},
	{"name[a]]", 7, "unexpected"},
	{"name @", 6, "URL"},
	{"name @ ", 7, "URL"},
	{"name @ ;os_name=='a'", 7, "followed by an environment marker"},
	{"name @ https://x y", 17, "expected ';'"},
	{"name @ https://x/y.whl;python_version<'3'", 37, "white space before"},
	{"name @ https://x/y.whl;sys_platform=='win32'", 22, "white space before"},
	{`name @ https://x/"y"`, 17, "not allowed in a URL"},
	{"name @ https://x/é", 17, "not allowed in a URL"},
	{"name @ https://x/%zz", 17, "two hexadecimal digits"},
	{"name @ https://x/%2", 17, "two hexadecimal digits"},
	{"name>=1.0 @ https://x", 10, "either a version specifier or a URL"},
	{"name @ https://x >=1.0", 17, "expected ';'"},
	{"name;", 5, "marker variable"},
	{"name; ", 6, "marker variable"},
	{"name; os_name", 13, "comparison operator"},
	{"name; os_name ==", 16, "marker variable or a quoted string"},
	{"name; os_name = 'a'", 14, `"=="`},
	{"name; os_name is 'a'", 14, `"is"`},
	{"name; os_name == posix", 17, "quote it"},
	{"name; python_version >= 3.8", 24, `"3.8"`},
	{"name; python_versoin >= '3.8'", 6, "python_version"},
	{"name; implementation == 'cpython'", 6, "unknown marker variable"},
	{"name; 'a' in extras", 13, "lock files"},
	{"name; 'dev' in dependency_groups", 15, "lock files"},
	{"name; os_name == 'a", 17, "unterminated"},
	{`name; os_name == "a\"b"`, 19, "backslash"},
	{"name; os_name == 'a\tb'x", 22, "expected \"and\""},
	{"name; os_name == 'a\nb'", 19, "line break"},
	{"name; os_name == 'a\x01b'", 19, "control character"},
	{"name; os_name == 'a\xffb'", 19, "UTF-8"},
	{"name; os_name == 'a'x", 20, "expected \"and\""},
	{"name; os_name == 'a' andos_name == 'b'", 21, "expected \"and\""},
	{"name; os_name == 'a' and", 24, "marker variable"},
	{"name; os_name == 'a' or or", 24, "marker variable"},
	{"name; os_name notin 'a'", 14, "comparison operator"},
	{"name; os_name not 'a'", 18, `"in" after "not"`},
	{"name; os_name not", 17, `"in" after "not"`},
	{"name; 'a' == 'b'", 6, "two quoted strings"},
	{"name; os_name == sys_platform", 6, "two marker variables"},
	{"name; '3.4' < python_version < '3.9'", 29, "chained"},
	{"name; (os_name == 'a'", 21, "close the '('"},
	{"name; (os_name == 'a' os_name", 22, "close the '('"},
	{"name; os_name == 'a')", 20, "no matching '('"},
	{"name; ()", 7, "marker variable"},
	{"name; os_name == 'a' # comment", 21, "comments"},
	{"name; " + strings.Repeat("(", 65) + "os_name == 'a'" + strings.Repeat(")", 65), 6 + 64, "nested"},
	{"name; and == 'a'", 6, "marker variable"},
}

func TestParseRequirementInvalid(t *testing.T) {
	for _, tt := range invalidRequirementTests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRequirement(tt.in)
			if err == nil {
				t.Fatalf("ParseRequirement(%q) = %q, want an error", tt.in, r.String())
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseRequirement(%q) error %T, want *ParseError", tt.in, err)
			}
			if pe.Input != tt.in {
				t.Errorf("ParseRequirement(%q) error Input = %q", tt.in, pe.Input)
			}
			if pe.Offset != tt.offset {
				t.Errorf("ParseRequirement(%q) error Offset = %d, want %d (%v)", tt.in, pe.Offset, tt.offset, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.word) {
				t.Errorf("ParseRequirement(%q) error = %q, want it to mention %q", tt.in, msg, tt.word)
			}
			if !strings.Contains(err.Error(), "dependency specifier") {
				t.Errorf("ParseRequirement(%q) error = %q, want it to say what was parsed", tt.in, err)
			}
		})
	}
}

func TestParseRequirementUnwrap(t *testing.T) {
	_, err := ParseRequirement("name>=1.0x")
	var ve *pep440.InvalidVersionError
	if !errors.As(err, &ve) || ve.Input != "1.0x" {
		t.Errorf("ParseRequirement(%q) error = %v, want it to wrap a *pep440.InvalidVersionError", "name>=1.0x", err)
	}
	_, err = ParseRequirement("name-")
	var ne *pyname.InvalidNameError
	if !errors.As(err, &ne) || ne.Name != "name-" {
		t.Errorf("ParseRequirement(%q) error = %v, want it to wrap a *pyname.InvalidNameError", "name-", err)
	}
	_, err = ParseRequirement("name>=1")
	if err != nil {
		t.Fatal(err)
	}
	pe := &ParseError{Input: "x", Reason: "r"}
	if got, want := pe.Error(), `invalid dependency specifier "x" at offset 0: r`; got != want {
		t.Errorf("ParseError.Error() = %q, want %q", got, want)
	}
}

var normalizedNameTests = []struct{ in, want string }{
	{"Friendly_Bard", "friendly-bard"},
	{"friendly.-bard[x]>=1", "friendly-bard"},
	{"A", "a"},
}

func TestNormalizedName(t *testing.T) {
	for _, tt := range normalizedNameTests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRequirement(tt.in)
			if err != nil {
				t.Fatalf("ParseRequirement(%q) error: %v", tt.in, err)
			}
			if got := r.NormalizedName(); got != tt.want {
				t.Errorf("ParseRequirement(%q).NormalizedName() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRequirementStringConstructed checks String on values built by hand.
func TestRequirementStringConstructed(t *testing.T) {
	m, err := ParseMarker(`os_name == "nt"`)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		r    Requirement
		want string
	}{
		{Requirement{}, ""},
		{Requirement{Name: "x", Extras: []string{"B_c", "a", "b.c"}}, "x[a,b-c]"},
		{Requirement{Name: "x", URL: "https://e.example/x.whl", Marker: m}, `x @ https://e.example/x.whl ; os_name == "nt"`},
		{Requirement{Name: "x", Marker: m}, `x; os_name == "nt"`},
	}
	for _, tt := range tests {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}
