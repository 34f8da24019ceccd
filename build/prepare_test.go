package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
)

func TestConfigDrift(t *testing.T) {
	cfg := func() *config.Config {
		return &config.Config{
			Sources:    []config.Source{{Name: "a", Local: "src"}},
			Overlays:   []config.Overlay{{Name: "o1", Source: "a", Patch: "1.patch"}, {Name: "o2", Source: "a", Patch: "2.patch"}},
			Toolchains: []config.Toolchain{{Name: "cc", Command: []string{"cc"}, PerTarget: true}},
			Targets:    []config.Target{{Name: "t1"}, {Name: "t2"}},
		}
	}
	locked := &lock.Lock{
		Sources:    []lock.Source{{Name: "a", Kind: "local", Location: "src"}},
		Overlays:   []lock.Overlay{{Name: "o1", Source: "a", Kind: "patch", Path: "1.patch"}, {Name: "o2", Source: "a", Kind: "patch", Path: "2.patch"}},
		Toolchains: []lock.Toolchain{{Name: "cc", Target: "t1"}, {Name: "cc", Target: "t2"}},
	}
	cases := []struct {
		name   string
		change func(*config.Config)
		want   string // substring of the single drift; "" for none
	}{
		{"unchanged", func(*config.Config) {}, ""},
		{"source moved", func(c *config.Config) { c.Sources[0].Local = "elsewhere" }, "source a: release.toml points elsewhere"},
		{"source kind", func(c *config.Config) { c.Sources[0] = config.Source{Name: "a", Git: "u", Commit: "c"} }, "points elsewhere"},
		{"source added", func(c *config.Config) { c.Sources = append(c.Sources, config.Source{Name: "b", Local: "b"}) }, "source b: not in the lock"},
		{"source removed", func(c *config.Config) { c.Sources = nil }, "source a: locked but no longer"},
		{"overlays reordered", func(c *config.Config) { c.Overlays[0], c.Overlays[1] = c.Overlays[1], c.Overlays[0] }, "order of the overlays changed"},
		{"overlay path", func(c *config.Config) { c.Overlays[1].Patch = "3.patch" }, "overlay o2: release.toml declares it differently"},
		{"overlay removed", func(c *config.Config) { c.Overlays = c.Overlays[:1] }, "overlay o2: locked but no longer"},
		{"target added", func(c *config.Config) { c.Targets = append(c.Targets, config.Target{Name: "t3"}) }, "toolchain cc [t3]: not in the lock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg()
			tc.change(c)
			d := configDrift(c, locked)
			switch {
			case tc.want == "" && len(d) != 0:
				t.Errorf("configDrift = %v, want none", d)
			case tc.want != "" && len(d) != 1:
				t.Errorf("configDrift = %v, want one drift %q", d, tc.want)
			case tc.want != "" && !strings.Contains(d[0].Entry+": "+d[0].What, tc.want):
				t.Errorf("configDrift = %q, want %q", d[0].Entry+": "+d[0].What, tc.want)
			}
		})
	}
}

