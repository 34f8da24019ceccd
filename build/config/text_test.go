package config

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		s     string
		class TextClass
		at    int    // -1: accepted
		what  string // part of the description
	}{
		{"plain name", TextLine, -1, ""},
		{"Zoë Ünïcödé 名前", TextLine, -1, ""},
		{"a\x00b", TextLine, 1, "U+0000 NUL"},
		{"a\tb", TextLine, 1, "U+0009 TAB"},
		{"a\nb", TextLine, 1, "U+000A LINE FEED"},
		{"a\rb", TextLine, 1, "U+000D CARRIAGE RETURN"},
		{"ab\x1b[31m", TextLine, 2, "U+001B ESCAPE"},
		{"ab\x7f", TextLine, 2, "U+007F DELETE"},
		{"ab\u0085", TextLine, 2, "U+0085 NEXT LINE"},
		{"ab\u0090", TextLine, 2, "U+0090, a control character"},
		{"safe\u202etxt.exe", TextLine, 4, "U+202E RIGHT-TO-LEFT OVERRIDE"},
		{"a\u2066b", TextLine, 1, "U+2066 LEFT-TO-RIGHT ISOLATE"},
		{"a\u200bb", TextLine, 1, "U+200B ZERO WIDTH SPACE"},
		{"a\u200db", TextLine, 1, "U+200D ZERO WIDTH JOINER"},
		{"\ufeffname", TextLine, 0, "U+FEFF"},
		{"a\u2028b", TextLine, 1, "U+2028 LINE SEPARATOR"},
		{"a\U000e0041b", TextLine, 1, "U+E0041, an invisible format character"},
		{"a\xffb", TextLine, 1, "invalid UTF-8 byte 0xff"},
		// prose: joiners allowed, bidi controls not
		{"می\u200cخواهم", TextProse, -1, ""},
		{"👩\u200d💻 team", TextProse, -1, ""},
		{"a\u202bb", TextProse, 1, "RIGHT-TO-LEFT EMBEDDING"},
		{"one\ttwo", TextProse, 3, "TAB"},
		// commands: tabs and newlines, nothing else
		{"set -e\n\techo hi\n", TextCommand, -1, ""},
		{"echo hi\r\n", TextCommand, 7, "CARRIAGE RETURN"},
		{"a\x00", TextCommand, 1, "NUL"},
		{"echo \u200d", TextCommand, 5, "ZERO WIDTH JOINER"},
		{"x\fy", TextCommand, 1, "FORM FEED"},
		// documents: CRLF, form feeds and bidi marks are text
		{"# Title\r\n\fpage\t2\n\u200fעברית\u202b\n", TextDocument, -1, ""},
		{"line\rover", TextDocument, 4, "CARRIAGE RETURN"},
		{"end\r", TextDocument, 3, "CARRIAGE RETURN"},
		{"a\x00", TextDocument, 1, "NUL"},
		{"a\x1b[2J", TextDocument, 1, "ESCAPE"},
	} {
		at, what, ok := CheckText(tc.s, tc.class)
		switch {
		case tc.at < 0 && !ok:
			t.Errorf("CheckText(%q, %d) refused %s at %d, want accepted", tc.s, tc.class, what, at)
		case tc.at >= 0 && ok:
			t.Errorf("CheckText(%q, %d) accepted, want %s at %d", tc.s, tc.class, tc.what, tc.at)
		case tc.at >= 0 && (at != tc.at || !strings.Contains(what, tc.what)):
			t.Errorf("CheckText(%q, %d) = %d %q, want %d %q", tc.s, tc.class, at, what, tc.at, tc.what)
		}
	}
}

