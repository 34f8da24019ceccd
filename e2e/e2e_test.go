// Package e2e runs mkrelease the way its users do, on the embedded default
// (the vexl backend in backend/), with the real tools: the built binaries
// run, `file` and `readelf` inspect them, Python loads the plugin. These
// tests build for real and take minutes; `go test -short` skips them, and
// scripts/test runs them (testpart says which part of the suite runs).
//
// parallelTests: a test that measures no time calls t.Parallel, so that it
// shares the machine with one other such test once the tests that do
// measure time (the embedded default's throughput lane, the fake lanes'
// time-outs, the walkthrough's lanes) have run alone: Go runs a package's
// parallel tests after every sequential one has finished.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testnginx"
	"github.com/mkrelease/mkrelease/internal/testpart"
)

// mkrelease is the binary under test, and hookedMkrelease the same built
// with the test hooks (internal/testhook) compiled in: TestMain builds both
// once, side by side, for every test of the package.
var mkrelease, hookedMkrelease string

// repoRoot is the mkrelease checkout.
var repoRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mkrelease-e2e-bin-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		wd, _ := os.Getwd()
		repoRoot = filepath.Dir(wd)
		mkrelease = filepath.Join(dir, "mkrelease")
		hookedMkrelease = filepath.Join(dir, "mkrelease-hooks")
		builds := [][]string{
			{"build", "-o", mkrelease, "./cmd/mkrelease"},
			{"build", "-tags", "mkrelease_testhooks", "-o", hookedMkrelease, "./cmd/mkrelease"},
		}
		errs := make([]error, len(builds))
		outs := make([][]byte, len(builds))
		var wg sync.WaitGroup
		for i, args := range builds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command("go", args...)
				cmd.Dir = repoRoot
				outs[i], errs[i] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(builds[i], " "), err, outs[i])
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

// toolchains is the git-ignored folder scripts/bootstrap installs zig into
// (release.toml's zig toolchain names its folder below it).
const toolchains = ".toolchains"