// project writes files into a new project folder and loads its
// release.toml (so that errors have positions).
func project(t *testing.T, files map[string]string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := config.Parse("release.toml", dir, []byte(files["release.toml"]))
	if err != nil {
		t.Fatalf("release.toml refused:\n%v", err)
	}
	return c
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg})
		tw.Write([]byte(files[n]))
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func runGitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_DATE=2026-11-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-11-01T00:00:00Z")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Sources of every kind lock and verify in every position: an archive as
// the first source used to fail ("stat .../src: no such file or
// directory"), as nothing had created the workspaces' folder yet.
func TestPrepareSourcesInEveryOrder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	repo := t.TempDir()
	runGitT(t, repo, "init", "-q")
	os.WriteFile(filepath.Join(repo, "msg.txt"), []byte("from git\n"), 0o644)
	runGitT(t, repo, "add", "-A")
	runGitT(t, repo, "commit", "-q", "-m", "v1")
	commit := runGitT(t, repo, "rev-parse", "HEAD")
	archive := tarGz(t, map[string]string{"vendor-1.0/lib.txt": "vendored\n"})
	sum := sha256.Sum256(archive)
	decl := map[string]string{
		"local":   "[[source]]\nname = \"loc\"\nlocal = \"src\"\n",
		"git":     fmt.Sprintf("[[source]]\nname = \"up\"\ngit = %q\ncommit = %q\n", "file://"+repo, commit),
		"archive": fmt.Sprintf("[[source]]\nname = \"vendor\"\narchive = \"vendor.tar.gz\"\nstrip_components = 1\nsha256 = %q\n", hex.EncodeToString(sum[:])),
	}
	file := map[string]string{"local": "src/hello.txt", "git": "msg.txt", "archive": "lib.txt"}
	name := map[string]string{"local": "loc", "git": "up", "archive": "vendor"}
	for _, order := range [][]string{
		{"archive", "git", "local"}, {"archive", "local", "git"},
		{"git", "archive", "local"}, {"local", "archive", "git"},
		{"git", "local", "archive"}, {"local", "git", "archive"},
	} {
		t.Run(strings.Join(order, "-"), func(t *testing.T) {
			toml := "[project]\nname = \"demo\"\nversion = \"1.0\"\n[[target]]\nname = \"t1\"\n"
			for _, k := range order {
				toml += decl[k]
			}
			c := project(t, map[string]string{"release.toml": toml, "src/hello.txt": "local\n"})
			os.WriteFile(filepath.Join(c.Dir, "vendor.tar.gz"), archive, 0o644)
			f := &source.Fetcher{ProjectDir: c.Dir, CacheDir: t.TempDir()}
			p, err := Prepare(context.Background(), PrepareOptions{Config: c, Fetcher: f, Scratch: t.TempDir(), LockOnly: true})
			if err != nil {
				t.Fatalf("lock: %v", err)
			}
			for _, k := range order {
				if _, err := os.Stat(filepath.Join(p.Workspaces[name[k]], filepath.FromSlash(strings.TrimPrefix(file[k], "src/")))); err != nil {
					t.Errorf("%s source: %v", k, err)
				}
			}
			if s, _ := p.Found.Source("vendor"); s.Size != int64(len(archive)) {
				t.Errorf("locked archive size = %d, want %d", s.Size, len(archive))
			}
			// And the lock just made verifies, as check and build do.
			if _, err := Prepare(context.Background(), PrepareOptions{Config: c, Lock: p.Found, LockFile: "release.lock", Relock: "mkrelease lock",
				Fetcher: f, Scratch: t.TempDir()}); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
}

func TestExpected(t *testing.T) {
	s := config.Source{Name: "v", Archive: "https://example.invalid/v.tgz", SHA256: "aa"}
	l := &lock.Lock{Sources: []lock.Source{{Name: "v", Kind: "archive", SHA256: "aa", Size: 42}}}
	other := &lock.Lock{Sources: []lock.Source{{Name: "v", Kind: "archive", SHA256: "bb", Size: 42}}}
	for _, tc := range []struct {
		name string
		l    *lock.Lock
		s    config.Source
		want int64
	}{
		{"locked", l, s, 42},
		{"no lock", nil, s, 0},
		{"another digest pinned: the drift is reported, the old size not used", other, s, 0},
		{"not an archive", l, config.Source{Name: "v", Local: "src"}, 0},
		{"older lock without size", &lock.Lock{Sources: []lock.Source{{Name: "v", Kind: "archive", SHA256: "aa"}}}, s, 0},
	} {
		if got := expected(tc.l, tc.s).ArchiveSize; got != tc.want {
			t.Errorf("%s: ArchiveSize = %d, want %d", tc.name, got, tc.want)
		}
	}
}

const preflightTOML = `[project]
name = "demo"
version = "1.0"
readme = "README.md"

[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.12"]

[dependencies]
lock = "requirements.txt"
find_links = ["wheels"]

[signing]
trusted_keys = ["keys/release.pub"]

[evidence]
verifier = "verifier"

[policy]
files = ["extra.rego"]

[[source]]
name = "up"
local = "src"

[[target]]
name = "t1"
`

func preflightFiles(t *testing.T) map[string]string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	return map[string]string{
		"release.toml":     preflightTOML,
		"README.md":        "# demo\r\n\nA readme.\n",
		"CHANGELOG.md":     "# Changes\n\n## 1.0\n\nFirst.\n",
		"requirements.txt": "",
		"wheels/.keep":     "",
		"keys/release.pub": string(pub),
		"verifier/run.py":  "",
		"extra.rego":       "package mkrelease.release\n",
		"src/a.txt":        "a\n",
	}
}

func TestPreflight(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(files map[string]string)
		want   string // the first error's first line; "" for none
	}{
		{"all there", func(map[string]string) {}, ""},
		{"readme missing", func(f map[string]string) { delete(f, "README.md") },
			"release.toml:4:10: project.readme: README.md: no such file"},
		{"readme with NUL", func(f map[string]string) { f["README.md"] = "# demo\n\nbad \x00 byte\n" },
			"release.toml:4:10: project.readme: README.md:3:5 holds U+0000 NUL"},
		{"readme with a lone carriage return", func(f map[string]string) { f["README.md"] = "ok\nhidden\rshown\n" },
			"release.toml:4:10: project.readme: README.md:2:7 holds U+000D CARRIAGE RETURN"},
		{"readme not UTF-8", func(f map[string]string) { f["README.md"] = "caf\xe9\n" },
			"release.toml:4:10: project.readme: README.md:1:4 holds an invalid UTF-8 byte 0xe9"},
		{"changelog missing", func(f map[string]string) { delete(f, "CHANGELOG.md") },
			"release.toml:7:13: bundle.changelog: CHANGELOG.md: no such file"},
		{"changelog without this version", func(f map[string]string) { f["CHANGELOG.md"] = "## 0.9\n\nOld.\n" },
			"release.toml:7:13: bundle.changelog: CHANGELOG.md has no section for version 1.0"},
		{"dependency lock missing", func(f map[string]string) { delete(f, "requirements.txt") },
			"release.toml:11:8: dependencies.lock:"},
		{"dependency lock unpinned", func(f map[string]string) { f["requirements.txt"] = "numpy>=1\n" },
			"release.toml:11:8: dependencies.lock: "},
		{"find-links folder missing", func(f map[string]string) { delete(f, "wheels/.keep") },
			"release.toml:12:15: dependencies.find_links[0]: wheels: no such folder"},
		{"trusted key not a key", func(f map[string]string) { f["keys/release.pub"] = "hello\n" },
			"release.toml:15:17: signing.trusted_keys[0]: keys/release.pub:"},
		{"trusted key not there yet", func(f map[string]string) { delete(f, "keys/release.pub") }, ""},
		{"verifier missing", func(f map[string]string) { delete(f, "verifier/run.py") },
			"release.toml:18:12: evidence.verifier: verifier: no such folder"},
		{"policy file missing", func(f map[string]string) { delete(f, "extra.rego") },
			"release.toml:21:10: policy.files[0]: extra.rego: no such file"},
		{"KMS provider not compiled in", func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], "[signing]\n", "[signing]\nkey = \"hashivault://release\"\n", 1)
		}, "release.toml:15:7: signing.key: KMS scheme hashivault:// is not compiled into this mkrelease"},
		{"signing key file missing", func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], "[signing]\n", "[signing]\nkey = \"file:///nonexistent/release.key\"\n", 1)
		}, "release.toml:15:7: signing.key: signing key file /nonexistent/release.key not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := preflightFiles(t)
			tc.change(files)
			err := Preflight(project(t, files))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Preflight: %v", err)
				}
				return
			}
			var list config.ErrorList
			if !errors.As(err, &list) || list.ExitCode() != 2 {
				t.Fatalf("Preflight = %v, want a config.ErrorList", err)
			}
			if first, _, _ := strings.Cut(list[0].Error(), "\n"); !strings.HasPrefix(first, tc.want) {
				t.Errorf("error = %q\n   want %q", first, tc.want)
			}
		})
	}
}

