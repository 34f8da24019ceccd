package e2e

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// evilWheel writes a valid wheel of a package "evil" into dir: the package
// a hostile bundle or environment tries to have installed from outside the
// bundle. It returns the wheel's path.
func evilWheel(t *testing.T, dir string) string {
	t.Helper()
	files := []struct{ name, data string }{
		{"evil/__init__.py", "OWNED = True\n"},
		{"evil-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n"},
		{"evil-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.data))
		d := sha256.Sum256([]byte(f.data))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(d[:]), len(f.data))
	}
	record.WriteString("evil-1.0.dist-info/RECORD,,\n")
	w, _ := zw.Create("evil-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "evil-1.0-py3-none-any.whl")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rebundle rewrites a bundle after change, which edits, adds or (by
// deleting the key) removes files by their path below the root folder.
// SHA256SUMS is then rewritten to match, as an attacker who rebuilds the
// bundle would, so that only the checks of the content can catch the
// change; change may set SHA256SUMS itself to keep its own.
func rebundle(t *testing.T, entries []tarEntry, root string, change func(files map[string][]byte)) []byte {
	t.Helper()
	files := map[string][]byte{}
	for _, e := range entries {
		if e.hdr.Typeflag == tar.TypeReg {
			files[strings.TrimPrefix(e.hdr.Name, root)] = e.data
		}
	}
	sums := files["SHA256SUMS"]
	change(files)
	if bytes.Equal(files["SHA256SUMS"], sums) {
		var names []string
		for n := range files {
			if n != "SHA256SUMS" {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		var b strings.Builder
		for _, n := range names {
			d := sha256.Sum256(files[n])
			fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(d[:]), n)
		}
		files["SHA256SUMS"] = []byte(b.String())
	}
	var out []tarEntry
	seen := map[string]bool{}
	for _, e := range entries {
		rel := strings.TrimPrefix(e.hdr.Name, root)
		if e.hdr.Typeflag != tar.TypeReg {
			out = append(out, e)
			continue
		}
		data, ok := files[rel]
		if !ok {
			continue
		}
		seen[rel] = true
		h := *e.hdr
		out = append(out, tarEntry{hdr: &h, data: data})
	}
	var added []string
	for rel := range files {
		if !seen[rel] {
			added = append(added, rel)
		}
	}
	sort.Strings(added)
	for _, rel := range added {
		out = append(out, tarEntry{hdr: &tar.Header{Name: root + rel, Mode: 0o644, Typeflag: tar.TypeReg, Uname: "root", Gname: "root"}, data: files[rel]})
	}
	return retar(t, out, func(e []tarEntry) []tarEntry { return e })
}

// hostileInstall runs mkrelease install and the bundle's own install.sh
// (extracted with tar, as INSTALL.md says) in a network namespace with no
// network, in a private temporary folder, with env added to the caller's
// environment. It returns what each printed and its exit status.
type hostileInstall struct {
	t        *testing.T
	work     string
	bundle   string
	env      []string
	py       string
	shOut    string
	shCode   int
	mkOut    string
	mkCode   int
	shVenv   string
	mkVenv   string
	tmp      string
	skipSh   bool
	skipMk   bool
	unshared bool
}

func (h *hostileInstall) run() {
	t := h.t
	h.shVenv, h.mkVenv, h.tmp = filepath.Join(h.work, "venv-sh"), filepath.Join(h.work, "venv-mk"), filepath.Join(h.work, "tmp")
	os.MkdirAll(h.tmp, 0o755)
	base := append(cleanEnv(), "PATH="+os.Getenv("PATH"), "TMPDIR="+h.tmp)
	env := append(base, h.env...)
	exec1 := func(name string, args ...string) (string, int) {
		if h.unshared {
			args = append([]string{"-n", name}, args...)
			name = "unshare"
		}
		cmd := exec.Command(name, args...)
		cmd.Dir = h.work
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	if !h.skipMk {
		args := []string{"install", h.bundle, "--venv", h.mkVenv}
		if h.py != "" {
			args = append(args, "--python", h.py)
		}
		h.mkOut, h.mkCode = exec1(mkrelease, args...)
	}
	if !h.skipSh {
		x := filepath.Join(h.work, "x")
		os.MkdirAll(x, 0o755)
		must(t, x, nil, "tar", "-xzf", h.bundle)
		root := strings.TrimSuffix(filepath.Base(h.bundle), ".tar.gz")
		args := []string{filepath.Join(x, root, "install.sh"), h.shVenv}
		if h.py != "" {
			args = append(args, h.py)
		}
		h.shOut, h.shCode = exec1("sh", args...)
	}
}

// refused checks that both installers refused, naming what they should,
// and left no virtualenv and no temporary files.
func (h *hostileInstall) refused(mkWant []string, shWant string) {
	t := h.t
	t.Helper()
	if !h.skipMk {
		if h.mkCode != 1 || !strings.Contains(h.mkOut, "nothing installed") {
			t.Errorf("mkrelease install exited %d, want 1 saying nothing was installed:\n%s", h.mkCode, h.mkOut)
		}
		for _, w := range mkWant {
			if !strings.Contains(h.mkOut, w) {
				t.Errorf("mkrelease install does not name %q:\n%s", w, h.mkOut)
			}
		}
		if _, err := os.Stat(h.mkVenv); err == nil {
			t.Errorf("a refused mkrelease install left %s", h.mkVenv)
		}
		if left, _ := os.ReadDir(h.tmp); len(left) > 0 {
			t.Errorf("a refused mkrelease install left %d entries in its temporary folder", len(left))
		}
	}
	if !h.skipSh {
		if h.shCode != 1 || !strings.Contains(h.shOut, shWant) {
			t.Errorf("install.sh exited %d, want 1 naming %q:\n%s", h.shCode, shWant, h.shOut)
		}
		if _, err := os.Stat(h.shVenv); err == nil {
			t.Errorf("a refused install.sh left %s", h.shVenv)
		}
	}
}

// TestInstallHostileBundles (issue 11): install and verify take nothing
// from outside the bundle. A small release with a real closure is built
// once; each hostile variant of its bundle (SHA256SUMS and the sidecar
// rewritten to match, as an attacker would) must be refused by verify, by
// mkrelease install and by the bundle's install.sh, each naming the
// culprit, installing nothing and leaving no virtualenv. A hostile
// environment must not reach pip or Python, a shim that does not run must
// be skipped, and a bundle for another platform refused before any
// virtualenv is made. The installs use real pip from real CPython, with no
// network.
func TestInstallHostileBundles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a bundle and installs it with pip")
	}
	t.Parallel() // see parallelTests in e2e_test.go
	requireNetns(t)
	r := closureProject(t)
	r.mustMkrelease(t, "build")
	name := "demo-app-2.0-linux-x86_64.tar.gz"
	root := strings.TrimSuffix(name, ".tar.gz") + "/"
	orig, err := os.ReadFile(filepath.Join(r.dir, "dist", name))
	if err != nil {
		t.Fatal(err)
	}
	entries := readTarGz(t, orig)
	var reqs string
	for _, e := range entries {
		if e.hdr.Name == root+"requirements.txt" {
			reqs = string(e.data)
		}
	}
	n := strings.Count(reqs, "\n") // the line an appended line gets is n+1
	outside := t.TempDir()
	evil := evilWheel(t, outside)
	evilPin := "evil==1.0 \\\n    --hash=sha256:" + fileSHA(t, evil) + "\n"
	evilReq := filepath.Join(outside, "evil.txt")
	write(t, evilReq, "--find-links "+outside+"\n"+evilPin)
	evilData, _ := os.ReadFile(evil)
	example := "dependencies/example-21.12-py3-none-any.whl"
	py := pythonFor(t, 12)

	type hostile struct {
		name   string
		change func(files map[string][]byte)
		want   []string // named by verify and mkrelease install
		sh     string   // named by install.sh; "" when install.sh itself is the hostile file
	}
	appendReqs := func(s string) func(map[string][]byte) {
		return func(f map[string][]byte) { f["requirements.txt"] = append(f["requirements.txt"], s...) }
	}
	line := func(k int, msg string) string { return fmt.Sprintf("requirements.txt: line %d: %s", n+k, msg) }
	shReqs := "install.sh: requirements.txt is not the file this bundle was built with"
	cases := []hostile{
		{"a 70 KB comment line hiding --find-links to a folder outside", appendReqs("# " + strings.Repeat("x", 70000) + "\n--find-links " + outside + "\n" + evilPin),
			[]string{line(1, "70002 bytes long, over the limit of 4096"), line(2, "an option line (--find-links): pip would look for wheels in that folder or URL, outside the bundle")}, shReqs},
		{"--find-links", appendReqs("--find-links " + outside + "\n" + evilPin), []string{line(1, "an option line (--find-links)")}, shReqs},
		{"-f", appendReqs("-f " + outside + "\n"), []string{line(1, "an option line (-f)")}, shReqs},
		{"--index-url", appendReqs("--index-url http://127.0.0.1:9/simple\n"), []string{line(1, "an option line (--index-url): pip would install from that package index")}, shReqs},
		{"--extra-index-url", appendReqs("--extra-index-url http://127.0.0.1:9/simple\n"), []string{line(1, "an option line (--extra-index-url)")}, shReqs},
		{"-r", appendReqs("-r " + evilReq + "\n"), []string{line(1, "an option line (-r): pip would read another requirements file, from outside the bundle")}, shReqs},
		{"--requirement", appendReqs("--requirement=" + evilReq + "\n"), []string{line(1, "an option line (--requirement)")}, shReqs},
		{"-c", appendReqs("-c " + evilReq + "\n"), []string{line(1, "an option line (-c): pip would read a constraints file from outside the bundle")}, shReqs},
		{"-e", appendReqs("-e " + outside + "\n"), []string{line(1, "an option line (-e): pip would install a source tree or a VCS URL")}, shReqs},
		{"--trusted-host", appendReqs("--trusted-host 127.0.0.1\n"), []string{line(1, "an option line (--trusted-host)")}, shReqs},
		{"a URL requirement", appendReqs("evil @ file://" + evil + "\n"), []string{line(1, "a URL or direct reference: pip would fetch it from outside the bundle")}, shReqs},
		{"a continuation joining an option", func(f map[string][]byte) {
			s := strings.TrimSuffix(string(f["requirements.txt"]), "\n")
			f["requirements.txt"] = []byte(s + " \\\n--find-links " + outside + "\n")
		}, []string{line(1, fmt.Sprintf("line %d ends in a backslash, so pip joins this line to it", n))}, shReqs},
		{"a Unicode line separator hiding an option", appendReqs("# \u2028--find-links " + outside + "\n"), []string{line(1, "byte 0xe2 at column 3")}, shReqs},
		{"an extra wheel no lock names", func(f map[string][]byte) { f["dependencies/evil-1.0-py3-none-any.whl"] = evilData },
			[]string{"dependencies/evil-1.0-py3-none-any.whl: not named in manifest.json: a bundle holds only the wheels its manifest names",
				"dependencies/evil-1.0-py3-none-any.whl: not pinned in requirements.txt"},
			"install.sh: dependencies/evil-1.0-py3-none-any.whl is not a file of this bundle: it was added after the build, and pip would see it"},
		{"an extra wheel pinned in requirements.txt", func(f map[string][]byte) {
			f["dependencies/evil-1.0-py3-none-any.whl"] = evilData
			f["requirements.txt"] = append(f["requirements.txt"], evilPin...)
		}, []string{"dependencies/evil-1.0-py3-none-any.whl: not named in manifest.json", "requirements.txt: line 7: differs from what mkrelease writes for this bundle's wheels",
			"dependencies/evil-1.0-py3-none-any.whl: not listed in pylock.toml"}, shReqs},
		{"a named wheel missing", func(f map[string][]byte) { delete(f, example) },
			[]string{example + ": named in manifest.json but missing from the bundle", "which no wheel of the bundle has"},
			"install.sh: " + example + " is not the file this bundle was built with (sha256 missing"},
		{"manifest.json disagreeing with the wheels", func(f map[string][]byte) {
			f["manifest.json"] = bytes.ReplaceAll(f["manifest.json"], []byte(`"name": "example==21.12"`), []byte(`"name": "example==21.13"`))
		}, []string{example + ": manifest.json names it example==21.13, its file name example==21.12"},
			"install.sh: manifest.json is not the file this bundle was built with"},
		{"pylock.toml naming a wheel outside", func(f map[string][]byte) {
			f["pylock.toml"] = bytes.Replace(f["pylock.toml"], []byte(`path = "`+example+`"`), []byte(`path = "`+evil+`"`), 1)
		}, []string{`pylock.toml: line `, `has path "` + evil + `": mkrelease writes wheels/NAME or dependencies/NAME, inside the bundle`},
			"install.sh: pylock.toml is not the file this bundle was built with"},
		{"pylock.toml with a url", func(f map[string][]byte) {
			f["pylock.toml"] = bytes.Replace(f["pylock.toml"], []byte(`path = "`+example+`"`), []byte(`url = "file://`+evil+`", path = "`+example+`"`), 1)
		}, []string{`key "url" is not one mkrelease writes`}, "install.sh: pylock.toml is not the file this bundle was built with"},
		{"install.sh rewritten", func(f map[string][]byte) {
			f["install.sh"] = bytes.Replace(f["install.sh"], []byte("set -eu\n"), []byte("set -eu\npip install --find-links "+outside+" evil\n"), 1)
		}, []string{"installer: install.sh: line ", "differs from what mkrelease writes for this bundle"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, name)
			b := rebundle(t, entries, root, tc.change)
			os.WriteFile(p, b, 0o644)
			os.WriteFile(p+".sha256", []byte(hex.EncodeToString(sum(b))+"  "+name+"\n"), 0o644)

			out, _, code := r.mkrelease(t, "verify", p)
			if code != 1 {
				t.Errorf("verify exited %d, want 1:\n%s", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("verify does not name %q:\n%s", w, out)
				}
			}
			h := &hostileInstall{t: t, work: dir, bundle: p, py: py, skipSh: tc.sh == "", unshared: true}
			h.run()
			h.refused(tc.want, tc.sh)
		})
	}

	t.Run("the untouched bundle verifies and installs", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		os.WriteFile(p, rebundle(t, entries, root, func(map[string][]byte) {}), 0o644)
		if out := r.mustMkrelease(t, "verify", p); !strings.Contains(out, "ok    "+p+": requirements") || !strings.Contains(out, "ok    "+p+": installer") {
			t.Errorf("verify:\n%s", out)
		}
		h := &hostileInstall{t: t, work: dir, bundle: p, py: py, unshared: true}
		h.run()
		if h.mkCode != 0 || !strings.Contains(h.mkOut, "mkrelease: warning: no sidecar "+name+".sha256 next to the bundle") {
			t.Errorf("mkrelease install without a sidecar: exit %d, want 0 with a warning:\n%s", h.mkCode, h.mkOut)
		}
		if h.shCode != 0 {
			t.Errorf("install.sh: exit %d\n%s", h.shCode, h.shOut)
		}
	})

	t.Run("a hostile environment reaches neither pip nor Python", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		os.WriteFile(p, orig, 0o644)
		os.WriteFile(p+".sha256", []byte(hex.EncodeToString(sum(orig))+"  "+name+"\n"), 0o644)
		site := filepath.Join(outside, "site")
		marker := filepath.Join(outside, "sitecustomize-ran")
		write(t, filepath.Join(site, "sitecustomize.py"), fmt.Sprintf("open(%q, 'w').write('ran')\n", marker))
		write(t, filepath.Join(site, "usercustomize.py"), fmt.Sprintf("open(%q, 'w').write('ran')\n", marker))
		conf := "[global]\nindex-url = http://127.0.0.1:9/simple\nfind-links = " + outside + "\n[install]\nrequirement = " + evilReq + "\n"
		for _, c := range []string{"pip.conf", "xdg/pip/pip.conf", "home/.config/pip/pip.conf", "home/.pip/pip.conf"} {
			write(t, filepath.Join(outside, c), conf)
		}
		h := &hostileInstall{t: t, work: dir, bundle: p, py: py, unshared: true, env: []string{
			"PIP_FIND_LINKS=" + outside, "PIP_INDEX_URL=http://127.0.0.1:9/simple", "PIP_EXTRA_INDEX_URL=http://127.0.0.1:9/simple",
			"PIP_REQUIREMENT=" + evilReq, "PIP_CONSTRAINT=" + evilReq, "PIP_CONFIG_FILE=" + filepath.Join(outside, "pip.conf"),
			"PIP_NO_INDEX=0", "PIP_USER=1", "PIP_TARGET=" + filepath.Join(outside, "target"), "PIP_PREFIX=" + filepath.Join(outside, "prefix"),
			"PYTHONPATH=" + site, "PYTHONHOME=" + outside, "PYTHONSTARTUP=" + filepath.Join(site, "sitecustomize.py"),
			"PYTHONUSERBASE=" + outside, "PYTHONNOUSERSITE=", "VIRTUAL_ENV=" + filepath.Join(outside, "venv"),
			"XDG_CONFIG_HOME=" + filepath.Join(outside, "xdg"), "HOME=" + filepath.Join(outside, "home"),
		}}
		h.run()
		for _, res := range []struct {
			who, out, venv string
			code           int
		}{{"mkrelease install", h.mkOut, h.mkVenv, h.mkCode}, {"install.sh", h.shOut, h.shVenv, h.shCode}} {
			if res.code != 0 || !strings.Contains(res.out, "No broken requirements found") {
				t.Errorf("%s in a hostile environment: exit %d\n%s", res.who, res.code, res.out)
				continue
			}
			if strings.Contains(res.out, outside) || strings.Contains(res.out, "evil") {
				t.Errorf("%s looked outside the bundle:\n%s", res.who, res.out)
			}
			vpy := filepath.Join(res.venv, "bin", "python")
			freeze := must(t, "", cleanEnv(), vpy, "-I", "-m", "pip", "--isolated", "list", "--format=freeze")
			if strings.Contains(freeze, "evil") || !strings.Contains(freeze, "demo-app==2.0") || !strings.Contains(freeze, "example==21.12") {
				t.Errorf("%s installed:\n%s", res.who, freeze)
			}
		}
		for _, p := range []string{marker, filepath.Join(outside, "target"), filepath.Join(outside, "prefix"), filepath.Join(outside, "lib")} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("the hostile environment took effect: %s exists", p)
			}
		}
	})

	t.Run("install.sh skips a shim that does not run", func(t *testing.T) {
		dir := t.TempDir()
		shims := filepath.Join(dir, "shims")
		for _, v := range []string{"3.11", "3.12", "3.13"} {
			write(t, filepath.Join(shims, "python"+v), "#!/bin/sh\necho \"pyenv: python"+v+": command not found\" >&2\nexit 127\n")
			os.Chmod(filepath.Join(shims, "python"+v), 0o755)
		}
		pyenv := filepath.Join(dir, "pyenv")
		os.MkdirAll(filepath.Join(pyenv, "versions"), 0o755)
		if err := os.Symlink(filepath.Dir(filepath.Dir(py)), filepath.Join(pyenv, "versions", "3.12")); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, orig, 0o644)
		h := &hostileInstall{t: t, work: dir, bundle: p, skipMk: true, unshared: true,
			env: []string{"PATH=" + shims + ":/usr/sbin:/usr/bin:/sbin:/bin", "PYENV_ROOT=" + pyenv, "HOME=" + dir}}
		h.run()
		if h.shCode != 0 {
			t.Fatalf("install.sh: exit %d\n%s", h.shCode, h.shOut)
		}
		got := must(t, "", cleanEnv(), filepath.Join(h.shVenv, "bin", "python"), "-I", "-c", "import sys; print('%d.%d' % sys.version_info[:2])")
		// /usr/bin may hold a python3.13 or python3.12 that runs: any CPython of
		// the boundary that runs is right, a shim never is.
		if v := strings.TrimSpace(got); v != "3.12" && v != "3.13" && v != "3.11" {
			t.Errorf("install.sh made the virtualenv with Python %s", v)
		}
		if cfg, _ := os.ReadFile(filepath.Join(h.shVenv, "pyvenv.cfg")); strings.Contains(string(cfg), shims) {
			t.Errorf("the virtualenv was made with a shim:\n%s", cfg)
		}
	})

	t.Run("a bundle for another platform is refused before any virtualenv", func(t *testing.T) {
		if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
			t.Skip("the other platform is linux-aarch64 seen from linux-x86_64")
		}
		o := closureProject(t)
		toml, _ := os.ReadFile(filepath.Join(o.dir, "release.toml"))
		toml = bytes.ReplaceAll(toml, []byte("x86_64"), []byte("aarch64"))
		os.WriteFile(filepath.Join(o.dir, "release.toml"), toml, 0o644)
		o.mustMkrelease(t, "lock")
		o.mustMkrelease(t, "build")
		p := filepath.Join(o.dir, "dist", "demo-app-2.0-linux-aarch64.tar.gz")
		o.mustMkrelease(t, "verify", p)
		h := &hostileInstall{t: t, work: t.TempDir(), bundle: p, py: py, unshared: true}
		h.run()
		h.refused([]string{"the bundle is for linux-aarch64 (manylinux_2_17_aarch64); this machine is linux/amd64"},
			"install.sh: this bundle is for linux-aarch64 (Linux on aarch64); this machine is Linux on x86_64: fetch the bundle built for this platform")
	})
}
