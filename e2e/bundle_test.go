package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realWheel finds a third-party wheel that ships on this machine (CPython's
// test data, ensurepip, Debian's python3-*-whl), failing when it is absent.
func realWheel(t *testing.T, glob string) string {
	t.Helper()
	for _, dir := range []string{
		"/root/.pyenv/versions/*/lib/python3.*/test/test_importlib/data",
		"/root/.pyenv/versions/*/lib/python3.*/test/wheeldata",
		"/usr/share/python-wheels",
		"/root/.pyenv/versions/*/lib/python3.*/ensurepip/_bundled",
	} {
		if m, _ := filepath.Glob(filepath.Join(dir, glob)); len(m) > 0 {
			return m[0]
		}
	}
	t.Fatalf("no %s on this machine: the closure tests use the wheels of CPython's test data (pyenv) or Debian's python3-pip-whl", glob)
	return ""
}

func fileSHA(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func write(t *testing.T, p, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(to), 0o755)
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// demoProject writes a small pure-Python release, demo-app, whose wheel
// requires real third-party wheels; deps is its [dependencies] table.
func demoProject(t *testing.T, requires []string, deps string) run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	quoted := make([]string, len(requires))
	for i, r := range requires {
		quoted[i] = fmt.Sprintf("%q", r)
	}
	write(t, filepath.Join(dir, "release.toml"), `[project]
name = "demo-app"
version = "2.0"
summary = "a demo with a real dependency closure"
license = "MIT"
authors = [{ name = "demo team", email = "demo@example.invalid" }]

[build]
source_date_epoch = 1793491200

[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.11", "3.12", "3.13"]

[[source]]
name = "py"
local = "py"

[[target]]
name = "linux-x86_64"
install_platform = "manylinux_2_17_x86_64"

[[wheel]]
name = "demo-app"
requires_python = ">=3.8"
requires = [`+strings.Join(quoted, ", ")+`]
[[wheel.include]]
source = "py"
from = "demo_app"
to = "demo_app"

`+deps)
	write(t, filepath.Join(dir, "py", "demo_app", "__init__.py"), "import example\nimport wheel\n\ndef answer():\n    return 42\n")
	write(t, filepath.Join(dir, "CHANGELOG.md"), "# Changelog\n\n## 2.0\n- depends on example and wheel\n")
	r := run{dir: dir, umask: "022", env: []string{"HOME=" + t.TempDir(), "MKRELEASE_CACHE=" + filepath.Join(dir, "..", "cache")}}
	r.mustMkrelease(t, "lock")
	return r
}

// requirementsLock writes deps/requirements.txt pinning the given wheels by
// their sha256.
// closureProject is demoProject with a real dependency closure: it
// requires example and wheel, locked with hashes in deps/requirements.txt
// and found in a wheelhouse folder.
func closureProject(t *testing.T) run {
	t.Helper()
	example, wheelWhl := realWheel(t, "example-21.12-py3-none-any.whl"), realWheel(t, "wheel-0.4*-py3-none-any.whl")
	r := demoProject(t, []string{"example>=21", "wheel>=0.40"}, "[dependencies]\nlock = \"deps/requirements.txt\"\nfind_links = [\"wheelhouse\"]\n")
	for _, f := range []string{example, wheelWhl} {
		copyFile(t, f, filepath.Join(r.dir, "wheelhouse", filepath.Base(f)))
	}
	requirementsLock(t, r.dir, map[string]string{"example==21.12": example, "wheel==" + wheelVersion(wheelWhl): wheelWhl})
	return r
}

func requirementsLock(t *testing.T, dir string, pins map[string]string) {
	t.Helper()
	var b strings.Builder
	for spec, file := range pins {
		fmt.Fprintf(&b, "%s --hash=sha256:%s\n", spec, fileSHA(t, file))
	}
	write(t, filepath.Join(dir, "deps", "requirements.txt"), b.String())
}

// simpleIndex serves a PEP 503 index of files on 127.0.0.1; tamper maps a
// file name to bytes served instead of the file's own.
func simpleIndex(t *testing.T, files map[string][]string, tamper map[string][]byte) *httptest.Server {
	t.Helper()
	byName := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case len(parts) == 2 && parts[0] == "simple":
			paths, ok := files[parts[1]]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!DOCTYPE html><html><body>\n")
			for _, p := range paths {
				fmt.Fprintf(w, "<a href=\"/files/%s#sha256=%s\">%s</a>\n", filepath.Base(p), fileSHA(t, p), filepath.Base(p))
			}
			fmt.Fprintf(w, "</body></html>\n")
		case len(parts) == 2 && parts[0] == "files":
			if b, ok := tamper[parts[1]]; ok {
				w.Write(b)
				return
			}
			p, ok := byName[parts[1]]
			if !ok {
				http.NotFound(w, r)
				return
			}
			http.ServeFile(w, r, p)
		default:
			http.NotFound(w, r)
		}
	}))
	for _, paths := range files {
		for _, p := range paths {
			byName[filepath.Base(p)] = p
		}
	}
	t.Cleanup(srv.Close)
	return srv
}