// textCases put a character into one value of validTOML; each is refused
// with the key and position of that value.
var textCases = []struct {
	name     string
	old, new string
	want     string // the first line of the error
}{
	{"NUL in a step's argv", `"-o", "${MKRELEASE_OUT}/tool"`, `"-o", "${MKRELEASE_OUT}/tool\u0000; rm -rf /"`,
		"release.toml:28:29: build.step[0].run[3]: holds U+0000 NUL at character 22"},
	{"carriage return in a step's argv", `run = ["go", "build"`, `run = ["go", "build\r# hidden"`,
		"release.toml:28:14: build.step[0].run[1]: holds U+000D CARRIAGE RETURN at character 6"},
	{"NUL in the project name", `name = "Vexl_Demo"`, `name = "Vexl\u0000Demo"`,
		"release.toml:2:8: project.name: holds U+0000 NUL at character 5"},
	{"newline in the version", `version = "V1.0-RC_1"`, `version = "1.0\nRequires-Dist: evil"`,
		"release.toml:3:11: project.version: holds U+000A LINE FEED at character 4"},
	{"bidi override in the summary", `version = "V1.0-RC_1"`, "version = \"V1.0-RC_1\"\nsummary = \"fast \u202eexe.txt\"",
		"release.toml:4:11: project.summary: holds U+202E RIGHT-TO-LEFT OVERRIDE at character 6"},
	{"zero-width space in an output", `outputs = ["tool"]`, `outputs = ["to\u200bol"]`,
		"release.toml:29:12: build.step[0].outputs[0]: holds U+200B ZERO WIDTH SPACE at character 3"},
	{"escape in an environment key", `env = { GOOS = "linux" }`, `env = { "GO\u001bOS" = "linux" }`,
		`release.toml:23:24: target[0].env.GO\x1bOS: the key holds U+001B ESCAPE at character 3`},
	{"NUL in an environment value", `env = { GOOS = "linux" }`, `env = { GOOS = "li\u0000nux" }`,
		"release.toml:23:16: target[0].env.GOOS: holds U+0000 NUL at character 3"},
	{"DEL in a source path", `local = "src"`, `local = "s\u007frc"`,
		"release.toml:10:9: source[0].local: holds U+007F DELETE at character 2"},
	{"C1 control in a toolchain command", `command = ["go", "version"]`, `command = ["go", "ver\u009bsion"]`,
		"release.toml:19:18: toolchain[0].command[1]: holds U+009B, a control character at character 4"},
	{"tab in an overlay name", `name = "fix"`, `name = "f\tix"`,
		"release.toml:13:8: overlay[0].name: holds U+0009 TAB at character 2"},
}

func TestParseRefusesControlCharacters(t *testing.T) {
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(validTOML, tc.old) {
				t.Fatalf("test bug: %q not in valid config", tc.old)
			}
			_, err := Parse("release.toml", "/p", []byte(strings.Replace(validTOML, tc.old, tc.new, 1)))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse = %v, want an ErrorList", err)
			}
			// Reported once: the semantic checks do not add "invalid name".
			if len(list) != 1 {
				t.Errorf("%d errors, want 1:\n%v", len(list), err)
			}
			first, hint, _ := strings.Cut(list[0].Error(), "\n\thint: ")
			if first != tc.want {
				t.Errorf("error = %q\n   want %q", first, tc.want)
			}
			if !strings.Contains(hint, "remove it") {
				t.Errorf("hint = %q", hint)
			}
			for _, r := range list.Error() {
				if r < 0x20 && r != '\n' && r != '\t' {
					t.Errorf("the message carries the raw control character %U", r)
				}
			}
		})
	}
}

// What commands legitimately hold is accepted.
func TestParseAcceptsScripts(t *testing.T) {
	src := strings.Replace(validTOML, `run = ["go", "build", "-o", "${MKRELEASE_OUT}/tool"]`, "run = [\"sh\", \"-c\", '''\nset -e\n\tgo build -o \"$MKRELEASE_OUT/tool\"\n''']", 1)
	src = strings.Replace(src, `env = { GOOS = "linux" }`, "env = { GOOS = \"linux\", CERT = \"line1\\nline2\" }", 1)
	if _, err := Parse("release.toml", "/p", []byte(src)); err != nil {
		t.Fatal(err)
	}
}

func FuzzCheckText(f *testing.F) {
	for _, s := range []string{"plain", "a\x00b", "\u202e", "x\r\ny", "\xff", "👩\u200d💻"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, c uint8) {
		class := TextClass(c % 4)
		at, what, ok := CheckText(s, class)
		n := utf8.RuneCountInString(s)
		if ok {
			if at != 0 || what != "" {
				t.Fatalf("accepted with %d %q", at, what)
			}
			// Accepted text never holds NUL or a lone carriage return.
			if strings.ContainsRune(s, 0) || strings.Contains(strings.ReplaceAll(s, "\r\n", ""), "\r") {
				t.Fatalf("accepted %q", s)
			}
			return
		}
		if at < 0 || at >= n || what == "" {
			t.Fatalf("refused at %d of %d runes: %q", at, n, what)
		}
	})
}
