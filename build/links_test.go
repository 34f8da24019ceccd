package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/source"
)

// linksTOML names every kind of project file a release reads: a readme, a
// changelog, a dependency lock, a find-links folder, a trusted key, a
// verifier folder, a policy file, a local source read in place (with a
// wheel include and a license file from it), a local source copied for its
// overlays (a patch and a tree), and a local archive.
const linksTOML = `[project]
name = "demo"
version = "1.0"
readme = "README.md"

[build]
source_date_epoch = 1793491200

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
name = "lib"
local = "lib"

[[source]]
name = "up"
local = "src"

[[source]]
name = "vendor"
archive = "vendor.tar.gz"
sha256 = "@VENDOR@"

[[overlay]]
name = "fix"
source = "up"
patch = "patches/fix.patch"

[[overlay]]
name = "extra"
source = "up"
tree = "overlay"

[[target]]
name = "t1"

[[wheel]]
name = "demo"
[[wheel.include]]
source = "lib"
from = "demo"
to = "demo"
[[wheel.licenses]]
source = "lib"
from = "LICENSE"
`

const fixPatch = `diff --git a/a.txt b/a.txt
--- a/a.txt
+++ b/a.txt
@@ -1 +1 @@
-a
+b
`

// linksFiles are the files of the project of linksTOML, all regular.
func linksFiles(t *testing.T) map[string]string {
	files := preflightFiles(t)
	files["release.toml"] = linksTOML
	files["lib/demo/__init__.py"] = "ANSWER = 42\n"
	files["lib/LICENSE"] = "MIT\n"
	files["src/a.txt"] = "a\n"
	files["patches/fix.patch"] = fixPatch
	files["overlay/extra.txt"] = "extra\n"
	files["vendor.tar.gz"] = string(tarGz(t, map[string]string{"v.txt": "vendored\n"}))
	sum := sha256.Sum256([]byte(files["vendor.tar.gz"]))
	files["release.toml"] = strings.Replace(files["release.toml"], "@VENDOR@", hex.EncodeToString(sum[:]), 1)
	return files
}

// checkProject does what `mkrelease check` (and the start of `mkrelease
// build`) does with the project in dir: load release.toml, then prepare
// the release as a build would (Preflight, sources, overlays, workspace
// checks).
func checkProject(t *testing.T, dir string) error {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "release.toml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := config.Parse("release.toml", dir, data)
	if err != nil {
		return err
	}
	_, err = Prepare(context.Background(), PrepareOptions{Config: c, Scratch: t.TempDir(),
		Fetcher: &source.Fetcher{ProjectDir: dir, CacheDir: t.TempDir()}})
	return err
}