func requireNetns(t *testing.T) {
	t.Helper()
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Fatalf("unshare -n does not work here (%v): the offline-install tests need a network namespace", err)
	}
}

// installOffline installs a bundle in a network namespace with no network,
// once with its own install.sh and once with mkrelease install, and runs
// check in each virtualenv.
func installOffline(t *testing.T, bundlePath, py string, check func(t *testing.T, venv string)) {
	t.Helper()
	requireNetns(t)
	work := t.TempDir()
	must(t, work, nil, "tar", "-xzf", bundlePath)
	root := strings.TrimSuffix(filepath.Base(bundlePath), ".tar.gz")
	shVenv := filepath.Join(work, "venv-sh")
	out := must(t, work, cleanEnv(), "unshare", "-n", "sh", filepath.Join(work, root, "install.sh"), shVenv, py)
	if !strings.Contains(out, "No broken requirements found") {
		t.Errorf("install.sh did not run pip check:\n%s", out)
	}
	check(t, shVenv)

	mkVenv := filepath.Join(work, "venv-mk")
	env := append(cleanEnv(), "PATH="+os.Getenv("PATH"))
	out = must(t, work, env, "unshare", "-n", mkrelease, "install", bundlePath, "--venv", mkVenv, "--python", py)
	if !strings.Contains(out, "installed into a new virtualenv") {
		t.Errorf("mkrelease install:\n%s", out)
	}
	check(t, mkVenv)
}