const workspaceTOML = `[project]
name = "demo"
version = "1.0"
[build]
source_date_epoch = 1793491200

[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.12"]

[[source]]
name = "py"
local = "py"

[[target]]
name = "t1"

[[build.step]]
name = "tool"
source = "py"
dir = "cmd"
run = ["true"]
outputs = ["bin/tool", "lib/x.so"]

[[wheel]]
name = "demo"
[[wheel.include]]
source = "py"
from = "demo"
to = "demo"
[[wheel.include]]
step = "tool"
from = "bin/tool"
to = "demo/bin/"
[[wheel.include]]
step = "tool"
from = "lib"
to = "demo/lib"
[[wheel.licenses]]
source = "py"
from = "LICENSE"
`

func TestCheckWorkspaces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(files map[string]string)
		want   string
	}{
		{"all there", func(map[string]string) {}, ""},
		{"include from missing in the source", func(f map[string]string) { delete(f, "py/demo/__init__.py") },
			"release.toml:29:8: wheel[0].include[0].from: source py has no demo"},
		{"license missing in the source", func(f map[string]string) { delete(f, "py/LICENSE") },
			"release.toml:41:8: wheel[0].licenses[0].from: source py has no LICENSE"},
		{"step folder missing", func(f map[string]string) { delete(f, "py/cmd/main.go") },
			"release.toml:21:7: build.step[0].dir: source py has no folder cmd"},
		{"two includes put the same file", func(f map[string]string) {
			f["py/demo/bin/tool"] = "shadowed by the step's output"
		}, "release.toml:31:3: wheel[0].include[1]: puts demo/bin/tool into wheel demo [t1], as wheel[0].include[0] does"},
		{"the same wheel path for two targets, one include each", func(f map[string]string) {
			f["py/demo/bin/tool"] = "the tool of t2"
			r := strings.Replace(f["release.toml"], "[[target]]\nname = \"t1\"\n", "[[target]]\nname = \"t1\"\n[[target]]\nname = \"t2\"\n", 1)
			r = strings.Replace(r, "outputs = [\"bin/tool\", \"lib/x.so\"]\n", "outputs = [\"bin/tool\", \"lib/x.so\"]\ntargets = [\"t1\"]\n", 1)
			r = strings.Replace(r, "from = \"demo\"\nto = \"demo\"\n", "from = \"demo\"\nto = \"demo\"\ntargets = [\"t2\"]\n", 1)
			r = strings.Replace(r, "to = \"demo/bin/\"\n", "to = \"demo/bin/\"\ntargets = [\"t1\"]\n", 1)
			r = strings.Replace(r, "to = \"demo/lib\"\n", "to = \"demo/lib\"\ntargets = [\"t1\"]\n", 1)
			f["release.toml"] = r
		}, ""},
		{"a file placed at the wheel root as .", func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], "from = \"demo\"\nto = \"demo\"", "from = \"demo/__init__.py\"\nto = \".\"", 1)
		}, `release.toml:30:6: wheel[0].include[0].to: places a file at ".", which is not a path inside the wheel`},
		{"a folder bringing its own .dist-info", func(f map[string]string) {
			f["py/demo/x.dist-info/METADATA"] = "forged"
			f["release.toml"] = strings.Replace(f["release.toml"], "from = \"demo\"\nto = \"demo\"", "from = \"demo\"\nto = \".\"", 1)
		}, "release.toml:30:6: wheel[0].include[0].to: places x.dist-info/METADATA in a folder mkrelease writes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"release.toml": workspaceTOML, "CHANGELOG.md": "## 1.0\n",
				"py/demo/__init__.py": "", "py/LICENSE": "MIT\n", "py/cmd/main.go": "package main\n",
			}
			tc.change(files)
			c := project(t, files)
			f := &source.Fetcher{ProjectDir: c.Dir, CacheDir: t.TempDir()}
			_, err := Prepare(context.Background(), PrepareOptions{Config: c, Fetcher: f, Scratch: t.TempDir()})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Prepare: %v", err)
				}
				return
			}
			var list config.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Prepare = %v, want a config.ErrorList", err)
			}
			if first, _, _ := strings.Cut(list[0].Error(), "\n"); first != tc.want {
				t.Errorf("error = %q\n   want %q", first, tc.want)
			}
			// Locking does not need the wheel's files yet.
			if _, err := Prepare(context.Background(), PrepareOptions{Config: c, Fetcher: f, Scratch: t.TempDir(), LockOnly: true}); err != nil {
				t.Errorf("LockOnly: %v", err)
			}
		})
	}
}

