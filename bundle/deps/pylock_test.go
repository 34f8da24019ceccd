package deps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodDigest = "c75a69e28a550a7e93789579c22aa26b0f5b83b75dc4e08fe092980051e1090a"

var pylockTests = []struct {
	name string
	doc  string
	// err is a substring of the error; "" means the lock must parse.
	err string
	// entry is the entry or key the error must name.
	entry string
	line  int
}{
	{name: "spec example", doc: `lock-version = '1.0'
environments = ["sys_platform == 'win32'", "sys_platform == 'linux'"]
requires-python = '==3.12.*'
created-by = 'mousebender'

[[packages]]
name = 'attrs'
version = '25.1.0'
requires-python = '>=3.8'
wheels = [
  {name = 'attrs-25.1.0-py3-none-any.whl', upload-time = 2025-01-25T11:30:10.164985+00:00, url = 'https://files.example.invalid/attrs-25.1.0-py3-none-any.whl', size = 63152, hashes = {sha256 = '` + goodDigest + `'}},
]
[[packages.attestation-identities]]
environment = 'release-pypi'
kind = 'GitHub'

[[packages]]
name = 'cattrs'
version = '24.1.2'
dependencies = [{name = 'attrs'}]
sdist = {name = 'cattrs-24.1.2.tar.gz', url = 'https://files.example.invalid/cattrs-24.1.2.tar.gz', hashes = {sha256 = '` + goodDigest + `'}}

[tool.mousebender]
command = ['.', 'lock']
`},
	{name: "vcs source kept", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nvcs = {type = \"git\", url = \"https://example.invalid/a.git\", commit-id = \"abc\"}\n"},
	{name: "no lock-version", doc: "created-by = \"x\"\npackages = []\n", err: "missing", entry: "lock-version"},
	{name: "lock-version 2", doc: "lock-version = \"2.0\"\ncreated-by = \"x\"\npackages = []\n", err: "not supported", entry: "lock-version"},
	{name: "no created-by", doc: "lock-version = \"1.0\"\npackages = []\n", err: "missing", entry: "created-by"},
	{name: "no packages", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n", err: "missing", entry: "packages"},
	{name: "unknown key", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheelz = []\n", err: "unknown key", entry: "packages[0].wheelz", line: 7},
	{name: "toml syntax", doc: "lock-version = \"1.0\"\ncreated-by = \n", err: "", entry: "", line: 2},
	{name: "wrong type", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = 1\n", line: 5},
	{name: "no name", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nversion = \"1\"\n", err: "no name", entry: "packages[0]"},
	{name: "bad name", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a b\"\nversion = \"1\"\n", entry: "packages[0] (a b)"},
	{name: "no version", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nwheels = []\n", err: "no version", entry: "packages[0] (a)"},
	{name: "bad version", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"one\"\n", entry: "packages[0] (a)"},
	{name: "no source", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\n", err: "no source", entry: "packages[0] (a)"},
	{name: "vcs and wheels", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nvcs = {type = \"git\", url = \"u\", commit-id = \"c\"}\nwheels = [{url = \"https://x.invalid/a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "mutually exclusive", entry: "packages[0] (a)"},
	{name: "wheel without hashes", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{url = \"https://x.invalid/a-1-py3-none-any.whl\"}]\n", err: "no hashes", entry: "packages[0] (a)"},
	{name: "wheel without sha256", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{url = \"https://x.invalid/a-1-py3-none-any.whl\", hashes = {md5 = \"00\"}}]\n", err: "no sha256", entry: "packages[0] (a)"},
	{name: "bad digest", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{url = \"https://x.invalid/a-1-py3-none-any.whl\", hashes = {sha256 = \"abc\"}}]\n", err: "64 hex", entry: "packages[0] (a)"},
	{name: "wheel of another package", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{url = \"https://x.invalid/b-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "not a file of a", entry: "packages[0] (a)"},
	{name: "wheel of another version", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{url = \"https://x.invalid/a-2-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "not version 1", entry: "packages[0] (a)"},
	{name: "wheel without location", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{name = \"a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "neither url nor path", entry: "packages[0] (a)"},
	{name: "not a wheel name", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{path = \"a-1.tar.gz\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "does not end in .whl", entry: "packages[0] (a)"},
	{name: "extras marker", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nmarker = \"'dev' in dependency_groups\"\nwheels = [{path = \"a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "single-use lock", entry: "packages[0] (a)"},
	{name: "duplicate wheel", doc: "lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{path = \"a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}, {path = \"x/a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n", err: "listed twice", entry: "packages[0] (a)"},
}

func TestParsePylock(t *testing.T) {
	for _, tt := range pylockTests {
		t.Run(tt.name, func(t *testing.T) {
			lock, err := ParsePylock("/locks/pylock.toml", []byte(tt.doc))
			wantErr := tt.err != "" || tt.entry != "" || tt.line != 0
			if !wantErr {
				if err != nil {
					t.Fatalf("ParsePylock: %v", err)
				}
				if len(lock.Packages) == 0 {
					t.Fatal("no packages")
				}
				return
			}
			var le *LockError
			if !errors.As(err, &le) {
				t.Fatalf("ParsePylock = %v, want a *LockError", err)
			}
			if !strings.Contains(le.Error(), tt.err) || le.Entry != tt.entry && tt.entry != "" || tt.line != 0 && le.Line != tt.line || le.File != "/locks/pylock.toml" {
				t.Errorf("ParsePylock error %q (entry %q, line %d), want %q at entry %q line %d", le, le.Entry, le.Line, tt.err, tt.entry, tt.line)
			}
		})
	}
}

// Keys are case-sensitive: a key the specification spells otherwise only in
// case is refused with file:line:col (even in a newer 1.x lock, whose
// unknown keys are otherwise ignored), since the decoder would read it as
// the specification's key. want is the whole error message; "" means the
// lock parses.
func TestParsePylockExactKeys(t *testing.T) {
	const head = "lock-version = \"1.0\"\ncreated-by = \"x\"\n"
	wheel := "wheels = [{path = \"a-1-py3-none-any.whl\", hashes = {sha256 = \"" + goodDigest + "\"}}]\n"
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"case variant of a package key", head + "[[packages]]\nname = \"a\"\nVersion = \"1\"\n" + wheel,
			`/locks/pylock.toml:5:1: packages[0].Version: unknown key (keys are case-sensitive) (did you mean "version"? rename it)`},
		{"case variant beside the key", head + "[[packages]]\nname = \"a\"\nversion = \"1\"\nVersion = \"2\"\n" + wheel,
			`/locks/pylock.toml:6:1: packages[0].Version: unknown key (keys are case-sensitive) (did you mean "version"? it is set at 5:1: remove this spelling, only "version" is read)`},
		{"case variant of a top-level key", "Lock-Version = \"1.0\"\ncreated-by = \"x\"\npackages = []\n",
			`/locks/pylock.toml:1:1: Lock-Version: unknown key (keys are case-sensitive) (did you mean "lock-version"? rename it)`},
		{"capitalised array table", head + "[[Packages]]\nname = \"a\"\nversion = \"1\"\n" + wheel,
			`/locks/pylock.toml:3:3: Packages: unknown key (keys are case-sensitive) (did you mean "packages"? rename it)`},
		{"case variant in a wheel's inline table", head + "[[packages]]\nname = \"a\"\nversion = \"1\"\nwheels = [{path = \"a-1-py3-none-any.whl\", HASHES = {sha256 = \"" + goodDigest + "\"}}]\n",
			`/locks/pylock.toml:6:43: packages[0].wheels[0].HASHES: unknown key (keys are case-sensitive) (did you mean "hashes"? rename it)`},
		{"case variant in a newer 1.x lock", "lock-version = \"1.1\"\ncreated-by = \"x\"\n[[packages]]\nname = \"a\"\nversion = \"1\"\nSdist = {path = \"a-1.tar.gz\", hashes = {sha256 = \"" + goodDigest + "\"}}\n" + wheel,
			`/locks/pylock.toml:6:1: packages[0].Sdist: unknown key (keys are case-sensitive) (did you mean "sdist"? rename it)`},
		{"misspelt key", head + "[[packages]]\nname = \"a\"\nversion = \"1\"\nwheelz = []\n",
			`/locks/pylock.toml:6:1: packages[0].wheelz: unknown key (did you mean "wheels"? pylock.toml 1.0 does not define it; tool-specific data goes under [tool] or [packages.tool])`},
		{"key nothing is near", head + "[[packages]]\nname = \"a\"\nversion = \"1\"\nsignature = \"x\"\n" + wheel,
			`/locks/pylock.toml:6:1: packages[0].signature: unknown key (pylock.toml 1.0 does not define it; tool-specific data goes under [tool] or [packages.tool])`},
		{"look-alike letter", head + "[[packages]]\n\"n\u0430me\" = \"a\"\nversion = \"1\"\n" + wheel,
			`/locks/pylock.toml:4:1: packages[0]."n\u0430me": unknown key: declared keys are ASCII (pylock.toml 1.0 does not define it; tool-specific data goes under [tool] or [packages.tool])`},
		{"unknown key in a newer 1.x lock is ignored", "lock-version = \"1.1\"\ncreated-by = \"x\"\nfuture = true\n[[packages]]\nname = \"a\"\nversion = \"1\"\n" + wheel, ""},
		{"tool tables keep their keys", head + "[[packages]]\nname = \"a\"\nversion = \"1\"\n" + wheel + "[packages.tool.x]\nAnything = 1\n[tool.Y]\nName = \"n\"\n", ""},
		{"syntax error", head + "[[packages]]\nname = \n", "/locks/pylock.toml:4:8: unexpected character U+000A at start of value"},
		{"wrong type", head + "[[packages]]\nname = \"a\"\nversion = 1\n", "/locks/pylock.toml:5:11: packages.version: cannot decode TOML integer into struct field deps.pylockPackage.Version of type string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePylock("/locks/pylock.toml", []byte(tc.doc))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ParsePylock: %v", err)
			case tc.want == "":
				return
			}
			var le *LockError
			if !errors.As(err, &le) {
				t.Fatalf("ParsePylock = %v, want a *LockError", err)
			}
			if le.Error() != tc.want {
				t.Errorf("error = %q\n   want %q", le.Error(), tc.want)
			}
		})
	}
}

func TestParsePylockFields(t *testing.T) {
	lock, err := ParsePylock("/locks/pylock.toml", []byte(pylockTests[0].doc))
	if err != nil {
		t.Fatal(err)
	}
	if lock.RequiresPython.String() != "==3.12.*" || len(lock.Environments) != 2 {
		t.Errorf("lock %+v", lock)
	}
	attrs := lock.Packages[0]
	w := attrs.Wheels[0]
	if attrs.Name != "attrs" || attrs.Version != "25.1.0" || w.Name != "attrs-25.1.0-py3-none-any.whl" || w.Size != 63152 || w.SHA256 != goodDigest || !strings.HasPrefix(w.URL, "https://") {
		t.Errorf("attrs %+v", attrs)
	}
	if c := lock.Packages[1]; c.Sdist == nil || c.Sdist.Name != "cattrs-24.1.2.tar.gz" || len(c.Wheels) != 0 {
		t.Errorf("cattrs %+v", c)
	}
	rel, err := ParsePylock("/locks/pylock.toml", []byte("lock-version = \"1.0\"\ncreated-by = \"x\"\n[[packages]]\nname = \"A_B\"\nversion = \"1.0.0\"\nwheels = [{path = \"dependencies/a_b-1.0.0-py3-none-any.whl\", hashes = {sha256 = \""+strings.ToUpper(goodDigest)+"\"}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := rel.Packages[0]
	if p.Name != "a-b" || p.Version != "1" && p.Version != "1.0.0" || p.Wheels[0].Path != "/locks/dependencies/a_b-1.0.0-py3-none-any.whl" || p.Wheels[0].SHA256 != goodDigest {
		t.Errorf("package %+v", p)
	}
}

// writePylock writes a pylock.toml for the fixture's files: paths
// relative to the lock, or URLs on base when base is not "".
func (fx *fixture) pylock(t *testing.T, base string, mutate func(name string, entry *string)) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("lock-version = \"1.0\"\ncreated-by = \"test\"\nrequires-python = \">=3.9\"\n")
	dir := t.TempDir()
	for _, project := range mapKeys(fx.files) {
		p := fx.files[project]
		name := filepath.Base(p)
		_, rest, _ := strings.Cut(name, "-")
		version, _, _ := strings.Cut(rest, "-")
		loc := ""
		if base != "" {
			loc = fmt.Sprintf("url = %q", base+name)
		} else {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				t.Fatal(err)
			}
			loc = fmt.Sprintf("path = %q", filepath.ToSlash(rel))
		}
		entry := fmt.Sprintf("\n[[packages]]\nname = %q\nversion = %q\nwheels = [{name = %q, %s, size = %d, hashes = {sha256 = %q}}]\n",
			project, version, name, loc, fileSize(t, p), sha256File(t, p))
		if mutate != nil {
			mutate(project, &entry)
		}
		b.WriteString(entry)
	}
	path := filepath.Join(dir, "pylock.toml")
	os.WriteFile(path, []byte(b.String()), 0o644)
	return path
}

func fileSize(t testing.TB, p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func TestResolvePylockPaths(t *testing.T) {
	fx := newFixture(t)
	lock, err := ReadPylock(fx.pylock(t, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, c)
}

func TestResolvePylockURLs(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "html", fixtureIndexFiles(fx))
	lock, err := ReadPylock(fx.pylock(t, ix.srv.URL+"/files/", nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, c)
	// The lock names the files: no index page is read, and the second
	// resolve is served by the cache.
	before := ix.requests.Load()
	if _, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux); err != nil {
		t.Fatal(err)
	}
	if n := ix.requests.Load() - before; n != 0 {
		t.Errorf("%d requests on the second resolve", n)
	}
}

func TestRefusePylockMismatch(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "html", fixtureIndexFiles(fx))
	ix.tamper[filepath.Base(fx.files["example"])] = true
	lock, err := ReadPylock(fx.pylock(t, ix.srv.URL+"/files/", nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{CacheDir: filepath.Join(fx.dir, "cache")}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindHashMismatch)
	var hm *HashMismatchError
	if !errors.As(r, &hm) || hm.WantSize == 0 {
		t.Errorf("refusal %+v", r)
	}
}

func TestRefusePylockSdistAndVCS(t *testing.T) {
	fx := newFixture(t)
	lock, err := ReadPylock(fx.pylock(t, "", func(project string, entry *string) {
		switch project {
		case "example":
			*entry = fmt.Sprintf("\n[[packages]]\nname = \"example\"\nversion = \"21.12\"\nsdist = {url = \"https://x.invalid/example-21.12.tar.gz\", hashes = {sha256 = %q}}\n", goodDigest)
		case "pip":
			*entry = "\n[[packages]]\nname = \"pip\"\nvcs = {type = \"git\", url = \"https://x.invalid/pip.git\", commit-id = \"abc\"}\nversion = \"23.0.1\"\n"
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	r := refusal(t, fx.roots, lock, f, targetLinux, KindSdistOnly)
	if r.Package != "example" {
		t.Errorf("refusal %+v", r)
	}
	u := refusal(t, fx.roots, lock, f, targetLinux, KindUnsupported)
	if u.Package != "pip" || !strings.Contains(u.Detail, "vcs") {
		t.Errorf("refusal %+v", u)
	}
}

func TestRefuseLockRequiresPython(t *testing.T) {
	fx := newFixture(t)
	lock, err := ReadPylock(fx.pylock(t, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	f := &Finder{CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	old := Target{Name: "old", Platform: "manylinux_2_17_x86_64", Pythons: []string{"3.8", "3.9"}}
	r := refusal(t, fx.roots, lock, f, old, KindLock)
	if len(r.Pythons) != 1 || r.Pythons[0] != "3.8" {
		t.Errorf("refusal %+v", r)
	}
}
