package config

import (
	"errors"
	"strings"
	"testing"
)

// keyCases each change validTOML; want is the whole first line of the
// error (position, key, message) and hint a part of its hint.
var keyCases = []struct {
	name     string
	old, new string
	want     string
	hint     string
}{
	{"case variant beside the key", `outputs = ["tool"]`, "outputs = [\"tool\"]\nRun = [\"sh\", \"-c\", \"evil\"]",
		"release.toml:30:1: build.step[0].Run: unknown key (keys are case-sensitive)", `did you mean "run"? it is set at 28:1: remove this spelling, only "run" is read`},
	{"case variant before the key", `run = ["go"`, `Run = ["sh"]` + "\nrun = [\"go\"",
		"release.toml:28:1: build.step[0].Run: unknown key (keys are case-sensitive)", `it is set at 29:1`},
	{"upper-case key instead", `name = "Vexl_Demo"`, `NAME = "Vexl_Demo"`,
		"release.toml:2:1: project.NAME: unknown key (keys are case-sensitive)", `did you mean "name"? rename it`},
	{"capitalised key", `version = "V1.0-RC_1"`, `Version = "V1.0-RC_1"`,
		"release.toml:3:1: project.Version: unknown key (keys are case-sensitive)", `did you mean "version"?`},
	{"capitalised table", "[build]\n", "[Build]\n",
		"release.toml:5:2: Build: unknown key (keys are case-sensitive)", `did you mean "build"?`},
	{"capitalised array table", "[[source]]\n", "[[Source]]\n",
		"release.toml:8:3: Source: unknown key (keys are case-sensitive)", `did you mean "source"?`},
	{"capitalised sub-table of an array table", "[[build.step]]", "[[build.Step]]",
		"release.toml:25:9: build.Step: unknown key (keys are case-sensitive)", `did you mean "step"?`},
	{"inline table in an array", `version = "V1.0-RC_1"`, "version = \"V1.0-RC_1\"\nauthors = [{ name = \"a\" }, { Name = \"b\" }]",
		"release.toml:4:30: project.authors[1].Name: unknown key (keys are case-sensitive)", `did you mean "name"?`},
	{"dotted key", `version = "V1.0-RC_1"`, "version = \"V1.0-RC_1\"\nURLs.Home = \"https://example.invalid\"",
		"release.toml:4:1: project.URLs: unknown key (keys are case-sensitive)", `did you mean "urls"?`},
	{"second element of an array table", "[[build.step]]", "[[source]]\nname = \"b\"\nLocal = \"b\"\n\n[[build.step]]",
		"release.toml:27:1: source[1].Local: unknown key (keys are case-sensitive)", `did you mean "local"?`},
	{"look-alike letter", `name = "Vexl_Demo"`, `"n\u0430me" = "Vexl_Demo"`,
		`release.toml:2:1: project."n\u0430me": unknown key: declared keys are ASCII`, "valid keys here:"},
	{"Kelvin sign", `name = "up"`, `name = "up"` + "\n\"\u212Aind\" = \"x\"",
		`release.toml:10:1: source[0]."\u212aind": unknown key: declared keys are ASCII`, "valid keys here: allow_redirect_hosts,"},
	{"Kelvin sign folding to a declared key", `version = "V1.0-RC_1"`, "version = \"V1.0-RC_1\"\n[[evidence.lane]]\n\"\u212Aind\" = \"cases\"",
		`release.toml:5:1: evidence.lane[0]."\u212aind": unknown key: declared keys are ASCII`, `did you mean "kind"? type it in plain ASCII`},
	{"misspelt key", `name = "Vexl_Demo"`, `nmae = "Vexl_Demo"`,
		"release.toml:2:1: project.nmae: unknown key", `did you mean "name"? valid keys here: authors,`},
	{"unknown key inside an env-like map value", `env = { GOOS = "linux" }`, `env = { GOOS = { Deep = 1 } }`,
		"release.toml:23:16: target.env: wrong type: found a TOML inline table", "a table of strings"},
	{"key not in the toml schema", "[build]\n", "[project.NormalizedName]\n[build]\n",
		"release.toml:5:10: project.NormalizedName: unknown key", ""},
}

func TestParseRefusesUnknownKeysExactly(t *testing.T) {
	for _, tc := range keyCases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(validTOML, tc.old) {
				t.Fatalf("test bug: %q not in valid config", tc.old)
			}
			src := strings.Replace(validTOML, tc.old, tc.new, 1)
			_, err := Parse("release.toml", "/p", []byte(src))
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse = %v, want an ErrorList", err)
			}
			first, hint, _ := strings.Cut(list[0].Error(), "\n\thint: ")
			if first != tc.want {
				t.Errorf("error = %q\n   want %q", first, tc.want)
			}
			if !strings.Contains(hint, tc.hint) {
				t.Errorf("hint = %q, want it to contain %q", hint, tc.hint)
			}
		})
	}
}

// Keys of user maps are the user's: kept as written, in any case.
func TestMapKeysKeepTheirCase(t *testing.T) {
	src := strings.Replace(validTOML, `env = { GOOS = "linux" }`, `env = { GOOS = "linux", goarch = "amd64", Mixed_Case = "x" }`, 1)
	src = strings.Replace(src, `version = "V1.0-RC_1"`, "version = \"V1.0-RC_1\"\nurls = { Homepage = \"https://example.invalid\", \"Bug Tracker\" = \"https://example.invalid/issues\" }", 1)
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if env := c.Targets[0].Env; env["goarch"] != "amd64" || env["Mixed_Case"] != "x" || env["GOOS"] != "linux" {
		t.Errorf("env = %v", env)
	}
	if c.Project.URLs["Bug Tracker"] == "" {
		t.Errorf("urls = %v", c.Project.URLs)
	}
}

func FuzzCheckKeys(f *testing.F) {
	f.Add([]byte(validTOML))
	f.Add([]byte("[[build.step]]\nRun = 1\n[[build.step.x]]\n[Project]\n"))
	f.Add([]byte("a.b.c = {d = [1, {e = 2}]}\n[[a.b]]\n[a.b.c]\n"))
	f.Add([]byte("[[wheel]]\n[[wheel.include]]\n[wheel.entry_points.g]\nx = 'm:f'\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range CheckKeys("release.toml", data, &Config{}) {
			if e.Key == "" || e.Msg == "" {
				t.Fatalf("problem without key or message: %+v", e)
			}
			if e.Pos.Line < 1 || e.Pos.Column < 1 {
				t.Fatalf("problem without position: %v", e)
			}
		}
	})
}
