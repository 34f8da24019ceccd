package bundle

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

var sampleDocs = Docs{
	Name: "vexl", Version: "0.3.0", Target: "linux-x86_64", PlatformTag: "manylinux_2_34_x86_64",
	Root: "vexl-0.3.0-linux-x86_64", File: "vexl-0.3.0-linux-x86_64.tar.gz",
	Pythons: []string{"3.11", "3.12", "3.13"},
	Own:     []string{"vexl-compiler==0.3.0", "vexl-plugin==0.3.0"},
	Deps:    []string{"example==21.12"},
	// Files are any digests: install.sh only compares them.
	Files: []checksum.Sum{{Name: "requirements.txt", SHA256: strings.Repeat("f", 64)}, {Name: "INSTALL.md", SHA256: strings.Repeat("e", 64)}},
}

func TestInstallScript(t *testing.T) {
	b, err := InstallScript(sampleDocs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"#!/bin/sh\n", `sha256sum "$1" | cut -d ' ' -f 1`, `shasum -a 256 "$1" | cut -d ' ' -f 1`,
		"in [(3, 11), (3, 12), (3, 13)]", `case $m in 13|12|11) printf '%s\n' "$m" ;;`, `printf '%s\n' "$d"/python3 | LC_ALL=C sort`,
		`[ -z "${PYENV_ROOT:-}" ] || root="${PYENV_ROOT}"`, `case $root in /*) printf '%s\n' "$root"/versions/*/bin/python3.[0-9]* ;; esac`,
		`case ${p##*/} in python3|python3.[0-9]|python3.[0-9][0-9]|python3.[0-9]*) ;;`,
		"done <<'EOF'\n" + digest('e') + "  INSTALL.md\n" + digest('f') + "  requirements.txt\nEOF\n", "case $os in\nLinux)",
		`for f in $(find wheels dependencies ! -type d -print); do`, "x86_64|amd64) platform_ok=1 ;;",
		"unset \"$name\"", "PIP_CONFIG_FILE=/dev/null", `"$python" -I -m venv "$venv"`, `rm -rf -- "$venv"`,
		"-I -m pip --isolated", "--no-index", "--only-binary :all:", "--require-hashes -r \"$here/requirements.txt\"", "--find-links \"$here/dependencies\"", "pip check",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("install.sh lacks %q", want)
		}
	}
	// The checks come before the virtualenv is made.
	venv := strings.Index(s, `-I -m venv "$venv"`)
	for _, before := range []string{"platform_ok=1", "is not the file this bundle was built with", "is not a file of this bundle", "find_python ||", "unset \"$name\""} {
		if i := strings.Index(s, before); i < 0 || i > venv {
			t.Errorf("install.sh does not run %q before it creates the virtualenv", before)
		}
	}
	p := filepath.Join(t.TempDir(), "install.sh")
	os.WriteFile(p, b, 0o755)
	for _, sh := range []string{"sh", "dash", "bash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n install.sh: %v\n%s", sh, err, out)
		}
	}
	if _, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command("shellcheck", "-s", "sh", p).CombinedOutput(); err != nil {
			t.Errorf("shellcheck -s sh install.sh: %v\n%s", err, out)
		}
	} else {
		t.Log("shellcheck is not installed: install.sh checked with sh -n only")
	}
	win := sampleDocs
	win.PlatformTag = "win_amd64"
	b, err = InstallScript(win)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vpy=$venv/Scripts/python.exe", "MINGW*|MSYS*|CYGWIN*|Windows_NT)",
		`printf '%s\n' "$d"/python.exe | LC_ALL=C sort`, `printf '%s\n' "$d"/python3.[0-9].exe | LC_ALL=C sort`, `printf '%s\n' "$d"/python3.[0-9][0-9].exe | LC_ALL=C sort`,
		`root="$(shell_path "${USERPROFILE}")"/.pyenv/pyenv-win`, `"$root"/versions/*/python.exe`, `cygpath -u "$1"`,
		`case ${p##*/} in python.exe|python3.exe|python3.[0-9].exe|python3.[0-9][0-9].exe) ;;`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("install.sh for win_amd64 lacks %q", want)
		}
	}
	pw := filepath.Join(t.TempDir(), "install.sh")
	os.WriteFile(pw, b, 0o755)
	if _, err := exec.LookPath("shellcheck"); err == nil {
		if out, err := exec.Command("shellcheck", "-s", "sh", pw).CombinedOutput(); err != nil {
			t.Errorf("shellcheck -s sh install.sh (win_amd64): %v\n%s", err, out)
		}
	}
	for _, name := range []string{"a b", "x'y", "EOF", "-rf", "a\nb", "$(id)"} {
		bad := sampleDocs
		bad.Files = []checksum.Sum{{Name: name, SHA256: digest('a')}}
		if _, err := InstallScript(bad); err == nil {
			t.Errorf("install.sh carries the file name %q", name)
		}
	}
	bad := sampleDocs
	bad.PlatformTag = "linux_x86_64"
	if _, err := InstallScript(bad); err == nil || !strings.Contains(err.Error(), "linux_x86_64") {
		t.Errorf("install.sh for an unknown platform: %v", err)
	}
}

