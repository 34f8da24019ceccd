package tomlkeys

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// seconds decodes itself from text, as a config duration does.
type seconds struct{ time.Duration }

func (s *seconds) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	s.Duration = d
	return err
}

type common struct {
	Note string `toml:"note"`
}

type inner struct {
	D    seconds `toml:"d"`
	Kind string  `toml:"kind"`
	Name string  `toml:"name"`
}

type doc struct {
	common
	A        string           `toml:"a"`
	LockVer  *string          `toml:"lock-version"`
	Skip     string           `toml:"-"`
	Untagged string           // its key is the field name
	hidden   string           // takes no key
	In       []inner          `toml:"in"`
	M        map[string]inner `toml:"m"`
	Tool     map[string]any   `toml:"tool"`
	Any      any              `toml:"any"`
	Ptr      *inner           `toml:"ptr"`
}

var _ = doc{}.hidden

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []Unknown
	}{
		{"every key declared", "note = 'n'\na = 'x'\nlock-version = '1'\nUntagged = 'u'\n[[in]]\nd = '1s'\n[m.k]\nd = '1s'\n[tool.x]\nAny = 1\n[ptr]\nname = 'p'\n", nil},
		{"case variant", "A = 'x'\n", []Unknown{{Line: 1, Column: 1, Path: "A", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "a"? rename it`, Declared: "a"}}},
		{"case variant beside the declared key", "a = 'x'\n\nA = 'y'\n", []Unknown{{Line: 3, Column: 1, Path: "A", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "a"? it is set at 1:1: remove this spelling, only "a" is read`, Declared: "a"}}},
		{"case variant of a kebab key", "Lock-Version = '1'\n", []Unknown{{Line: 1, Column: 1, Path: "Lock-Version", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "lock-version"? rename it`, Declared: "lock-version"}}},
		{"case variant of an embedded key", "NOTE = 'n'\n", []Unknown{{Line: 1, Column: 1, Path: "NOTE", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "note"? rename it`, Declared: "note"}}},
		{"untagged field in another case", "untagged = 'u'\n", []Unknown{{Line: 1, Column: 1, Path: "untagged", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "Untagged"? rename it`, Declared: "Untagged"}}},
		{"field tagged -", "Skip = 'x'\n", []Unknown{{Line: 1, Column: 1, Path: "Skip", Msg: "unknown key",
			Hint: "valid keys here: Untagged, a, any, in, lock-version, m, note, ptr, tool"}}},
		{"unexported field", "hidden = 'x'\n", []Unknown{{Line: 1, Column: 1, Path: "hidden", Msg: "unknown key",
			Hint: "valid keys here: Untagged, a, any, in, lock-version, m, note, ptr, tool"}}},
		{"misspelt key", "nto = 'x'\n", []Unknown{{Line: 1, Column: 1, Path: "nto", Msg: "unknown key",
			Hint: "did you mean \"note\"? valid keys here: Untagged, a, any, in, lock-version, m, note, ptr, tool", Closest: "note"}}},
		{"array table element", "[[in]]\nd = '1s'\n[[in]]\nD = '1s'\n", []Unknown{{Line: 4, Column: 1, Path: "in[1].D", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "d"? rename it`, Declared: "d"}}},
		{"inline table in an array", "in = [{name = 'a'}, {Name = 'b'}]\n", []Unknown{{Line: 1, Column: 22, Path: "in[1].Name", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "name"? rename it`, Declared: "name"}}},
		{"value of a map", "[m.anything]\nD = '1s'\n", []Unknown{{Line: 2, Column: 1, Path: "m.anything.D", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "d"? rename it`, Declared: "d"}}},
		{"through a pointer", "ptr = {NAME = 'p'}\n", []Unknown{{Line: 1, Column: 8, Path: "ptr.NAME", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "name"? rename it`, Declared: "name"}}},
		{"dotted key", "ptr.Name = 'p'\n", []Unknown{{Line: 1, Column: 5, Path: "ptr.Name", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "name"? rename it`, Declared: "name"}}},
		{"capitalised table", "[Ptr]\nname = 'p'\n", []Unknown{{Line: 1, Column: 2, Path: "Ptr", Msg: "unknown key (keys are case-sensitive)",
			Hint: `did you mean "ptr"? rename it`, Declared: "ptr"}}},
		{"Kelvin sign folding to a declared key", "[[in]]\n\"\u212Aind\" = 'x'\n", []Unknown{{Line: 2, Column: 1, Path: `in[0]."\u212aind"`, Msg: "unknown key: declared keys are ASCII",
			Hint: `did you mean "kind"? type it in plain ASCII`, Declared: "kind"}}},
		{"look-alike letter", "\"\u0430\" = 'x'\n", []Unknown{{Line: 1, Column: 1, Path: `"\u0430"`, Msg: "unknown key: declared keys are ASCII",
			Hint: "valid keys here: Untagged, a, any, in, lock-version, m, note, ptr, tool"}}},
		{"any value takes any key", "any = {X = 1}\n[tool.t]\nY = 2\n", nil},
		{"text value takes no keys: left to the decoder", "[m.k]\nd.x = 1\n", nil},
		{"syntax error: left to the decoder", "A = \n", nil},
		{"two findings in document order", "[[in]]\nNAME = 'a'\n[ptr]\nD = '1s'\n", []Unknown{
			{Line: 2, Column: 1, Path: "in[0].NAME", Msg: "unknown key (keys are case-sensitive)", Hint: `did you mean "name"? rename it`, Declared: "name"},
			{Line: 4, Column: 1, Path: "ptr.D", Msg: "unknown key (keys are case-sensitive)", Hint: `did you mean "d"? rename it`, Declared: "d"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Check([]byte(tc.src), &doc{})
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Check(%q)\n got %+v\nwant %+v", tc.src, got, tc.want)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte("a = 'x'\nA = 'y'\n[[in]]\nNAME = 1\n[[in.x]]\n[Ptr]\n"))
	f.Add([]byte("m.k.d = '1s'\nin = [{name = 'a'}, [1, {b = 2}]]\n"))
	f.Add([]byte("[tool.x.y]\nz = 1\n[m.k]\nd.x = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, u := range Check(data, &doc{}) {
			if u.Path == "" || !strings.HasPrefix(u.Msg, "unknown key") {
				t.Fatalf("finding without path or message: %+v", u)
			}
			if u.Line < 1 || u.Column < 1 {
				t.Fatalf("finding without position: %+v", u)
			}
			if u.Declared != "" && u.Closest != "" {
				t.Fatalf("finding both case variant and misspelling: %+v", u)
			}
		}
	})
}