// TestBundleClosure builds a release whose wheel requires real third-party
// wheels, from a find-links folder and from a PEP 503 index served on
// 127.0.0.1, and installs each bundle with no network.
func TestBundleClosure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs bundles")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	example, wheelWhl := realWheel(t, "example-21.12-py3-none-any.whl"), realWheel(t, "wheel-0.4*-py3-none-any.whl")
	requires := []string{"example>=21", "wheel>=0.40; python_version >= '3.8'", "example2==1.0.0; sys_platform == 'win32'"}
	pins := map[string]string{"example==21.12": example, "wheel==" + wheelVersion(wheelWhl): wheelWhl}
	py := pythonFor(t, 12)
	checkInstalled := func(t *testing.T, venv string) {
		out := must(t, "", nil, filepath.Join(venv, "bin", "python"), "-c", "import demo_app, example, wheel; print(demo_app.answer())")
		if strings.TrimSpace(out) != "42" {
			t.Errorf("demo_app.answer() = %q", out)
		}
		must(t, "", nil, filepath.Join(venv, "bin", "python"), "-m", "pip", "check")
	}

	t.Run("find-links", func(t *testing.T) {
		r := demoProject(t, requires, "[dependencies]\nlock = \"deps/requirements.txt\"\nfind_links = [\"wheelhouse\"]\n")
		for _, f := range pins {
			copyFile(t, f, filepath.Join(r.dir, "wheelhouse", filepath.Base(f)))
		}
		requirementsLock(t, r.dir, pins)
		r.mustMkrelease(t, "build")
		b := filepath.Join(r.dir, "dist", "demo-app-2.0-linux-x86_64.tar.gz")
		out := must(t, "", nil, "tar", "-tzf", b)
		for _, want := range []string{"dependencies/" + filepath.Base(example), "dependencies/" + filepath.Base(wheelWhl), "licenses/example-21.12.txt", "licenses/THIRD_PARTY_LICENSES.txt"} {
			if !strings.Contains(out, want) {
				t.Errorf("bundle lacks %s:\n%s", want, out)
			}
		}
		if strings.Contains(out, "example2") {
			t.Errorf("the win32-only requirement entered the linux bundle:\n%s", out)
		}
		r.mustMkrelease(t, "verify", "dist", "--key", filepath.Join(r.dir, ".mkrelease", "dev.pub"))
		installOffline(t, b, py, checkInstalled)
	})

	t.Run("PEP 503 index on 127.0.0.1", func(t *testing.T) {
		srv := simpleIndex(t, map[string][]string{"example": {example}, "wheel": {wheelWhl}}, nil)
		r := demoProject(t, requires, fmt.Sprintf("[dependencies]\nlock = \"deps/requirements.txt\"\nindex = %q\n", srv.URL+"/simple/"))
		requirementsLock(t, r.dir, pins)
		r.mustMkrelease(t, "build")
		r.mustMkrelease(t, "verify", "dist", "--key", filepath.Join(r.dir, ".mkrelease", "dev.pub"))
		installOffline(t, filepath.Join(r.dir, "dist", "demo-app-2.0-linux-x86_64.tar.gz"), py, checkInstalled)
	})

	t.Run("refusals", func(t *testing.T) {
		wheelhouse := func(r run, files ...string) {
			for _, f := range files {
				copyFile(t, f, filepath.Join(r.dir, "wheelhouse", filepath.Base(f)))
			}
		}
		deps := "[dependencies]\nlock = \"deps/requirements.txt\"\nfind_links = [\"wheelhouse\"]\n"
		cases := []struct {
			name  string
			setup func(t *testing.T) run
			want  []string
		}{
			{"requirement missing from the lock", func(t *testing.T) run {
				r := demoProject(t, requires, deps)
				wheelhouse(r, example, wheelWhl)
				requirementsLock(t, r.dir, map[string]string{"example==21.12": example})
				return r
			}, []string{"wheel", "demo-app", "lock"}},
			{"hash mismatch on download", func(t *testing.T) run {
				other, _ := os.ReadFile(wheelWhl)
				srv := simpleIndex(t, map[string][]string{"example": {example}, "wheel": {wheelWhl}}, map[string][]byte{filepath.Base(example): other})
				r := demoProject(t, requires, fmt.Sprintf("[dependencies]\nlock = \"deps/requirements.txt\"\nindex = %q\n", srv.URL+"/simple/"))
				requirementsLock(t, r.dir, pins)
				return r
			}, []string{"example", "sha256"}},
			{"an sdist", func(t *testing.T) run {
				r := demoProject(t, []string{"example>=21", "fresh==1.0"}, deps)
				sdist := filepath.Join(r.dir, "wheelhouse", "fresh-1.0.tar.gz")
				write(t, sdist, "not really a tarball, but an sdist by name")
				wheelhouse(r, example)
				requirementsLock(t, r.dir, map[string]string{"example==21.12": example, "fresh==1.0": sdist})
				return r
			}, []string{"fresh", "sdist"}},
			{"a wheel whose tags do not fit the target", func(t *testing.T) run {
				r := demoProject(t, []string{"example>=21", "winonly==1.0"}, deps)
				win := filepath.Join(r.dir, "wheelhouse", "winonly-1.0-py3-none-win_amd64.whl")
				copyFile(t, example, win)
				wheelhouse(r, example)
				requirementsLock(t, r.dir, map[string]string{"example==21.12": example, "winonly==1.0": win})
				return r
			}, []string{"winonly", "win_amd64"}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.setup(t)
				out, errOut, code := r.mkrelease(t, "build")
				if code != 1 {
					t.Fatalf("build exited %d, want 1\n%s\n%s", code, out, errOut)
				}
				for _, w := range tc.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("the refusal does not name %q:\n%s", w, errOut)
					}
				}
				if _, err := os.Stat(filepath.Join(r.dir, "dist")); err == nil {
					t.Errorf("a refused build left dist/")
				}
			})
		}
	})
}

func wheelVersion(p string) string {
	parts := strings.Split(filepath.Base(p), "-")
	return parts[1]
}