// fakePython stands in for CPython 3.12 in install.sh's tests: it answers
// the support probe, makes a virtualenv holding a copy of itself, and logs
// every run with the PIP_*, PYTHON* and VIRTUAL_ENV variables it was given.
const fakePython = `#!/bin/sh
{ printf 'run %s: %s\n' "$0" "$*"; env | grep -E '^(PIP_|PYTHON|VIRTUAL_ENV)' || true; } >>"$FAKE_LOG"
case "$1 $2 $3" in
"-I -c "*) echo 12; exit 0 ;;
"-I -m venv") mkdir -p "$4/bin" && cp "$0" "$4/bin/python" && exit 0 ;;
"-I -m pip") case " $* " in *" install "*) [ -z "${FAKE_PIP_FAIL:-}" ] || exit 1 ;; esac; exit 0 ;;
esac
exit 3
`

// brokenShim is a version manager's shim for a version it cannot start.
const brokenShim = "#!/bin/sh\necho \"pyenv: $(basename \"$0\"): command not found\" >&2\nexit 127\n"

// hostPlatformTag is a platform tag of this machine, "" when the tests
// know none.
func hostPlatformTag() (tag, other string) {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64":
		return "manylinux_2_17_x86_64", "manylinux_2_17_aarch64"
	case "linux/arm64":
		return "manylinux_2_17_aarch64", "manylinux_2_17_x86_64"
	case "darwin/arm64":
		return "macosx_13_0_arm64", "manylinux_2_17_x86_64"
	}
	return "", ""
}

