package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/spdxschema"
	"github.com/mkrelease/mkrelease/internal/testpart"
	"github.com/mkrelease/mkrelease/sbom"
)

// checkWheels runs the wheel checks of issue #3 on a built project.
func checkWheels(t *testing.T, a run) {
	dist := filepath.Join(a.dir, "dist")

	t.Run("pip installs the x86_64 pair", func(t *testing.T) {
		var wheels []string
		for _, d := range []string{"vexl_compiler", "vexl_plugin"} {
			wheels = append(wheels, filepath.Join(dist, wheelName(d, "linux-x86_64")))
		}
		// Side by side: each in its own virtualenv and folders (the group
		// ends when all three have).
		for _, minor := range []int{11, 12, 13} {
			t.Run(fmt.Sprintf("cpython3.%d", minor), func(t *testing.T) {
				t.Parallel()
				py := pythonFor(t, minor)
				pipRoundTrip(t, py, wheels, filepath.Join(a.dir, "backend", "python", "tests"))
			})
		}
	})

	t.Run("Debian tools accept every wheel", func(t *testing.T) {
		wheels, _ := filepath.Glob(filepath.Join(dist, "*.whl"))
		if len(wheels) != 2*len(targets) {
			t.Fatalf("wheels: %v, want 2 for each of %d targets", wheels, len(targets))
		}
		for _, w := range wheels {
			must(t, "", nil, "/usr/bin/python3", "-m", "wheel", "unpack", "-d", t.TempDir(), w)
			must(t, "", nil, "/usr/bin/python3", "-m", "installer", "--destdir", t.TempDir(), w)
		}
	})

	t.Run("Linux wheels carry the tag their ELF requires", func(t *testing.T) {
		for _, target := range []string{"linux-x86_64", "linux-aarch64"} {
			tg := targetNamed(target)
			arch := strings.TrimPrefix(target, "linux-")
			out := must(t, "", nil, "readelf", "-V", "--wide", filepath.Join(dist, "build", target, tg.lib))
			max := 17 // the manylinux floor
			for _, m := range regexp.MustCompile(`Name: GLIBC_2\.(\d+)`).FindAllStringSubmatch(out, -1) {
				n, _ := strconv.Atoi(m[1])
				max = maxInt(max, n)
			}
			want := fmt.Sprintf("manylinux_2_%d_%s", max, arch)
			if max == 17 {
				want += ".manylinux2014_" + arch // PEP 599's name of the same tag
			}
			if want != tg.tag {
				t.Errorf("%s: readelf says the tag is %s, the test expects %s", target, want, tg.tag)
			}
			for _, name := range []string{"vexl_compiler", "vexl_plugin"} {
				p := filepath.Join(dist, fmt.Sprintf("%s-0.3.0-py3-none-%s.whl", name, want))
				if _, err := os.Stat(p); err != nil {
					got, _ := filepath.Glob(filepath.Join(dist, name+"-*"+arch+".whl"))
					t.Errorf("want %s (readelf: highest GLIBC_2.%d), have %v", filepath.Base(p), max, got)
				}
			}
		}
	})

	t.Run("each wheel's METADATA names its operating system", func(t *testing.T) {
		for _, tg := range targets {
			for _, name := range []string{"vexl_compiler", "vexl_plugin"} {
				md := must(t, "", nil, "unzip", "-p", filepath.Join(dist, wheelName(name, tg.name)), "*.dist-info/METADATA")
				var oses []string
				for _, l := range strings.Split(md, "\n") {
					if strings.HasPrefix(l, "Classifier: Operating System ::") {
						oses = append(oses, strings.TrimPrefix(l, "Classifier: "))
					}
				}
				if len(oses) != 1 || oses[0] != tg.osClassifier {
					t.Errorf("%s: operating system classifiers %v, want [%s]", wheelName(name, tg.name), oses, tg.osClassifier)
				}
			}
		}
	})

	t.Run("pip resolves each platform's pair", func(t *testing.T) { pipPlatforms(t, dist) })

	t.Run("twine check passes with metadata 2.2", func(t *testing.T) {
		toml := filepath.Join(a.dir, "release.toml")
		orig, _ := os.ReadFile(toml)
		defer os.WriteFile(toml, orig, 0o644)
		changed := strings.Replace(string(orig), "version = \"0.3.0\"\n", "version = \"0.3.0\"\nmetadata_version = \"2.2\"\n", 1)
		os.WriteFile(toml, []byte(changed), 0o644)
		out := filepath.Join(t.TempDir(), "dist22")
		a.mustMkrelease(t, "build", "--out", out)
		wheels, _ := filepath.Glob(filepath.Join(out, "*.whl"))
		if len(wheels) != 2*len(targets) {
			t.Fatalf("wheels: %v", wheels)
		}
		res := must(t, "", nil, "twine", append([]string{"check", "--strict"}, wheels...)...)
		if strings.Count(res, "PASSED") != len(wheels) {
			t.Errorf("twine check:\n%s", res)
		}
		md := must(t, "", nil, "unzip", "-p", wheels[0], "*/METADATA")
		if !strings.HasPrefix(md, "Metadata-Version: 2.2\n") || !strings.Contains(md, "\nLicense: Apache-2.0\n") {
			t.Errorf("metadata 2.2 not selected:\n%s", md[:min(len(md), 400)])
		}
	})
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// must runs a command and fails the test on a non-zero exit.
func must(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pythonFor finds CPython 3.minor, failing (not skipping) when it is absent:
// the issue requires these interpreters.
func pythonFor(t *testing.T, minor int) string {
	t.Helper()
	for _, in := range machinePythons() {
		if in.Minor == minor {
			return in.Path
		}
	}
	t.Fatalf("CPython 3.%d not found on PATH or under /root/.pyenv/versions", minor)
	return ""
}

// pipRoundTrip installs the wheels offline into a fresh virtualenv, runs the
// backend's Python tests against the installed pair (nothing skipped),
// checks both profiles explicitly, and uninstalls, expecting every file
// gone.
func pipRoundTrip(t *testing.T, py string, wheels []string, tests string) {
	venv := filepath.Join(t.TempDir(), "venv")
	must(t, "", nil, py, "-m", "venv", venv)
	vpy := filepath.Join(venv, "bin", "python")
	env := append(cleanEnv(), "PATH="+filepath.Join(venv, "bin")+":"+os.Getenv("PATH"), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INDEX=1")
	must(t, "", env, vpy, "-m", "pip", "--version") // pip's own caches, before the snapshot
	before := files(t, venv)

	must(t, "", env, vpy, append([]string{"-m", "pip", "install", "--no-index", "--no-cache-dir"}, wheels...)...)
	must(t, "", env, vpy, "-m", "pip", "check")

	work := t.TempDir() // run away from the source tree so the installed packages are imported
	out := must(t, work, append(env, "VEXL_EXPECT_VERSION=0.3.0", "PYTHONDONTWRITEBYTECODE=1"),
		vpy, "-m", "unittest", "discover", "-v", "-s", tests, "-t", tests)
	if strings.Contains(out, "skipped") || !strings.Contains(out, "\nOK") {
		t.Errorf("backend tests against the installed wheels did not all run and pass:\n%s", out)
	}
	prog := filepath.Join(work, "axpy.vx")
	os.WriteFile(prog, []byte("in x, y\nout 2.5 * x + y\n"), 0o644)
	must(t, work, env, filepath.Join(venv, "bin", "vexlc"), prog, "-o", filepath.Join(work, "axpy.vxb"))
	script := `import array, sys, vexl_plugin
p = vexl_plugin.Program.load(open(sys.argv[1], "rb").read())
print(vexl_plugin.profile(), list(p.run(array.array("d", [1, 2, 4]), array.array("d", [10, 20, 40]))))`
	for profile, want := range map[string]string{"": "fused [12.5, 25.0, 50.0]", "baseline": "baseline [12.5, 25.0, 50.0]"} {
		e := append(env, "PYTHONDONTWRITEBYTECODE=1")
		if profile != "" {
			e = append(e, "VEXL_PROFILE="+profile)
		}
		if got := strings.TrimSpace(must(t, work, e, vpy, "-c", script, filepath.Join(work, "axpy.vxb"))); got != want {
			t.Errorf("profile %q: got %q, want %q", profile, got, want)
		}
	}

	must(t, "", env, vpy, "-m", "pip", "uninstall", "-y", "vexl-plugin", "vexl-compiler")
	after := files(t, venv)
	var extra []string
	for f := range after {
		if !before[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("pip uninstall left %d files: %v", len(extra), extra)
	}
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "VEXLC_PATH", "VEXL_LIBRARY", "VEXL_PROFILE", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func files(t *testing.T, root string) map[string]bool {
	t.Helper()
	m := map[string]bool{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			m[rel] = true
		}
		return nil
	})
	return m
}

// checkBundles runs the bundle checks of issue #4 on the built default.
func checkBundles(t *testing.T, a run) {
	dist := filepath.Join(a.dir, "dist")
	t.Run("verify dist", func(t *testing.T) {
		out := a.mustMkrelease(t, "verify", "dist")
		if !strings.Contains(out, "every check holds") || !strings.Contains(out, "ok    dist: sbom") {
			t.Errorf("verify dist:\n%s", out)
		}
		for _, args := range [][]string{{"sha256sum", "-c", "SHA256SUMS"}, {"shasum", "-a", "256", "-c", "SHA256SUMS"}} {
			must(t, dist, nil, args[0], args[1:]...)
		}
		sidecars, _ := filepath.Glob(filepath.Join(dist, "*.sha256"))
		if len(sidecars) < 8 {
			t.Errorf("sidecars: %v", sidecars)
		}
		for _, s := range sidecars {
			must(t, dist, nil, "sha256sum", "-c", filepath.Base(s))
			must(t, dist, nil, "shasum", "-a", "256", "-c", filepath.Base(s))
		}
	})
	t.Run("SBOM valid against the SPDX 2.3 schema", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dist, "vexl-0.3.0.spdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := spdxschema.Validate(data); err != nil {
			t.Errorf("the SBOM is not valid SPDX 2.3:\n%v", err)
		}
	})
	t.Run("CycloneDX SBOM beside it, with a content-derived serial number", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(dist, "vexl-0.3.0.cdx.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := sbom.CheckSerialNumber(data); err != nil {
			t.Error(err)
		}
		if _, err := sbom.ParseCycloneDX(data); err != nil {
			t.Error(err)
		}
	})
	t.Run("the x86_64 bundle installs offline and computes", func(t *testing.T) {
		installOffline(t, filepath.Join(dist, "vexl-0.3.0-linux-x86_64.tar.gz"), pythonFor(t, 13), func(t *testing.T, venv string) {
			work := t.TempDir()
			prog := filepath.Join(work, "p.vx")
			os.WriteFile(prog, []byte("in x, y\nout x * y + 1\n"), 0o644)
			must(t, work, nil, filepath.Join(venv, "bin", "vexlc"), prog, "-o", filepath.Join(work, "p.vxb"))
			script := `import array, sys, vexl_plugin
p = vexl_plugin.Program.load(open(sys.argv[1], "rb").read())
print(vexl_plugin.profile(), list(p.run(array.array("d", [1, 2, 3]), array.array("d", [4, 5, 6]))))`
			for profile, want := range map[string]string{"": "fused [5.0, 11.0, 19.0]", "baseline": "baseline [5.0, 11.0, 19.0]"} {
				env := cleanEnv()
				if profile != "" {
					env = append(env, "VEXL_PROFILE="+profile)
				}
				if got := strings.TrimSpace(must(t, work, env, filepath.Join(venv, "bin", "python"), "-c", script, filepath.Join(work, "p.vxb"))); got != want {
					t.Errorf("profile %q: %q, want %q", profile, got, want)
				}
			}
			must(t, "", nil, filepath.Join(venv, "bin", "python"), "-m", "pip", "check")
		})
	})
}

