package scaffold

import (
	"regexp"
	"strings"
	"testing"
)

// commentedKeyRE is a commented-out TOML line (`# summary = "..."`), code
// rather than prose.
var commentedKeyRE = regexp.MustCompile(`^#\s*[a-z_]+ = `)

// unfinishedComments returns the comment paragraphs of a rendered
// release.toml whose prose does not end a sentence: a paragraph's last
// prose line must end with ".", or with ":" when commented-out code
// follows it.
func unfinishedComments(toml string) []string {
	var bad, para []string
	flush := func(codeFollows bool) {
		if len(para) == 0 {
			return
		}
		last := strings.TrimSpace(para[len(para)-1])
		if !strings.HasSuffix(last, ".") && !(codeFollows && strings.HasSuffix(last, ":")) {
			bad = append(bad, strings.Join(para, "\n"))
		}
		para = nil
	}
	for _, line := range strings.Split(toml, "\n") {
		switch {
		case strings.HasPrefix(line, "#   "): // a command quoted in the prose
			para = append(para, line)
		case commentedKeyRE.MatchString(line):
			flush(true)
		case strings.HasPrefix(line, "#"):
			para = append(para, line)
		default:
			flush(false)
		}
	}
	flush(false)
	return bad
}

// The check finds the half-finished comment of issue 41, and one that
// ends mid-sentence before commented-out code.
func TestUnfinishedCommentsCheck(t *testing.T) {
	for _, toml := range []string{
		"# The wheels: rustsum holds the Python packages, and requires\n[[wheel]]\nname = \"rustsum\"\n",
		"# An SPDX license expression, for\n# license = \"...\"\n",
	} {
		if len(unfinishedComments(toml)) != 1 {
			t.Errorf("the check passes %q", toml)
		}
	}
	if bad := unfinishedComments("# One line.\n# summary = \"...\"\n# Run:\n#   git init\n# then commit.\nx = 1\n"); len(bad) != 0 {
		t.Errorf("finished comments flagged: %q", bad)
	}
}

// Every comment of every release.toml init renders ends its sentence: the
// shapes of TestDetectAndRender and the golden files, on hosts with and
// without git, Python and a git identity.
func TestCommentsAreSentences(t *testing.T) {
	projects := map[string]map[string]string{
		"c library":               {"Makefile": "CFLAGS ?= -O2\nlibgreet.so: greet.c\n", "greet/__init__.py": "", "LICENSE": "MIT\n"},
		"no lib":                  {"Makefile": "all:\n"},
		"go":                      {"go.mod": "module example.com/x\n\nrequire a.b/c v1.0.0\n", "main.go": "package main\n\nfunc main() {}\n", "plugin/p.go": "package main\n\nimport \"C\"\n\n//export F\nfunc F() {}\n\nfunc main() {}\n"},
		"cmake":                   {"CMakeLists.txt": "add_library(fast SHARED fast.c)\n", "pyproject.toml": "[project]\nname = \"fast\"\nversion = \"1.0\"\n", "src/fast/__init__.py": ""},
		"cmake without a library": {"CMakeLists.txt": "project(x)\n"},
		"dynamic":                 {"pyproject.toml": "[project]\nname = \"dyn\"\ndynamic = [\"version\", \"description\", \"license\", \"readme\", \"authors\", \"urls\", \"maintainers\", \"dependencies\", \"scripts\"]\n", "dyn/__init__.py": "", "README.md": ""},
		"license table":           {"pyproject.toml": "[project]\nname = \"t\"\nversion = \"1\"\nlicense = { text = \"x\" }\n", "t/__init__.py": "", "t_extra/__init__.py": "import t\nimport t_more\n", "t_more/__init__.py": ""},
		"gpl":                     {"COPYING": "GNU GENERAL PUBLIC LICENSE\nVersion 2, June 1991\n", "a/__init__.py": "", "b/__init__.py": ""},
		"nothing":                 {},
		"pyproject only":          {"pyproject.toml": "[project]\nname = \"only\"\nversion = \"1\"\nrequires-python = \">=3.9\"\n"},
	}
	hosts := map[string]Host{
		"committed": goldenHost,
		"bare":      {GOOS: "linux", GOARCH: "arm64"},
		"enclosed":  {GOOS: "darwin", GOARCH: "arm64", EnclosingRepo: true, AuthorName: "A"},
	}
	for name, files := range projects {
		dir := writeTree(t, files)
		p, err := Detect(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for hn, h := range hosts {
			toml := ReleaseTOML(p, h)
			for _, c := range unfinishedComments(toml) {
				t.Errorf("%s on a %s host: a comment does not end its sentence:\n%s", name, hn, c)
			}
		}
	}
}