// A symbolic link in the project that leads outside it, to a file or a
// folder, or as a folder on the way, is refused by check and build for
// every kind of project file a release reads, naming the link: what it
// points to never reaches a wheel, RELEASE_NOTES.md, the closure, the
// trusted keys, the verifier or the policies. The same project with
// regular files, or with links that stay inside it, is accepted.
func TestProjectLinksLeavingTheProject(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	usePyproject := func(readme string) func(f map[string]string) {
		return func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], `readme = "README.md"`, `from = "pyproject.toml"`, 1)
			f["pyproject.toml"] = "[project]\nname = \"demo\"\nversion = \"1.0\"\nreadme = " + readme + "\n"
		}
	}
	move := func(key, from, to string) func(f map[string]string) {
		return func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], key+` = "`+from+`"`, key+` = "`+to+`"`, 1)
			if strings.HasSuffix(from, "/") || !strings.Contains(from, ".") {
				for p, body := range f {
					if rest, ok := strings.CutPrefix(p, from+"/"); ok {
						delete(f, p)
						f[to+"/"+rest] = body
					}
				}
				return
			}
			f[to] = f[from]
			delete(f, from)
		}
	}
	moveList := func(key, from, to string) func(f map[string]string) {
		return func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], key+` = ["`+from+`"]`, key+` = ["`+to+`"]`, 1)
			for p, body := range f {
				if p == from {
					delete(f, p)
					f[to] = body
				} else if rest, ok := strings.CutPrefix(p, from+"/"); ok {
					delete(f, p)
					f[to+"/"+rest] = body
				}
			}
		}
	}
	for _, tc := range []struct {
		name string
		edit func(f map[string]string) // nil: linksFiles as they are
		// out is the project path moved outside the project, and a
		// symbolic link to it left in its place.
		out string
		// in, when set, is a link to make inside the project (link →
		// target, relative to the link's folder) instead of out: it is
		// followed.
		in   [2]string
		want string // what the refusal says; "" when accepted
	}{
		{name: "all regular files"},

		{name: "readme", out: "README.md", want: "project.readme: README.md is a symbolic link to ../outside/README.md, outside the project"},
		{name: "readme through a linked folder", edit: move("readme", "README.md", "docs/README.md"), out: "docs",
			want: "project.readme: docs/README.md: docs is a symbolic link to ../outside/docs, outside the project"},
		{name: "readme of pyproject.toml", edit: usePyproject(`"README.md"`), out: "README.md",
			want: "pyproject.toml:4:10: project.readme: README.md is a symbolic link to ../outside/README.md"},
		{name: "readme table of pyproject.toml", edit: usePyproject(`{ file = "README.md", content-type = "text/markdown" }`), out: "README.md",
			want: "pyproject.toml:4:10: project.readme: README.md is a symbolic link to ../outside/README.md"},
		{name: "pyproject.toml", edit: usePyproject(`"README.md"`), out: "pyproject.toml",
			want: "project.from: pyproject.toml is a symbolic link to ../outside/pyproject.toml, outside the project"},
		{name: "changelog", out: "CHANGELOG.md", want: "bundle.changelog: CHANGELOG.md is a symbolic link to ../outside/CHANGELOG.md, outside the project"},
		{name: "changelog through a linked folder", edit: move("changelog", "CHANGELOG.md", "docs/CHANGELOG.md"), out: "docs",
			want: "bundle.changelog: docs/CHANGELOG.md: docs is a symbolic link to ../outside/docs"},
		{name: "dependency lock", out: "requirements.txt", want: "dependencies.lock: requirements.txt is a symbolic link to ../outside/requirements.txt"},
		{name: "find-links folder", out: "wheels", want: "dependencies.find_links[0]: wheels is a symbolic link to ../outside/wheels"},
		{name: "trusted key", out: "keys/release.pub", want: "signing.trusted_keys[0]: keys/release.pub is a symbolic link to ../../outside/keys/release.pub"},
		{name: "trusted key through a linked folder", out: "keys", want: "signing.trusted_keys[0]: keys/release.pub: keys is a symbolic link to ../outside/keys"},
		{name: "verifier folder", out: "verifier", want: "evidence.verifier: verifier is a symbolic link to ../outside/verifier"},
		{name: "policy file", out: "extra.rego", want: "policy.files[0]: extra.rego is a symbolic link to ../outside/extra.rego"},
		{name: "policy file through a linked folder", edit: moveList("files", "extra.rego", "policy/extra.rego"), out: "policy",
			want: "policy.files[0]: policy/extra.rego: policy is a symbolic link to ../outside/policy"},
		{name: "overlay patch", out: "patches/fix.patch", want: "patches/fix.patch is a symbolic link to ../../outside/patches/fix.patch, outside the project"},
		{name: "overlay patch through a linked folder", out: "patches", want: "patches/fix.patch: patches is a symbolic link to ../outside/patches"},
		{name: "overlay tree", out: "overlay", want: "overlay is a symbolic link to ../outside/overlay, outside the project"},
		{name: "local source read in place", out: "lib", want: "source lib: local folder lib is a symbolic link to ../outside/lib, outside the project"},
		{name: "local source copied", out: "src", want: "source up: local folder src is a symbolic link to ../outside/src"},
		{name: "local source through a linked folder", edit: move("local", "lib", "third/lib"), out: "third",
			want: "source lib: local folder third/lib: third is a symbolic link to ../outside/third"},
		{name: "local archive", out: "vendor.tar.gz", want: "source vendor: archive vendor.tar.gz is a symbolic link to ../outside/vendor.tar.gz"},
		{name: "wheel include file in a source", out: "lib/demo/__init__.py", want: "demo/__init__.py: symbolic link in source tree"},
		{name: "license file in a source", out: "lib/LICENSE", want: "LICENSE: symbolic link in source tree"},
		{name: "wheel include from a folder the tree leaves out", edit: func(f map[string]string) {
			f["release.toml"] = strings.Replace(f["release.toml"], "from = \"LICENSE\"", "from = \"__pycache__/LICENSE\"", 1)
			f["lib/__pycache__/LICENSE"] = "MIT\n"
		}, out: "lib/__pycache__/LICENSE", want: "wheel[0].licenses[0].from: source lib has no __pycache__/LICENSE"},

		// Links that stay inside the project are followed.
		{name: "readme linked inside", edit: move("readme", "README.md", "docs/README.md"), in: [2]string{"README.md", "docs/README.md"}},
		{name: "readme through a folder linked inside", edit: move("readme", "README.md", "docs/README.md"), in: [2]string{"d", "docs"}},
		{name: "local source linked inside", edit: func(f map[string]string) {
			for p, body := range f {
				if rest, ok := strings.CutPrefix(p, "lib/"); ok {
					delete(f, p)
					f["real/lib/"+rest] = body
				}
			}
		}, in: [2]string{"lib", "real/lib"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := linksFiles(t)
			if tc.edit != nil {
				tc.edit(files)
			}
			top := t.TempDir()
			dir := filepath.Join(top, "project")
			for name, body := range files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.in[0] == "d" {
				// a second name for a folder, the release naming it by the link
				files["release.toml"] = strings.Replace(files["release.toml"], `readme = "docs/README.md"`, `readme = "d/README.md"`, 1)
				os.WriteFile(filepath.Join(dir, "release.toml"), []byte(files["release.toml"]), 0o644)
			}
			if tc.in[0] != "" {
				if err := os.Symlink(tc.in[1], filepath.Join(dir, tc.in[0])); err != nil {
					t.Fatal(err)
				}
				if tc.in[0] == "README.md" {
					files["release.toml"] = strings.Replace(files["release.toml"], `readme = "docs/README.md"`, `readme = "README.md"`, 1)
					os.WriteFile(filepath.Join(dir, "release.toml"), []byte(files["release.toml"]), 0o644)
				}
			}
			if tc.out != "" {
				// Move it out, and link to it where it was.
				at := filepath.Join(dir, filepath.FromSlash(tc.out))
				there := filepath.Join(top, "outside", filepath.FromSlash(tc.out))
				if err := os.MkdirAll(filepath.Dir(there), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(at, there); err != nil {
					t.Fatal(err)
				}
				rel, err := filepath.Rel(filepath.Dir(at), there)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(rel, at); err != nil {
					t.Fatal(err)
				}
			}
			err := checkProject(t, dir)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("check refused it:\n%v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("check = %v\nwant a refusal saying %q", err, tc.want)
			}
		})
	}
}