// checkProvenance runs the provenance checks of issue #5 on the built
// default: cosign verifies every subject, offline; one changed byte of a
// wheel makes cosign and mkrelease verify both fail.
func checkProvenance(t *testing.T, a run) {
	dist := filepath.Join(a.dir, "dist")
	pub := filepath.Join(a.dir, ".mkrelease", "dev.pub")
	// cosign, when a subtest needs it: missing, testpart skips that
	// subtest in the default part (and fails it in the whole suite).
	verifyBlob := func(t *testing.T, dir, file string) (string, error) {
		cosign := testpart.Cosign(t)
		requireNetns(t)
		cmd := exec.Command("unshare", "-n", cosign, "verify-blob-attestation", "--key", pub,
			"--signature", filepath.Join(dir, "vexl-0.3.0.intoto.jsonl"), "--type", "slsaprovenance1", "--insecure-ignore-tlog=true", filepath.Join(dir, file))
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("cosign verifies every subject", func(t *testing.T) {
		var subjects []string
		for _, g := range []string{"*.whl", "*.tar.gz", "*.spdx.json", "*.cdx.json"} {
			m, _ := filepath.Glob(filepath.Join(dist, g))
			for _, p := range m {
				subjects = append(subjects, filepath.Base(p))
			}
		}
		if len(subjects) != 3*len(targets)+2 {
			t.Fatalf("subjects: %v, want each target's pair and bundle, and the SBOM (SPDX and CycloneDX)", subjects)
		}
		for _, s := range subjects {
			if out, err := verifyBlob(t, dist, s); err != nil || !strings.Contains(out, "Verified OK") {
				t.Errorf("cosign does not verify %s: %v\n%s", s, err, out)
			}
		}
	})
	t.Run("one changed byte of a wheel fails verify and cosign", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "dist")
		copyTree(t, dist, dir)
		w := wheelName("vexl_plugin", "linux-x86_64")
		b := mustRead(t, filepath.Join(dir, w))
		b[len(b)/3] ^= 0x20
		os.WriteFile(filepath.Join(dir, w), b, 0o644)
		out, _, code := a.mkrelease(t, "verify", dir)
		if code != 1 || !strings.Contains(out, "FAIL") || !strings.Contains(out, w) {
			t.Errorf("verify exited %d:\n%s", code, out)
		}
		t.Run("cosign", func(t *testing.T) {
			if out, err := verifyBlob(t, dir, w); err == nil || strings.Contains(out, "Verified OK") {
				t.Errorf("cosign accepts a changed wheel:\n%s", out)
			}
		})
	})
}