// project copies what a release of the embedded default needs into a new
// folder, as a clean clone would have it once scripts/bootstrap has run:
// its toolchains folder is a link to the checkout's.
func project(t *testing.T, parent string) string {
	t.Helper()
	dst := filepath.Join(parent, "project")
	for _, p := range []string{"release.toml", "release.lock", "backend"} {
		copyTree(t, filepath.Join(repoRoot, p), filepath.Join(dst, p))
	}
	if _, err := os.Stat(filepath.Join(repoRoot, toolchains)); err != nil {
		t.Fatalf("the embedded default builds with zig from %s: run scripts/bootstrap first (%v)", toolchains, err)
	}
	if err := os.Symlink(filepath.Join(repoRoot, toolchains), filepath.Join(dst, toolchains)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// ownToolchains replaces the project's link to the checkout's toolchains
// with a copy of its own (hard links where the file system allows), so
// that a build there runs zig from another folder.
func ownToolchains(t *testing.T, dir string) {
	t.Helper()
	link := filepath.Join(dir, toolchains)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(repoRoot, toolchains)
	if out, err := exec.Command("cp", "-al", src, link).CombinedOutput(); err != nil {
		os.RemoveAll(link)
		if out, err := exec.Command("cp", "-a", src, link).CombinedOutput(); err != nil {
			t.Fatalf("cp -a %s: %v\n%s", src, err, out)
		}
		t.Logf("cp -al: %v %s; copied instead", err, out)
	}
}

// copyTree copies the folder src to dst (folders 0755, files with their
// permissions, symbolic links as links, __pycache__ left out).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if strings.Contains(p, "__pycache__") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 { // a link stays a link (a channel is one)
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			os.MkdirAll(filepath.Dir(to), 0o755)
			return os.Symlink(target, to)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, _ := d.Info()
		os.MkdirAll(filepath.Dir(to), 0o755)
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs mkrelease in dir with exactly env (plus PATH), under a umask.
type run struct {
	dir   string
	env   []string
	umask string
}

func (r run) mkrelease(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	shell := fmt.Sprintf(`umask %s && exec "$0" "$@"`, r.umask)
	cmd := exec.Command("/bin/sh", append([]string{"-c", shell, mkrelease}, args...)...)
	cmd.Dir = r.dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, r.env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func (r run) mustMkrelease(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := r.mkrelease(t, args...)
	if code != 0 {
		t.Fatalf("mkrelease %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// tree maps every file below root to its content.
func tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b, err := os.ReadFile(p)
		m[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// defaultTarget is a target of the embedded default: the platform tag its
// wheels carry, its two binaries (and the header c-shared writes), and
// what `file` says of each.
type defaultTarget struct {
	name, tag        string
	exe, lib, header string
	fileExe, fileLib []string // substrings of `file -b`
	elfMachine       string   // readelf -h's Machine, for ELF targets
	pipPlatform      string   // a platform pip resolves the target's pair for
	osClassifier     string   // the classifier mkrelease gives its wheels
}

// targets are the embedded default's targets; linux-x86_64 first, the one
// whose evidence this machine gathers (the others are left out of a
// release here).
var targets = []defaultTarget{
	{"linux-x86_64", "manylinux_2_17_x86_64.manylinux2014_x86_64", "vexlc", "libvexl.so", "libvexl.h",
		[]string{"ELF 64-bit LSB executable", "x86-64", "statically linked"}, []string{"ELF 64-bit LSB shared object", "x86-64"},
		"Advanced Micro Devices X86-64", "manylinux2014_x86_64", "Operating System :: POSIX :: Linux"},
	{"linux-aarch64", "manylinux_2_17_aarch64.manylinux2014_aarch64", "vexlc", "libvexl.so", "libvexl.h",
		[]string{"ELF 64-bit LSB executable", "ARM aarch64", "statically linked"}, []string{"ELF 64-bit LSB shared object", "ARM aarch64"},
		"AArch64", "manylinux2014_aarch64", "Operating System :: POSIX :: Linux"},
	{"macos-arm64", "macosx_13_0_arm64", "vexlc", "libvexl.dylib", "libvexl.h",
		[]string{"Mach-O 64-bit", "arm64", "executable"}, []string{"Mach-O 64-bit", "arm64", "dynamically linked shared library"},
		"", "macosx_14_0_arm64", "Operating System :: MacOS"},
	{"windows-x86_64", "win_amd64", "vexlc.exe", "vexl.dll", "vexl.h",
		[]string{"PE32+ executable", "x86-64", "MS Windows"}, []string{"PE32+ executable (DLL)", "x86-64", "MS Windows"},
		"", "win_amd64", "Operating System :: Microsoft :: Windows"},
}

// targetNamed returns the target of the embedded default called name.
func targetNamed(name string) defaultTarget {
	for _, tg := range targets {
		if tg.name == name {
			return tg
		}
	}
	panic("the embedded default has no target " + name)
}

// wheelName is the file name of the wheel of distribution dist (its
// file-name spelling: vexl_plugin) for target.
func wheelName(dist, target string) string {
	return dist + "-0.3.0-py3-none-" + targetNamed(target).tag + ".whl"
}

// TestEmbeddedDefault builds the vexl backend from scratch, runs the
// README's main command on it and checks what was built: the binaries of
// every target with `file`, `readelf` and debug/macho and debug/pe, the
// x86_64 ones running under both profiles, the wheels, bundles and
// provenance, the evidence and the published channel, a release built on
// many machines, a second build running no action, a build of x86_64 alone
// writing that target's files byte for byte as the full build did, and a
// damaged cache entry being rebuilt.
//
// The default part of the suite builds once and gathers the evidence with
// a short throughput lane ([shortThroughput]). The whole suite
// (testpart.Full) builds a second time from scratch, in another folder
// with zig in its own folder, as another user with another time zone,
// umask, locale and home: the outputs of the two builds, the ELF, Mach-O
// and PE binaries of all four targets among them, must be identical to the
// byte; reproduce rebuilds from the first build's recorded inputs on the
// second's cache; evidence moves from one to the other; and the release
// runs the full throughput lane. These are the package's only builds that
// compile the four targets (about 3 minutes each here): the release built
// on many machines is served from the remote cache the first one filled.
func TestEmbeddedDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the backend for four targets")
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the embedded default builds on linux/amd64")
	}
	full := testpart.Full()
	a := run{dir: project(t, t.TempDir()), umask: "022"}
	a.env = []string{"HOME=" + t.TempDir(), "TZ=UTC", "LANG=C.UTF-8", "MKRELEASE_CACHE=" + filepath.Join(a.dir, "..", "cache")}
	if !full {
		shortThroughput(t, a.dir)
	}

	// a's build fills a remote action cache (nginx) as it runs every
	// action: the matrix legs below, each on an empty local cache, are
	// served from it as a release workflow's legs are, instead of
	// compiling the four targets again.
	var remote *testnginx.Server
	if testnginx.Installed() {
		var err error
		if remote, err = testnginx.Start(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		defer remote.Stop()
	}
	var outA string
	if remote != nil {
		outA = a.mustMkrelease(t, "build", "--remote-cache", remote.CacheURL)
		if !strings.Contains(outA, "9 actions (9 ran") {
			t.Fatalf("a's build on an empty local cache and an empty remote cache: want its 9 actions run\n%s", outA)
		}
	} else {
		outA = a.mustMkrelease(t, "build")
	}
	if !strings.Contains(outA, "sandboxed (bubblewrap") || !strings.Contains(outA, "network isolated") {
		t.Errorf("build output does not say the steps were sandboxed and network isolated:\n%s", outA)
	}

	var b run
	if full {
		b = run{dir: project(t, t.TempDir()), umask: "077"}
		ownToolchains(t, b.dir)
		b.env = []string{"HOME=" + t.TempDir(), "TZ=Pacific/Kiritimati", "LANG=de_DE.UTF-8", "LC_ALL=de_DE.UTF-8", "MKRELEASE_CACHE=" + filepath.Join(b.dir, "..", "cache")}
		b.mustMkrelease(t, "build")
		t.Run("reproducible", func(t *testing.T) { checkReproducible(t, a, b) })
	}

	t.Run("binaries", func(t *testing.T) { checkBinaries(t, filepath.Join(a.dir, "dist")) })

	t.Run("runs under both profiles", func(t *testing.T) {
		bin := filepath.Join(a.dir, "dist", "build", "linux-x86_64")
		out, err := exec.Command(filepath.Join(bin, "vexlc"), "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "0.3.0") {
			t.Errorf("vexlc --version = %q %v, want the stamped release version 0.3.0", out, err)
		}
		pythons := Pythons(t)
		if len(pythons) == 0 {
			t.Fatal("no CPython >= 3.8 found on PATH or under /root/.pyenv/versions")
		}
		for _, py := range pythons[len(pythons)-1:] {
			cmd := exec.Command(py, "-m", "unittest", "-v", "tests.test_vexl")
			cmd.Dir = filepath.Join(a.dir, "backend", "python")
			cmd.Env = append(os.Environ(), "VEXLC_PATH="+filepath.Join(bin, "vexlc"),
				"VEXL_LIBRARY="+filepath.Join(bin, "libvexl.so"), "VEXL_EXPECT_VERSION=0.3.0", "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s: backend Python tests failed: %v\n%s", py, err, out)
			}
			if strings.Contains(string(out), "skipped") && !strings.Contains(string(out), "OK") {
				t.Errorf("%s: tests skipped:\n%s", py, out)
			}
		}
	})

	checkWheels(t, a)
	checkBundles(t, a)
	checkProvenance(t, a)

	evidence := t.TempDir()
	if t.Run("evidence", func(t *testing.T) { checkEvidence(t, a, b, evidence) }) {
		t.Run("release on many machines", func(t *testing.T) {
			checkReleaseMatrix(t, a, remote, filepath.Join(a.dir, ".mkrelease", "dev.pub"), evidence)
		})
	}

	// An auditor's reproduce rebuilds on a fresh action cache; here it uses
	// b's, which b's build filled by running every action on an empty
	// cache: that cold build is the one the reproducible check above
	// compares with a's file by file, and the fresh-cache path of reproduce
	// (and its naming of what differs) is TestReproduce's. A third cold
	// build of the four targets would show nothing more.
	if full {
		t.Run("reproduce from a fresh copy", func(t *testing.T) {
			out := b.mustMkrelease(t, "reproduce", "--use-cache", filepath.Join(a.dir, "dist"))
			if !strings.Contains(out, "reproduced") || strings.Contains(out, "DIFFERS") {
				t.Errorf("reproduce:\n%s", out)
			}
		})
	}

	t.Run("second build runs no action", func(t *testing.T) {
		out := a.mustMkrelease(t, "build", "--json")
		var rep struct {
			Total  int `json:"actions_total"`
			Run    int `json:"actions_run"`
			Cached int `json:"actions_cached"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("--json: %v\n%s", err, out)
		}
		if rep.Run != 0 || rep.Cached != rep.Total || rep.Total != 9 {
			t.Errorf("second build: %+v, want 9 actions (the tests, and 2 binaries for each of 4 targets) all cached", rep)
		}
		// The evidence `release` gathered is for these very wheels: the
		// rebuild keeps it, and it still verifies.
		name := evidenceRoot("vexl", "0.3.0", "linux-x86_64")
		for _, f := range []string{name + ".tar.gz", name + ".tar.gz.sha256", name + ".intoto.jsonl"} {
			if _, err := os.Stat(filepath.Join(a.dir, "dist", f)); err != nil {
				t.Errorf("the identical rebuild dropped the evidence: %v", err)
			}
		}
		pubA := filepath.Join(a.dir, ".mkrelease", "dev.pub")
		if vout, verr, code := a.mkrelease(t, "verify", filepath.Join(a.dir, "dist"), "--key", pubA); code != 0 {
			t.Errorf("verify after the rebuild: exit %d\n%s\n%s", code, vout, verr)
		}
	})

	checkOneTarget(t, a)

	t.Run("damaged cache entry is rebuilt", func(t *testing.T) {
		before := tree(t, filepath.Join(a.dir, "dist"))
		// The Windows plugin's entry: of the two libraries a damaged entry
		// can hit, the one cheapest to rebuild (MinGW-w64 and Go's standard
		// library for windows/amd64, about 16 s here; the zig-linked ones
		// compile zig's C libraries too, about 50 s).
		libs, _ := filepath.Glob(filepath.Join(a.dir, "..", "cache", "actions", "*", "*", "out", "vexl.dll"))
		if len(libs) != 1 {
			t.Fatalf("expected one cached vexl.dll, found %v", libs)
		}
		b, _ := os.ReadFile(libs[0])
		b[len(b)/2] ^= 0xff
		os.WriteFile(libs[0], b, 0o755)
		out, errOut, code := a.mkrelease(t, "build")
		if code != 0 || !strings.Contains(out, "9 actions (1 ran, 8 cached)") || !strings.Contains(errOut, "damaged cache entry") {
			t.Fatalf("build after damage: exit %d\n%s\n%s", code, out, errOut)
		}
		after := tree(t, filepath.Join(a.dir, "dist"))
		for k, v := range before {
			if strings.Contains(k, ".intoto.jsonl") || strings.Contains(k, ".sigstore.json") {
				continue // signed anew on every build
			}
			if !bytes.Equal(after[k], v) {
				t.Errorf("%s changed after rebuilding a damaged entry", k)
			}
		}
	})
}

// checkReproducible compares the dist folders of two builds of the embedded
// default file by file: everything but the signed statements must be
// identical to the byte.
func checkReproducible(t *testing.T, a, b run) {
	ta, tb := tree(t, filepath.Join(a.dir, "dist")), tree(t, filepath.Join(b.dir, "dist"))
	// Signed statements carry a signature and run facts: they are the
	// one thing that is not reproducible.
	for _, m := range []map[string][]byte{ta, tb} {
		for k := range m {
			if strings.Contains(k, ".intoto.jsonl") || strings.Contains(k, ".sigstore.json") {
				delete(m, k)
			}
		}
	}
	if strings.Join(keys(ta), "\n") != strings.Join(keys(tb), "\n") {
		t.Fatalf("different file sets:\n%v\n%v", keys(ta), keys(tb))
	}
	for _, k := range keys(ta) {
		if !bytes.Equal(ta[k], tb[k]) {
			t.Errorf("%s differs between the two builds", k)
		}
	}
	if len(ta) < 20 {
		t.Errorf("dist holds only %v", keys(ta))
	}
	// The binaries of every target are among the identical files, and
	// so are both wheels of each.
	for _, tg := range targets {
		for _, f := range []string{"build/" + tg.name + "/" + tg.exe, "build/" + tg.name + "/" + tg.lib,
			wheelName("vexl_compiler", tg.name), wheelName("vexl_plugin", tg.name)} {
			if _, ok := ta[f]; !ok {
				t.Errorf("dist holds no %s", f)
			}
		}
	}
}
