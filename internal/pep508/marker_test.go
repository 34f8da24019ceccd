package pep508

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// markerStringTests maps valid markers to their canonical form.
var markerStringTests = []struct{ in, want string }{
	{`python_version < "3.9"`, `python_version < "3.9"`},
	{`  python_version<'3.9'  `, `python_version < "3.9"`},
	{"\tos_name\t==\t'nt'\t", `os_name == "nt"`},
	{`os_name == "a" or os_name == "b" and os_name == "c"`, `os_name == "a" or os_name == "b" and os_name == "c"`},
	{`(os_name == "a" or os_name == "b") and os_name == "c"`, `(os_name == "a" or os_name == "b") and os_name == "c"`},
	{`os_name == "a" and (os_name == "b" or os_name == "c")`, `os_name == "a" and (os_name == "b" or os_name == "c")`},
	{`(os_name == "a" and os_name == "b") or os_name == "c"`, `os_name == "a" and os_name == "b" or os_name == "c"`},
	{`( os_name == "a" )`, `os_name == "a"`},
	{`((os_name == "a" or (os_name == "b")))`, `os_name == "a" or os_name == "b"`},
	{`extra == "Foo_Bar"`, `extra == "foo-bar"`},
	{`extra == 'TEST' or extra=='Docs.Extra'`, `extra == "test" or extra == "docs-extra"`},
	{`"Test" != extra`, `"test" != extra`},
	{`extra == "not a name!"`, `extra == "not a name!"`},
	{`"3.9" <= python_version`, `"3.9" <= python_version`},
	{`python_full_version >= "3.8.1"`, `python_full_version >= "3.8.1"`},
	{`implementation_name == "cpython" and implementation_version >= "3"`, `implementation_name == "cpython" and implementation_version >= "3"`},
	{`platform_release ~= "5.10"`, `platform_release ~= "5.10"`},
	{`platform_system === "Linux"`, `platform_system === "Linux"`},
	{`"arm" in platform_machine`, `"arm" in platform_machine`},
	{`"arm" not in platform_machine`, `"arm" not in platform_machine`},
	{`sys_platform in "linux darwin"`, `sys_platform in "linux darwin"`},
	{`os.name == "posix"`, `os_name == "posix"`},
	{`os_name == 'he said "no"'`, `os_name == 'he said "no"'`},
	{`os_name == ""`, `os_name == ""`},
	{`os_name == '日本'`, `os_name == "日本"`},
}

func TestParseMarkerString(t *testing.T) {
	for _, tt := range markerStringTests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMarker(tt.in)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.in, err)
			}
			if got := m.String(); got != tt.want {
				t.Errorf("ParseMarker(%q) = %q, want %q", tt.in, got, tt.want)
			}
			m2, err := ParseMarker(tt.want)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.want, err)
			}
			if got := m2.String(); got != tt.want {
				t.Errorf("ParseMarker(%q) = %q, want %q", tt.want, got, tt.want)
			}
		})
	}
}

// invalidMarkerTests lists invalid markers, the offset the error should
// point at and a word its message should contain.
var invalidMarkerTests = []struct {
	in     string
	offset int
	word   string
}{
	{"", 0, "marker variable"},
	{"   ", 3, "marker variable"},
	{"os_name", 7, "comparison operator"},
	{"os_name ==", 10, "quoted string"},
	{"os_name == 'a' and", 18, "marker variable"},
	{"os_name == 'a' or", 17, "marker variable"},
	{"and os_name == 'a'", 0, "marker variable"},
	{"os_name === 'a' === 'b'", 16, "chained"},
	{"os_name <> 'a'", 9, "quoted string"},
	{"os_name == 'a' ; os_name == 'b'", 15, `"and"`},
	{"(os_name == 'a'))", 16, "no matching"},
	{"os_name == 'a' AND os_name == 'b'", 15, `"and"`},
	{"OS_NAME == 'a'", 0, "os_name"},
	{"os_name == 'a'\n", 14, "single line"},
	{"'a' in 'b'", 0, "two quoted strings"},
	{"python_version >= python_full_version", 0, "two marker variables"},
	{"extras == 'a'", 0, "lock files"},
	{"platform == 'linux'", 0, "unknown marker variable"},
	{"sys_platform == win32", 16, "quote it"},
}

func TestParseMarkerInvalid(t *testing.T) {
	for _, tt := range invalidMarkerTests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMarker(tt.in)
			if err == nil {
				t.Fatalf("ParseMarker(%q) = %q, want an error", tt.in, m)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseMarker(%q) error %T, want *ParseError", tt.in, err)
			}
			if pe.Offset != tt.offset {
				t.Errorf("ParseMarker(%q) error Offset = %d, want %d (%v)", tt.in, pe.Offset, tt.offset, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.word) {
				t.Errorf("ParseMarker(%q) error = %q, want it to mention %q", tt.in, msg, tt.word)
			}
			if !strings.Contains(err.Error(), "environment marker") {
				t.Errorf("ParseMarker(%q) error = %q, want it to say what was parsed", tt.in, err)
			}
		})
	}
}

var variablesTests = []struct {
	in   string
	want []string
}{
	{`os_name == "a"`, []string{"os_name"}},
	{`"3" <= python_version and (extra == "x" or python_version < "4") and os.name == "nt"`, []string{"extra", "os_name", "python_version"}},
}

func TestVariables(t *testing.T) {
	for _, tt := range variablesTests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := ParseMarker(tt.in)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.in, err)
			}
			if got := m.Variables(); !slices.Equal(got, tt.want) {
				t.Errorf("ParseMarker(%q).Variables() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	var nilMarker *Marker
	if got := nilMarker.Variables(); got != nil {
		t.Errorf("(*Marker)(nil).Variables() = %q, want nil", got)
	}
	if got := nilMarker.String(); got != "" {
		t.Errorf("(*Marker)(nil).String() = %q, want \"\"", got)
	}
}
