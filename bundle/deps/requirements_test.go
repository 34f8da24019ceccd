package deps

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

var (
	h1 = strings.Repeat("1", 64)
	h2 = strings.Repeat("a", 64)
)

var requirementsTests = []struct {
	name string
	doc  string
	// want lists "name==version ; marker [hashes...]" of each package.
	want []string
	// notes is how many notes the lock gets.
	notes int
	// err is a substring of the error and line the line it must name.
	err  string
	line int
}{
	{name: "pinned", doc: "six==1.16.0 --hash=sha256:" + h1 + "\n", want: []string{"six==1.16.0 [" + h1 + "]"}},
	{name: "pip-compile style", doc: "#\n# pip-compile --generate-hashes\n#\n--index-url https://pypi.example.invalid/simple\n\nSix==1.16.0 \\\n    --hash=sha256:" + h1 + " \\\n    --hash=sha256:" + strings.ToUpper(h2) + "\n    # via -r requirements.in\n",
		want: []string{"six==1.16.0 [" + h1 + " " + h2 + "]"}, notes: 1},
	{name: "marker and extras", doc: `foo[bar]==2.0 ; python_version < "3.11" --hash=sha256:` + h1 + "\n", want: []string{`foo==2.0 ; python_version < "3.11" [` + h1 + "]"}},
	{name: "hash with space", doc: "foo==1.0 --hash sha256:" + h1 + "\n", want: []string{"foo==1.0 [" + h1 + "]"}},
	{name: "sha512 extra", doc: "foo==1.0 --hash=sha256:" + h1 + " --hash=sha512:" + strings.Repeat("0", 128) + "\n", want: []string{"foo==1.0 [" + h1 + "]"}, notes: 1},
	{name: "comment after hash", doc: "foo==1.0 --hash=sha256:" + h1 + " # pinned\n", want: []string{"foo==1.0 [" + h1 + "]"}},
	{name: "crlf", doc: "foo==1.0 \\\r\n  --hash=sha256:" + h1 + "\r\n", want: []string{"foo==1.0 [" + h1 + "]"}},
	{name: "ignored options", doc: "--require-hashes\n--only-binary :all:\n-f ./wheels\n--no-index\n--pre\nfoo==1.0 --hash=sha256:" + h1 + "\n", want: []string{"foo==1.0 [" + h1 + "]"}, notes: 5},
	{name: "duplicate hash", doc: "foo==1.0 --hash=sha256:" + h1 + " --hash=sha256:" + h1 + "\n", want: []string{"foo==1.0 [" + h1 + "]"}},
	{name: "empty", doc: "\n# nothing\n", want: nil},
	{name: "unpinned", doc: "# x\nfoo>=1.0 --hash=sha256:" + h1 + "\n", err: "not pinned", line: 2},
	{name: "no version", doc: "foo --hash=sha256:" + h1 + "\n", err: "not pinned", line: 1},
	{name: "wildcard", doc: "foo==1.* --hash=sha256:" + h1 + "\n", err: "not pinned", line: 1},
	{name: "range", doc: "foo==1.0,!=1.1 --hash=sha256:" + h1 + "\n", err: "not pinned", line: 1},
	{name: "no hash", doc: "a==1 --hash=sha256:" + h1 + "\n\nfoo==1.0\n", err: "no --hash=sha256:", line: 3},
	{name: "only sha512", doc: "foo==1.0 --hash=sha512:" + strings.Repeat("0", 128) + "\n", err: "only sha384/sha512", line: 1},
	{name: "short digest", doc: "foo==1.0 --hash=sha256:abc\n", err: "64 hex digits", line: 1},
	{name: "md5", doc: "foo==1.0 --hash=md5:abc\n", err: "unknown algorithm", line: 1},
	{name: "hash without algorithm", doc: "foo==1.0 --hash=" + h1 + "\n", err: "ALGORITHM:HEX", line: 1},
	{name: "direct reference", doc: "foo @ https://x.invalid/foo-1.0-py3-none-any.whl --hash=sha256:" + h1 + "\n", err: "direct reference", line: 1},
	{name: "editable", doc: "-e ./src\n", err: "editable", line: 1},
	{name: "nested", doc: "foo==1 --hash=sha256:" + h1 + "\n-r other.txt\n", err: "nested", line: 2},
	{name: "constraint", doc: "-c constraints.txt\n", err: "nested", line: 1},
	{name: "no-binary", doc: "--no-binary :all:\n", err: "sdists are not installed", line: 1},
	{name: "unknown option", doc: "--frobnicate\n", err: "unknown option", line: 1},
	{name: "bad option on requirement", doc: "foo==1.0 --hash=sha256:" + h1 + " --index-url x\n", err: "not allowed on a requirement line", line: 1},
	{name: "env var", doc: "foo==${VERSION} --hash=sha256:" + h1 + "\n", err: "environment variable", line: 1},
	{name: "bad requirement", doc: "foo===\n", err: "invalid dependency specifier", line: 1},
	{name: "continued error line", doc: "a==1 --hash=sha256:" + h1 + "\nfoo>=1 \\\n  --hash=sha256:" + h1 + "\n", err: "not pinned", line: 2},
	{name: "option missing value", doc: "foo==1.0 --hash\n", err: "needs a value", line: 1},
	{name: "hash alone", doc: "--hash=sha256:" + h1 + "\n", err: "without a requirement", line: 1},
}

func describeLocked(p Locked) string {
	s := p.Name + "==" + p.Version
	if p.Marker != nil {
		s += " ; " + p.Marker.String()
	}
	return s + " [" + strings.Join(p.Hashes(), " ") + "]"
}

func TestParseRequirements(t *testing.T) {
	for _, tt := range requirementsTests {
		t.Run(tt.name, func(t *testing.T) {
			lock, err := ParseRequirements("reqs.txt", []byte(tt.doc))
			if tt.err != "" {
				var le *LockError
				if !errors.As(err, &le) {
					t.Fatalf("ParseRequirements = %v, want a *LockError", err)
				}
				if !strings.Contains(le.Error(), tt.err) || le.Line != tt.line || le.File != "reqs.txt" {
					t.Errorf("error %q (line %d), want %q on line %d", le, le.Line, tt.err, tt.line)
				}
				if !strings.HasPrefix(le.Error(), "reqs.txt:") {
					t.Errorf("error %q does not start with the file and line", le)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRequirements: %v", err)
			}
			var got []string
			for _, p := range lock.Packages {
				got = append(got, describeLocked(p))
				if !strings.HasPrefix(p.Where, "reqs.txt:") {
					t.Errorf("Where %q", p.Where)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("packages %q, want %q", got, tt.want)
			}
			if len(lock.Notes) != tt.notes {
				t.Errorf("notes %v, want %d", lock.Notes, tt.notes)
			}
		})
	}
}

func TestLogicalLines(t *testing.T) {
	got := logicalLines("a \\\nb\n# c \\\nd\ne#f\ng #h\n\\\n")
	want := []logicalLine{{1, "a b"}, {4, "d"}, {5, "e#f"}, {6, "g"}}
	if !slices.Equal(got, want) {
		t.Errorf("logicalLines = %v, want %v", got, want)
	}
}