// TestInstallScriptRuns runs install.sh in a bundle folder with stand-in
// interpreters: it checks the platform, SHA256SUMS, requirements.txt and
// the interpreter before it makes a virtualenv, skips a shim that does not
// run, drops PIP_*, PYTHON* and VIRTUAL_ENV, and removes a virtualenv it
// made for a failed install.
func TestInstallScriptRuns(t *testing.T) {
	tag, other := hostPlatformTag()
	if tag == "" {
		t.Skip("no platform tag known for " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	for _, tool := range []string{"sh", "sha256sum", "uname", "sed", "env", "cut", "find"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip("install.sh needs " + tool)
		}
	}
	const reqs = "demo-app==2.0 \\\n    --hash=sha256:" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" + "\n"
	hostile := []string{"PIP_FIND_LINKS=/tmp/outside", "PIP_INDEX_URL=http://127.0.0.1:9/simple", "PIP_REQUIREMENT=/tmp/outside/evil.txt",
		"PIP_CONFIG_FILE=/tmp/outside/pip.conf", "PYTHONPATH=/tmp/outside", "PYTHONHOME=/tmp/outside", "PYTHONSTARTUP=/tmp/outside/s.py",
		"PYTHONUSERBASE=/tmp/outside", "VIRTUAL_ENV=/tmp/outside/venv", "XDG_CONFIG_HOME=/tmp/outside"}
	type setup struct {
		docs    Docs
		python  string   // second argument: "broken" or ""
		env     []string // extra environment
		venv    string   // first argument, relative to the working folder
		tamper  func(t *testing.T, root string)
		prepare func(t *testing.T, work string)
	}
	good := func() setup {
		d := sampleDocs
		d.PlatformTag = tag
		return setup{docs: d, venv: "venv"}
	}
	files := map[string]string{"requirements.txt": reqs, "dependencies/example-21.12-py3-none-any.whl": "a wheel", "wheels/vexl_plugin-0.3.0-py3-none-any.whl": "another", "licenses/THIRD_PARTY_LICENSES.txt": "MIT"}
	writeFile := func(t *testing.T, p, data string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		setup    func() setup
		code     int
		stderr   string
		venvLeft bool
		check    func(t *testing.T, log string)
	}{
		{"installs, skipping a shim that does not run and dropping the hostile environment", func() setup {
			s := good()
			s.env = hostile
			return s
		}, 0, "install.sh: installed vexl 0.3.0 into", true, func(t *testing.T, log string) {
			for _, w := range []string{"/home/.pyenv/versions/3.12.1/bin/python3.12: -I -m venv ", "/venv/bin/python: -I -m pip --isolated --disable-pip-version-check --no-input install --no-index --no-cache-dir --only-binary :all: --find-links ",
				"--require-hashes -r ", "-I -m pip --isolated --disable-pip-version-check --no-input check", "PIP_CONFIG_FILE=/dev/null"} {
				if !strings.Contains(log, w) {
					t.Errorf("the interpreter's log lacks %q:\n%s", w, log)
				}
			}
			for _, kv := range hostile {
				if strings.Contains(log, kv) && !strings.HasPrefix(kv, "XDG_") {
					t.Errorf("%s reached the interpreter:\n%s", kv, log)
				}
			}
			if strings.Contains(log, "shims/python3.13: -I -m venv") {
				t.Errorf("a virtualenv was made with the broken shim:\n%s", log)
			}
		}},
		{"a relative virtualenv is made where the caller is", func() setup { s := good(); s.venv = "sub/../venv"; return s }, 0, "installed", true, nil},
		{"pip fails: the new virtualenv is removed", func() setup { s := good(); s.env = []string{"FAKE_PIP_FAIL=1"}; return s },
			1, "pip could not install the bundle", false, nil},
		{"another platform", func() setup { s := good(); s.docs.PlatformTag = other; return s },
			1, "install.sh: this bundle is for linux-x86_64", false, noPythonRan},
		{"requirements.txt changed", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "requirements.txt"), reqs+"--find-links /tmp/outside\n")
			}
			return s
		}, 1, "install.sh: requirements.txt is not the file this bundle was built with (sha256 ", false, noPythonRan},
		{"a wheel swapped", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "dependencies/example-21.12-py3-none-any.whl"), "another wheel")
			}
			return s
		}, 1, "install.sh: dependencies/example-21.12-py3-none-any.whl is not the file this bundle was built with", false, noPythonRan},
		{"a file missing", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) { os.Remove(filepath.Join(root, "licenses/THIRD_PARTY_LICENSES.txt")) }
			return s
		}, 1, "install.sh: licenses/THIRD_PARTY_LICENSES.txt is not the file this bundle was built with (sha256 missing, want ", false, noPythonRan},
		{"a file replaced by a link", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) {
				p := filepath.Join(root, "requirements.txt")
				writeFile(t, p+".real", reqs)
				os.Remove(p)
				os.Symlink("requirements.txt.real", p)
			}
			return s
		}, 1, "install.sh: requirements.txt is not the file this bundle was built with (sha256 missing", false, noPythonRan},
		{"an extra wheel", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) {
				writeFile(t, filepath.Join(root, "dependencies/evil-1.0-py3-none-any.whl"), "evil")
			}
			return s
		}, 1, "install.sh: dependencies/evil-1.0-py3-none-any.whl is not a file of this bundle: it was added after the build, and pip would see it", false, noPythonRan},
		{"an extra file in a folder of the wheels", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "wheels/sub/x.whl"), "evil") }
			return s
		}, 1, "install.sh: wheels/sub/x.whl is not a file of this bundle", false, noPythonRan},
		{"an odd file name", func() setup {
			s := good()
			s.tamper = func(t *testing.T, root string) { writeFile(t, filepath.Join(root, "wheels/a b.whl"), "evil") }
			return s
		}, 1, "install.sh: wheels/a b.whl: a file name mkrelease never writes", false, noPythonRan},
		{"no supported interpreter", func() setup { s := good(); s.docs.Pythons = []string{"3.99"}; return s },
			1, "install.sh: no CPython 3.99 that runs was found on PATH or under pyenv or uv", false, noPythonRan},
		{"the interpreter given does not run", func() setup { s := good(); s.python = "broken"; return s },
			1, "does not run as CPython 3.11, 3.12, 3.13: pass a supported interpreter", false, noPythonRan},
		{"the folder exists and is no virtualenv", func() setup {
			s := good()
			s.prepare = func(t *testing.T, work string) { os.MkdirAll(filepath.Join(work, "venv", "precious"), 0o755) }
			return s
		}, 1, "exists and is not a virtualenv", true, noPythonRan},
	}
	// PATH holds the shims and the tools install.sh and the stand-ins run,
	// and none of this machine's interpreters.
	tools := toolsDir(t, scriptTools...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup()
			work := t.TempDir()
			root := filepath.Join(work, "bundle")
			home := filepath.Join(work, "home")
			shims := filepath.Join(work, "shims")
			for _, d := range []string{filepath.Join(root, "wheels"), filepath.Join(root, "dependencies"), filepath.Join(home, ".pyenv", "versions", "3.12.1", "bin"), shims} {
				os.MkdirAll(d, 0o755)
			}
			s.docs.Files = nil
			for name, data := range files {
				writeFile(t, filepath.Join(root, name), data)
				s.docs.Files = append(s.docs.Files, checksum.Sum{Name: name, SHA256: checksum.Bytes([]byte(data))})
			}
			script, err := InstallScript(s.docs)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(root, "install.sh"), script, 0o755)
			if s.tamper != nil {
				s.tamper(t, root)
			}
			fake := filepath.Join(home, ".pyenv", "versions", "3.12.1", "bin", "python3.12")
			os.WriteFile(fake, []byte(fakePython), 0o755)
			os.WriteFile(filepath.Join(shims, "python3.13"), []byte(brokenShim), 0o755)
			os.WriteFile(filepath.Join(shims, "python3.12"), []byte(brokenShim), 0o755)
			if s.prepare != nil {
				s.prepare(t, work)
			}
			args := []string{filepath.Join(root, "install.sh"), s.venv}
			if s.python == "broken" {
				args = append(args, filepath.Join(shims, "python3.12"))
			}
			logFile := filepath.Join(work, "python.log")
			cmd := exec.Command("sh", args...)
			cmd.Dir = work
			cmd.Env = append([]string{"PATH=" + shims + string(os.PathListSeparator) + tools, "HOME=" + home, "FAKE_LOG=" + logFile}, s.env...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err = cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("install.sh exited %d, want %d with %q:\n%s", code, tc.code, tc.stderr, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(work, "venv")); (err == nil) != tc.venvLeft {
				t.Errorf("virtualenv left behind: %v, want %v", err == nil, tc.venvLeft)
			}
			if tc.code != 0 && tc.venvLeft {
				if _, err := os.Stat(filepath.Join(work, "venv", "precious")); err != nil {
					t.Errorf("install.sh touched a folder it did not create: %v", err)
				}
			}
			log, _ := os.ReadFile(logFile)
			if tc.check != nil {
				tc.check(t, strings.ReplaceAll(string(log), work, ""))
			}
		})
	}
}

