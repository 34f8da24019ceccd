package build

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/internal/digestmemo"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/release"
)

// fakeToolchain is a project whose toolchain fakecc is a shell script in
// the project folder .toolchains/fakecc (its `path`), reached through a
// symbolic link bin/fakecc there, whose version line is always
// "fakecc 1.0"; a step of target t runs it. install puts another script
// (body) in its place: another program with the same version line.
type fakeToolchain struct {
	c      *config.Config
	script string // the file the link points to
}

func newFakeToolchain(t *testing.T) *fakeToolchain {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for the toolchain")
	}
	c := project(t, map[string]string{
		"release.toml": `[project]
name = "demo"
version = "1.0"

[build]
source_date_epoch = 1793491200

[[source]]
name = "up"
local = "src"

[[toolchain]]
name = "fakecc"
command = ["fakecc", "--version"]
path = ".toolchains/bin"

[[target]]
name = "t"

[[build.step]]
name = "compile"
source = "up"
run = ["fakecc", "-o", "${MKRELEASE_OUT}/x"]
outputs = ["x"]
`,
		"src/x.c": "int x;\n",
	})
	f := &fakeToolchain{c: c, script: filepath.Join(c.Dir, ".toolchains", "fakecc-real")}
	if err := os.MkdirAll(filepath.Join(c.Dir, ".toolchains", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../fakecc-real", filepath.Join(c.Dir, ".toolchains", "bin", "fakecc")); err != nil {
		t.Fatal(err)
	}
	f.install(t, "# build 1\n")
	// The folder of a temporary directory may be a link itself (macOS).
	real, err := filepath.EvalSymlinks(f.script)
	if err != nil {
		t.Fatal(err)
	}
	f.script = real
	return f
}

func (f *fakeToolchain) install(t *testing.T, body string) string {
	t.Helper()
	data := "#!/bin/sh\necho 'fakecc 1.0'\n" + body
	if err := os.WriteFile(f.script, []byte(data), 0o755); err != nil {
		t.Fatal(err)
	}
	return checksum.Bytes([]byte(data))
}