// TestBundleTampering checks every bad input of a bundle (docs/bundles.md, "What install refuses") that applies to a
// bundle and its sidecar: verify exits 1 naming the culprit, install exits
// 1, installs nothing and leaves nothing behind.
func TestBundleTampering(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bundle")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	r := closureProject(t)
	example, wheelWhl := realWheel(t, "example-21.12-py3-none-any.whl"), realWheel(t, "wheel-0.4*-py3-none-any.whl")
	r.mustMkrelease(t, "build")
	name := "demo-app-2.0-linux-x86_64.tar.gz"
	orig, err := os.ReadFile(filepath.Join(r.dir, "dist", name))
	if err != nil {
		t.Fatal(err)
	}
	entries := readTarGz(t, orig)
	root := strings.TrimSuffix(name, ".tar.gz") + "/"
	zeros := func() []byte { return make([]byte, 200<<20) }

	cases := []struct {
		name     string
		bundle   func() []byte
		sidecar  bool // write a matching sidecar (so the damage is inside)
		wantFile string
	}{
		{"one flipped byte", func() []byte { b := append([]byte(nil), orig...); b[len(b)/2] ^= 1; return b }, false, name},
		{"truncated", func() []byte { return orig[:len(orig)/2] }, true, name},
		{"file changed inside", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry { return edit(e, root+"requirements.txt", []byte("anything\n")) })
		}, true, "requirements.txt"},
		{"extra file inside", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "dependencies/evil-1.0-py3-none-any.whl", Mode: 0o644, Typeflag: tar.TypeReg}, data: []byte("x")})
			})
		}, true, "dependencies/evil-1.0-py3-none-any.whl"},
		{"file missing inside", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry { return drop(e, root+"pylock.toml") })
		}, true, "pylock.toml"},
		{"wheel swapped for another valid wheel", func() []byte {
			other, _ := os.ReadFile(wheelWhl)
			return retar(t, entries, func(e []tarEntry) []tarEntry { return edit(e, root+"dependencies/"+filepath.Base(example), other) })
		}, true, filepath.Base(example)},
		{"path traversal", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "../evil.sh", Mode: 0o755, Typeflag: tar.TypeReg}, data: []byte("rm -rf /\n")})
			})
		}, true, "../evil.sh"},
		{"absolute path", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: "/tmp/evil.sh", Mode: 0o755, Typeflag: tar.TypeReg}, data: []byte("x")})
			})
		}, true, "/tmp/evil.sh"},
		{"symlink escaping the root", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "link", Linkname: "../../etc/passwd", Typeflag: tar.TypeSymlink}})
			})
		}, true, "link"},
		{"hard link escaping the root", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "hard", Linkname: "/etc/passwd", Typeflag: tar.TypeLink}})
			})
		}, true, "hard"},
		{"device file", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3, Mode: 0o666}})
			})
		}, true, "null"},
		{"duplicate entry", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "INSTALL.md", Mode: 0o644, Typeflag: tar.TypeReg}, data: []byte("second copy\n")})
			})
		}, true, "INSTALL.md"},
		{"decompression bomb", func() []byte {
			return retar(t, entries, func(e []tarEntry) []tarEntry {
				return append(e, tarEntry{hdr: &tar.Header{Name: root + "licenses/zeros.txt", Mode: 0o644, Typeflag: tar.TypeReg}, data: zeros()})
			})
		}, true, "zeros.txt"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			os.WriteFile(p, tc.bundle(), 0o644)
			sidecar := fmt.Sprintf("%s  %s\n", hex.EncodeToString(sum(orig)), name)
			if tc.sidecar {
				b, _ := os.ReadFile(p)
				sidecar = fmt.Sprintf("%s  %s\n", hex.EncodeToString(sum(b)), name)
			}
			os.WriteFile(p+".sha256", []byte(sidecar), 0o644)

			out, _, code := r.mkrelease(t, "verify", p)
			if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, tc.wantFile) {
				t.Errorf("verify exited %d, want 1 naming %s:\n%s", code, tc.wantFile, out)
			}
			venv := filepath.Join(dir, "venv")
			before := tempEntries(t)
			out, errOut, code := r.mkrelease(t, "install", p, "--venv", venv)
			if code != 1 || !strings.Contains(errOut, "nothing installed") || !strings.Contains(errOut, tc.wantFile) {
				t.Errorf("install exited %d, want 1 naming %s:\n%s\n%s", code, tc.wantFile, out, errOut)
			}
			if _, err := os.Stat(venv); err == nil {
				t.Errorf("a refused install created %s", venv)
			}
			if after := tempEntries(t); after > before {
				t.Errorf("a refused install left %d new entries in the temporary folder", after-before)
			}
		})
	}
}

func sum(b []byte) []byte { s := sha256.Sum256(b); return s[:] }

func tempEntries(t *testing.T) int {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), "mkrelease-bundle-*"))
	return len(m)
}

type tarEntry struct {
	hdr  *tar.Header
	data []byte
}

func readTarGz(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out = append(out, tarEntry{hdr: h, data: data})
	}
}

// retar rewrites a bundle after change; SHA256SUMS inside stays as it was,
// so a change inside shows as a mismatch against it.
func retar(t *testing.T, entries []tarEntry, change func([]tarEntry) []tarEntry) []byte {
	t.Helper()
	es := change(append([]tarEntry(nil), entries...))
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range es {
		h := *e.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if len(e.data) > 0 {
			tw.Write(e.data)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func edit(es []tarEntry, name string, data []byte) []tarEntry {
	for i := range es {
		if es[i].hdr.Name == name {
			h := *es[i].hdr
			es[i] = tarEntry{hdr: &h, data: data}
		}
	}
	return es
}

func drop(es []tarEntry, name string) []tarEntry {
	var out []tarEntry
	for _, e := range es {
		if e.hdr.Name != name {
			out = append(out, e)
		}
	}
	return out
}