// The embedded default (the repository's release.toml) passes Preflight:
// every file it names is there, and its changelog has this version.
func TestPreflightEmbeddedDefault(t *testing.T) {
	c, err := config.Load("../release.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Preflight(c); err != nil {
		t.Fatalf("Preflight refuses the embedded default:\n%v", err)
	}
}

// TestToolchainsFromTheirPath checks that a toolchain with a path is found
// in that project folder (not on mkrelease's PATH), and that a missing
// folder is refused naming it.
func TestToolchainsFromTheirPath(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for the toolchain")
	}
	dir := t.TempDir()
	tools := filepath.Join(dir, ".toolchains", "fakecc-1.0")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, "fakecc"), []byte("#!/bin/sh\necho \"fakecc 1.0 for $MKRELEASE_FAKE_TARGET\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := &config.Config{Dir: dir,
		Toolchains: []config.Toolchain{{Name: "fakecc", Command: []string{"fakecc", "--version"}, Path: ".toolchains/fakecc-1.0", PerTarget: true}},
		Targets:    []config.Target{{Name: "a", Env: map[string]string{"MKRELEASE_FAKE_TARGET": "a"}}}}
	run := executor.New(context.Background(), executor.Options{})
	got, err := Toolchains(context.Background(), c, digestmemo.Memo{}, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Version != "fakecc 1.0 for a" || got[0].Target != "a" {
		t.Errorf("Toolchains = %+v", got)
	}
	c.Toolchains[0].Path = ".toolchains/missing"
	_, err = Toolchains(context.Background(), c, digestmemo.Memo{}, run)
	var te *ToolchainError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "its folder .toolchains/missing (path in release.toml) is not there") {
		t.Errorf("Toolchains with a missing folder = %v", err)
	}
}