// TestToolchainIdentity checks that a toolchain is identified by its
// version line and the sha256 of the file its command runs, found on the
// steps' PATH with links followed.
func TestToolchainIdentity(t *testing.T) {
	f := newFakeToolchain(t)
	// Builds remember digests by the file's identity: the program
	// replaced below must be seen through the memo.
	memo := digestmemo.Memo{Dir: t.TempDir()}
	want := checksum.Bytes([]byte("#!/bin/sh\necho 'fakecc 1.0'\n# build 1\n"))
	got, err := Toolchains(context.Background(), f.c, memo, executor.New(context.Background(), executor.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Version != "fakecc 1.0" || got[0].SHA256 != want || got[0].Executable != f.script {
		t.Errorf("Toolchains = %+v, want version %q, sha256 %s of %s", got, "fakecc 1.0", want, f.script)
	}
	other := f.install(t, "# build 2\n")
	got, err = Toolchains(context.Background(), f.c, memo, executor.New(context.Background(), executor.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Version != "fakecc 1.0" || got[0].SHA256 != other || other == want {
		t.Errorf("after replacing the program: %+v, want sha256 %s", got, other)
	}

	f.c.Toolchains[0].Command = []string{"no-such-fakecc", "--version"}
	_, err = Toolchains(context.Background(), f.c, memo, executor.New(context.Background(), executor.Options{}))
	var te *ToolchainError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "toolchain fakecc: `no-such-fakecc --version` failed: no-such-fakecc: no such program on the steps' PATH") {
		t.Errorf("a command that is not there: %v", err)
	}
}

// TestActionKeyFollowsToolchainExecutable checks that an action is keyed
// by the toolchain's executable, not only its version line: a compiler
// swapped behind the same version line is not served from the cache.
func TestActionKeyFollowsToolchainExecutable(t *testing.T) {
	f := newFakeToolchain(t)
	memo := digestmemo.Memo{Dir: t.TempDir()}
	key := func() string {
		t.Helper()
		tcs, err := Toolchains(context.Background(), f.c, memo, executor.New(context.Background(), executor.Options{}))
		if err != nil {
			t.Fatal(err)
		}
		r := &release.Release{Config: f.c, Epoch: 1793491200, CacheDir: "/cache",
			Found: &lock.Lock{Sources: []lock.Source{{Name: "up", Tree: "h1:abc"}}, Toolchains: tcs}}
		return Action(r, f.c.Targets[0], f.c.Build.Steps[0], "sandbox").Key()
	}
	k1 := key()
	if again := key(); again != k1 {
		t.Fatalf("the same toolchain gives another key: %s, then %s", k1, again)
	}
	f.install(t, "# build 2\n")
	if k2 := key(); k2 == k1 {
		t.Error("a different executable with the same version line gives the same action key")
	}
	f.install(t, "# build 1\n")
	if k3 := key(); k3 != k1 {
		t.Error("restoring the executable does not restore the action key")
	}
}

// TestToolchainDriftRefusal checks that a build against a lock whose
// toolchain digest differs from the executable found is refused, naming
// the toolchain, both digests and the remedy.
func TestToolchainDriftRefusal(t *testing.T) {
	f := newFakeToolchain(t)
	fetcher := &source.Fetcher{ProjectDir: f.c.Dir, CacheDir: t.TempDir()}
	memoDir := t.TempDir() // as builds do: digests remembered by identity
	prepare := func(l *lock.Lock) (*Prepared, error) {
		return Prepare(context.Background(), PrepareOptions{Config: f.c, Lock: l, LockFile: "release.lock", Relock: "mkrelease lock",
			Fetcher: fetcher, Scratch: t.TempDir(), LockOnly: true, Digests: digestmemo.Memo{Dir: memoDir}})
	}
	p, err := prepare(nil)
	if err != nil {
		t.Fatal(err)
	}
	locked := p.Found
	old := locked.Toolchains[0].SHA256
	if _, err := prepare(locked); err != nil {
		t.Fatalf("the toolchain as locked: %v", err)
	}

	swapped := f.install(t, "# a compiler swapped in\n")
	_, err = prepare(locked)
	var de *lock.DriftError
	if !errors.As(err, &de) || len(de.Drifts) != 1 {
		t.Fatalf("Prepare with a swapped executable = %v, want one drift", err)
	}
	for _, want := range []string{
		"toolchain fakecc: " + f.script + ": its executable changed behind the same version line (fakecc 1.0)",
		"locked: sha256:" + old,
		"found:  sha256:" + swapped,
		"run `mkrelease lock` to re-lock",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%v", want, err)
		}
	}

	// A lock written before the digest was recorded drifts too.
	f.install(t, "# build 1\n")
	older := *locked
	older.Toolchains = []lock.Toolchain{{Name: "fakecc", Version: "fakecc 1.0"}}
	_, err = prepare(&older)
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "toolchain fakecc: "+f.script+": release.lock records no sha256 of its executable") ||
		!strings.Contains(err.Error(), "locked: (none)") || !strings.Contains(err.Error(), "found:  sha256:"+old) {
		t.Errorf("Prepare with a lock without the digest = %v", err)
	}
}

func TestToolchainDrift(t *testing.T) {
	const a, b = "aaaa", "bbbb"
	for _, tc := range []struct {
		name          string
		locked, found lock.Toolchain
		want          string // "" for no drift
		details       string
	}{
		{"the same", lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: a}, lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: a}, "", ""},
		{"another executable", lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: a}, lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: b, Executable: "/x/cc"},
			"toolchain cc: its executable changed behind the same version line (cc 1): sha256:aaaa -> sha256:bbbb", ""},
		{"another version", lock.Toolchain{Name: "cc", Target: "t", Version: "cc 1", SHA256: a}, lock.Toolchain{Name: "cc", Target: "t", Version: "cc 2", SHA256: b, Executable: "/x/cc"},
			"toolchain cc [t]: the toolchain version changed: cc 1 -> cc 2", "executable: locked sha256:aaaa, found sha256:bbbb (/x/cc)"},
		{"another version, same executable", lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: a}, lock.Toolchain{Name: "cc", Version: "cc 2", SHA256: a},
			"toolchain cc: the toolchain version changed: cc 1 -> cc 2", ""},
		{"no digest locked", lock.Toolchain{Name: "cc", Version: "cc 1"}, lock.Toolchain{Name: "cc", Version: "cc 1", SHA256: b},
			"toolchain cc: release.lock records no sha256 of its executable (a lock written by an older mkrelease):  -> sha256:bbbb", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, drifted := toolchainDrift(tc.locked, tc.found)
			got := ""
			if drifted {
				got = d.Entry + ": " + d.What + ": " + d.Expected + " -> " + d.Found
			}
			if got != tc.want {
				t.Errorf("toolchainDrift = %q, want %q", got, tc.want)
			}
			if details := strings.Join(d.Details, "; "); details != tc.details {
				t.Errorf("details = %q, want %q", details, tc.details)
			}
		})
	}
}