// scriptTools are the programs install.sh and its tests' stand-ins run.
var scriptTools = []string{"basename", "cat", "cp", "cut", "dirname", "env", "find", "grep", "mkdir", "rm", "sed", "sha256sum", "sort", "timeout", "uname"}

// toolsDir is a folder holding links to the programs of this machine
// named (those it has): a PATH of it finds none of the machine's Python
// interpreters.
func toolsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// noPythonRan checks that no virtualenv was made and no pip ran.
func noPythonRan(t *testing.T, log string) {
	t.Helper()
	if strings.Contains(log, "-m venv") || strings.Contains(log, "-m pip") {
		t.Errorf("an interpreter made a virtualenv or ran pip before the refusal:\n%s", log)
	}
}

func TestInstallDoc(t *testing.T) {
	b, err := InstallDoc(sampleDocs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"# Installing vexl 0.3.0 (linux-x86_64)", "| interpreters | CPython 3.11, 3.12, 3.13 |",
		"| dependencies | example==21.12 |", "`manylinux_2_34_x86_64`",
		"sha256sum -c vexl-0.3.0-linux-x86_64.tar.gz.sha256", "tar -xzf vexl-0.3.0-linux-x86_64.tar.gz",
		"./vexl-0.3.0-linux-x86_64/install.sh", "mkrelease install vexl-0.3.0-linux-x86_64.tar.gz",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("INSTALL.md lacks %q", want)
		}
	}
	noDeps := sampleDocs
	noDeps.Deps = nil
	b, _ = InstallDoc(noDeps)
	if !strings.Contains(string(b), "| dependencies | none |") {
		t.Error("INSTALL.md without dependencies does not say none")
	}
	noPy := sampleDocs
	noPy.Pythons = nil
	if _, err := InstallDoc(noPy); err == nil {
		t.Error("rendered without a support boundary")
	}
}