func TestReadInPlace(t *testing.T) {
	base := "[project]\nname = \"demo\"\nversion = \"1.0\"\n[[target]]\nname = \"t1\"\n" +
		"[[source]]\nname = \"loc\"\nlocal = \"src\"\n[[source]]\nname = \"other\"\nlocal = \"other\"\n"
	for _, tt := range []struct {
		name, extra string
		want        bool
	}{
		{"only wheels read it", "", true},
		{"an overlay changes it", "[[overlay]]\nname = \"fix\"\nsource = \"loc\"\npatch = \"fix.patch\"\n", false},
		{"a step builds it", "[[build.step]]\nname = \"make\"\nsource = \"loc\"\nrun = [\"make\"]\noutputs = [\"x\"]\n", false},
		{"a step uses it", "[[build.step]]\nname = \"make\"\nsource = \"other\"\nuses = [\"loc\"]\nrun = [\"make\"]\noutputs = [\"x\"]\n", false},
		{"a step builds another source", "[[build.step]]\nname = \"make\"\nsource = \"other\"\nrun = [\"make\"]\noutputs = [\"x\"]\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := project(t, map[string]string{"release.toml": base + tt.extra, "src/a.txt": "a\n", "other/b.txt": "b\n", "fix.patch": ""})
			s, _ := c.Source("loc")
			if got := ReadInPlace(c, s); got != tt.want {
				t.Errorf("ReadInPlace = %v, want %v", got, tt.want)
			}
		})
	}
}

// A local source only wheels read is hashed where it is, in the project,
// not copied; its digests are remembered in one table, and a file that
// changes is hashed again.
func TestPrepareReadsLocalSourcesInPlace(t *testing.T) {
	c := project(t, map[string]string{
		"release.toml": "[project]\nname = \"demo\"\nversion = \"1.0\"\n[[target]]\nname = \"t1\"\n[[source]]\nname = \"loc\"\nlocal = \"src\"\n",
		"src/a.txt":    "a\n", "src/sub/b.txt": "b\n", "src/.git/HEAD": "not source\n",
	})
	memo := digestmemo.Memo{Dir: t.TempDir(), Now: func() time.Time { return time.Now().Add(time.Hour) }}
	scratch := t.TempDir()
	prepare := func() *Prepared {
		t.Helper()
		p, err := Prepare(context.Background(), PrepareOptions{Config: c, Fetcher: &source.Fetcher{ProjectDir: c.Dir, CacheDir: t.TempDir()},
			Scratch: scratch, LockOnly: true, Trees: memo})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := prepare()
	if want := filepath.Join(c.Dir, "src"); p.Workspaces["loc"] != want {
		t.Errorf("workspace %s, want the project's folder %s", p.Workspaces["loc"], want)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("copied into the scratch folder: %v", left)
	}
	want := map[string]string{"a.txt": checksum.Bytes([]byte("a\n")), "sub/b.txt": checksum.Bytes([]byte("b\n"))}
	if !reflect.DeepEqual(p.Trees["loc"], want) {
		t.Errorf("tree %v, want %v", p.Trees["loc"], want)
	}
	if tables, _ := os.ReadDir(filepath.Join(memo.Dir, "tables")); len(tables) != 1 {
		t.Errorf("digest tables: %d, want 1", len(tables))
	}
	os.WriteFile(filepath.Join(c.Dir, "src", "a.txt"), []byte("A\n"), 0o644)
	if got := prepare().Trees["loc"]["a.txt"]; got != checksum.Bytes([]byte("A\n")) {
		t.Errorf("a changed file kept its old digest %s", got)
	}
}