// toolchainProbe stands in for a hostile toolchain: its version line says
// how many processes' environments hold the secret $A$B (a process of
// mkrelease's, with the signing key's password) and how many bytes of the
// file $KEYFILE (the project's signing key) it could read.
const toolchainProbe = `#!/bin/sh
n=$(cat /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' | grep -c "$A$B")
k=$(cat "$KEYFILE" 2>/dev/null | wc -c)
echo "probe secrets=$n key=$k"
`

// TestToolchainCommandIsSandboxed: a toolchain's version command runs in
// the steps' sandbox: it reads no process's environment (the password of
// the signing key in mkrelease's) and no project file (the signing key).
// The control runs the same command on the host, where it reads both.
func TestToolchainCommandIsSandboxed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	run := executor.New(context.Background(), executor.Options{})
	if !run.Sandbox().Isolated {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox on CI: %s", run.Sandbox().Reason)
		}
		t.Skipf("no sandbox here: %s", run.Sandbox().Reason)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, ".mkrelease", "dev.key")
	probe := filepath.Join(dir, ".toolchains", "probe", "probe")
	for f, content := range map[string]string{key: "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n", probe: toolchainProbe} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A process with the password in its environment, as mkrelease's own
	// is when CI sets it.
	secretA, secretB := "hunter2-", strconv.Itoa(os.Getpid())
	holder := exec.Command("sleep", "60")
	holder.Env = append(os.Environ(), "MKRELEASE_KEY_PASSWORD="+secretA+secretB)
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	t.Setenv("MKRELEASE_KEY_PASSWORD", secretA+secretB)

	env := map[string]string{"A": secretA, "B": secretB, "KEYFILE": key}
	c := &config.Config{Dir: dir,
		Toolchains: []config.Toolchain{{Name: "probe", Command: []string{"probe", "--version"}, Path: ".toolchains/probe", PerTarget: true}},
		Targets:    []config.Target{{Name: "a", Env: env}},
		Build:      config.Build{PassEnv: []string{"MKRELEASE_KEY_PASSWORD"}}}
	got, err := Toolchains(context.Background(), c, digestmemo.Memo{}, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Version != "probe secrets=0 key=0" {
		t.Errorf("in the sandbox the toolchain command saw: %+v, want secrets=0 key=0", got)
	}

	// The control: on the host the same command finds both.
	cmd := exec.Command(probe, "--version")
	cmd.Env = append(os.Environ(), "A="+secretA, "B="+secretB, "KEYFILE="+key)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "probe secrets=") || strings.Contains(string(out), "secrets=0") || strings.Contains(string(out), "key=0") {
		t.Errorf("control on the host printed %q: the probe proves nothing", out)
	}
}
