// Command packagebench measures the packaging half of `mkrelease build`
// (sources, wheel, closure, SBOM, bundle, checksums) against the
// standard-tool pipeline on the same payload, in one run:
//
//	python3 -m wheel pack
//	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner | gzip -n
//	sha256sum
//
// `mkrelease verify dist/SHA256SUMS` against `sha256sum -c` over the same
// files, and the in-depth audit of the bundle (`mkrelease verify BUNDLE`)
// against standard tools doing the same work: `tar -xzf`, `sha256sum -c
// SHA256SUMS` in the bundle, then `python3 -m wheel unpack` of every wheel
// of the bundle (wheel's reader checks every member against its RECORD
// hash). It also times rebuilds with nothing changed (the first after a
// build on its own: it is served the cache entries that build stored, and
// both are held to the same bar), and one after a change to one file of
// the payload.
//
//	go run ./bench/packagebench [-mib 420] [-runs 3] [-targets 1] [-out bench/out-package] [-check]
//
// -targets N declares N targets (the first one's platform tag read from
// the binaries, the others' set in release.toml), so that the release has
// N wheels and N bundles; the standard pipeline then packs and bundles the
// same tree N times, each with its target's tag. It shows what overlapping
// one target's bundle with the next target's wheel brings.
//
// -mib 2048 shows that memory stays flat: where the machine has fewer
// acceptable ELF bytes, the payload adds marked copies of them.
//
// The payload is real ELF files of the machine that the manylinux policy
// accepts (mkrelease refuses to package the others). Peak RSS is read with
// GNU time.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"

	"github.com/mkrelease/mkrelease/bench/internal/measure"
	"github.com/mkrelease/mkrelease/bench/internal/payload"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// timing is one measurement's runs.
type timing = measure.Timing

type results struct {
	PayloadBytes   int64   `json:"payload_bytes"`
	PayloadFiles   int     `json:"payload_files"`
	CPUs           int     `json:"cpus"`
	Targets        int     `json:"targets"`
	Build          timing  `json:"mkrelease_build"`
	Standard       timing  `json:"standard_pipeline"`
	BuildSpeedup   float64 `json:"build_speedup"`
	VerifySums     timing  `json:"mkrelease_verify_sha256sums"`
	Sha256sum      timing  `json:"sha256sum_c"`
	VerifySpeedup  float64 `json:"verify_speedup"`
	VerifyBundle   timing  `json:"mkrelease_verify_bundle_deep"`
	AuditStandard  timing  `json:"tar_x_sha256sum_c_wheel_unpack"`
	AuditSpeedup   float64 `json:"audit_speedup"`
	FirstRebuild   timing  `json:"mkrelease_build_unchanged_first"`
	Rebuild        timing  `json:"mkrelease_build_unchanged"`
	Changed        timing  `json:"mkrelease_build_one_file_changed"`
	BundleBytes    int64   `json:"bundle_bytes"`
	StandardBundle int64   `json:"standard_bundle_bytes"`
}

func main() {
	mib := flag.Int("mib", 420, "payload size in MiB")
	runs := flag.Int("runs", 3, "runs per tool")
	out := flag.String("out", "bench/out-package", "work folder")
	python := flag.String("python", "/usr/bin/python3", "Python with the wheel package")
	check := flag.Bool("check", false, "exit 1 unless the targets hold (see targets)")
	ntargets := flag.Int("targets", 1, "release targets (wheels and bundles) built from the payload")
	flag.Parse()
	if *ntargets < 1 {
		fmt.Fprintln(os.Stderr, "packagebench: -targets must be at least 1")
		os.Exit(2)
	}
	if err := run(*mib, *runs, *ntargets, *out, *python, *check); err != nil {
		fmt.Fprintln(os.Stderr, "packagebench:", err)
		os.Exit(1)
	}
}

// targets are the bars -check holds the results to.
var targets = struct {
	build, verify, audit float64 // speedups over the standard tools
	rebuild              float64 // seconds, a rebuild with nothing changed
	rss                  int64   // bytes, every mkrelease command
}{build: 7, verify: 12, audit: 1.5, rebuild: 0.3, rss: 200 << 20}

func acceptable(p string) bool {
	n, err := platform.Inspect(p)
	if err != nil || n.OS != "linux" || n.Arch != "x86_64" {
		return false
	}
	if n.PolicyError() != nil {
		return false
	}
	_, err = platform.Tag([]platform.Need{n})
	return err == nil
}

// benchTarget is one target of the bench's release: its name, the
// platform_tag line release.toml gives it ("" for the first, whose tag is
// read from the binaries) and the tag the standard pipeline's wheel gets.
type benchTarget struct {
	name, platformTag, wheelTag string
}

// benchTargets returns the n targets of the bench's release.
func benchTargets(n int) []benchTarget {
	ts := []benchTarget{{name: "linux-x86_64", wheelTag: "py3-none-manylinux_2_17_x86_64"}}
	for i := 2; i <= n; i++ {
		tag := fmt.Sprintf("manylinux_2_%d_x86_64", 90+i)
		ts = append(ts, benchTarget{name: fmt.Sprintf("linux-x86_64-t%d", i), platformTag: tag, wheelTag: "py3-none-" + tag})
	}
	return ts
}

func run(mib, runs, ntargets int, out, python string, check bool) error {
	out, _ = filepath.Abs(out)
	os.RemoveAll(out)
	proj := filepath.Join(out, "project")
	var res results
	var err error
	res.PayloadBytes, res.PayloadFiles, err = payload.Copy(filepath.Join(proj, "payload", "bench_payload", "lib"), int64(mib)<<20, acceptable)
	if err != nil {
		return err
	}
	res.CPUs = runtime.NumCPU()
	res.Targets = ntargets
	bts := benchTargets(ntargets)
	var targetTables string
	for _, t := range bts {
		targetTables += fmt.Sprintf("[[target]]\nname = %q\n", t.name)
		if t.platformTag != "" {
			targetTables += fmt.Sprintf("platform_tag = %q\n", t.platformTag)
		}
	}
	os.WriteFile(filepath.Join(proj, "payload", "bench_payload", "__init__.py"), []byte(""), 0o644)
	os.WriteFile(filepath.Join(proj, "CHANGELOG.md"), []byte("# Changelog\n\n## 1.0\n- benchmark\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "release.toml"), []byte(`[project]
name = "bench-payload"
version = "1.0"
license = "MIT"
[build]
source_date_epoch = 1793491200
[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.11"]
[[source]]
name = "payload"
local = "payload"
`+targetTables+`[[wheel]]
name = "bench-payload"
[[wheel.include]]
source = "payload"
from = "bench_payload"
to = "bench_payload"
`), 0o644)
	bin := filepath.Join(out, "mkrelease")
	if b, err := exec.Command("go", "build", "-o", bin, "./cmd/mkrelease").CombinedOutput(); err != nil {
		return fmt.Errorf("build mkrelease: %v\n%s", err, b)
	}
	env := append(os.Environ(), "MKRELEASE_CACHE="+filepath.Join(out, "cache"))
	if b, err := command(proj, env, bin, "lock").CombinedOutput(); err != nil {
		return fmt.Errorf("lock: %v\n%s", err, b)
	}

	// The standard pipeline's input: the same tree as an unpacked wheel.
	std := filepath.Join(out, "standard")
	unpacked := filepath.Join(std, "unpacked")
	os.MkdirAll(std, 0o755)
	if b, err := exec.Command("cp", "-r", filepath.Join(proj, "payload"), unpacked).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v %s", err, b)
	}
	di := filepath.Join(unpacked, "bench_payload-1.0.dist-info")
	os.MkdirAll(di, 0o755)
	os.WriteFile(filepath.Join(di, "METADATA"), []byte("Metadata-Version: 2.1\nName: bench-payload\nVersion: 1.0\n"), 0o644)
	os.WriteFile(filepath.Join(di, "WHEEL"), []byte("Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: py3-none-manylinux_2_17_x86_64\n"), 0o644)
	// Per target: the WHEEL file's tag, the wheel, its bundle.
	script := `set -e
cd "$1"
py="$2"
shift 2
rm -rf dist && mkdir dist
while [ $# -gt 0 ]; do
  rm -rf root && mkdir -p root/wheels
  sed -i "s/^Tag: .*/Tag: $1/" unpacked/bench_payload-1.0.dist-info/WHEEL
  "$py" -m wheel pack -d root/wheels unpacked >/dev/null
  (cd root && sha256sum wheels/*.whl > SHA256SUMS)
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C . -cf - root | gzip -n > "dist/$2"
  cp root/wheels/*.whl dist/
  shift 2
done
(cd dist && for f in *; do sha256sum "$f" > "$f.sha256"; done && sha256sum *.whl *.tar.gz > SHA256SUMS)
`
	// Both pipelines name each bundle as mkrelease names the project's
	// (release.toml above) bundle of that target.
	names := dist.NamesOf("bench-payload", "1.0")
	bundleName := names.Bundle(bts[0].name)
	stdArgs := []string{"-c", script, "sh", std, python}
	for _, t := range bts {
		stdArgs = append(stdArgs, t.wheelTag, names.Bundle(t.name))
	}
	for i := 0; i < runs; i++ {
		// --no-cache: every run packages from scratch (the action cache
		// would otherwise serve the wheel and bundle the first run wrote).
		os.RemoveAll(filepath.Join(proj, "dist"))
		secs, rss, err := measure.Timed(command(proj, env, bin, "build", "--no-cache", "--out", "dist"))
		if err != nil {
			return fmt.Errorf("mkrelease build: %w", err)
		}
		res.Build.Add(secs, rss)
		secs, rss, err = measure.Timed(exec.Command("sh", stdArgs...))
		if err != nil {
			return fmt.Errorf("standard pipeline: %w", err)
		}
		res.Standard.Add(secs, rss)
	}
	bundle := filepath.Join(proj, "dist", bundleName)
	res.BundleBytes = size(bundle)
	res.StandardBundle = size(filepath.Join(std, "dist", bundleName))

	// The same work as the in-depth audit, with the standard tools: unpack,
	// check SHA256SUMS, then every wheel's RECORD (wheel's reader compares
	// each member with its RECORD hash as it extracts it).
	audit := `set -e
cd "$1"
rm -rf x && mkdir x && cd x
tar -xzf "$2"
cd *
sha256sum -c --quiet SHA256SUMS
for w in wheels/*.whl dependencies/*.whl; do
  [ -e "$w" ] || continue
  "$3" -m wheel unpack -d ../unpacked "$w" >/dev/null
done
`
	// One build with the cache, not timed: it fills the cache the
	// no-change rebuilds below are served from, as any build does.
	if b, err := command(proj, env, bin, "build", "--out", "dist").CombinedOutput(); err != nil {
		return fmt.Errorf("mkrelease build: %v\n%s", err, b)
	}
	for i := 0; i < runs; i++ {
		secs, rss, err := measure.Timed(command(proj, env, bin, "verify", path.Join("dist", dist.ChecksumsFile)))
		if err != nil {
			return fmt.Errorf("mkrelease verify: %w", err)
		}
		res.VerifySums.Add(secs, rss)
		secs, rss, err = measure.Timed(exec.Command("sh", "-c", `cd "$1" && sha256sum -c --quiet SHA256SUMS`, "sh", filepath.Join(proj, "dist")))
		if err != nil {
			return fmt.Errorf("sha256sum -c: %w", err)
		}
		res.Sha256sum.Add(secs, rss)
		secs, rss, err = measure.Timed(command(proj, env, bin, "verify", bundle))
		if err != nil {
			return fmt.Errorf("mkrelease verify bundle: %w", err)
		}
		res.VerifyBundle.Add(secs, rss)
		secs, rss, err = measure.Timed(exec.Command("sh", "-c", audit, "sh", out, bundle, python))
		if err != nil {
			return fmt.Errorf("tar -x + sha256sum -c + wheel unpack: %w", err)
		}
		res.AuditStandard.Add(secs, rss)
		// A rebuild with nothing changed: the output folder holds this very
		// release, and the cache what made it. The first after the build
		// that filled the cache is served entries written moments before
		// (whose digests that build remembered as it stored them): it is
		// timed on its own, and the later ones are the median, so that
		// -runs 1 and -runs 3 measure the same thing.
		rebuilds := []*timing{&res.Rebuild}
		if i == 0 {
			rebuilds = []*timing{&res.FirstRebuild, &res.Rebuild}
		}
		for _, t := range rebuilds {
			secs, rss, err = measure.Timed(command(proj, env, bin, "build", "--out", "dist"))
			if err != nil {
				return fmt.Errorf("mkrelease build (unchanged): %w", err)
			}
			t.Add(secs, rss)
		}
	}
	// A rebuild after one file of the payload changed (and the project was
	// re-locked, untimed): every target's wheel and bundle are made again
	// from the cache's other entries, and the provenance is signed again,
	// so the key is read while the wheels are written. It comes after the
	// loop above: its fresh cache entries would make the next no-change
	// rebuild a first one again.
	initPy := filepath.Join(proj, "payload", "bench_payload", "__init__.py")
	for i := 0; i < runs; i++ {
		os.WriteFile(initPy, []byte(fmt.Sprintf("# change %d\n", i+1)), 0o644)
		if b, err := command(proj, env, bin, "lock").CombinedOutput(); err != nil {
			return fmt.Errorf("mkrelease lock: %v\n%s", err, b)
		}
		secs, rss, err := measure.Timed(command(proj, env, bin, "build", "--out", "dist"))
		if err != nil {
			return fmt.Errorf("mkrelease build (one file changed): %w", err)
		}
		res.Changed.Add(secs, rss)
	}
	res.BuildSpeedup = res.Standard.Median / res.Build.Median
	res.VerifySpeedup = res.Sha256sum.Median / res.VerifySums.Median
	res.AuditSpeedup = res.AuditStandard.Median / res.VerifyBundle.Median
	b, _ := json.MarshalIndent(res, "", "  ")
	os.WriteFile(filepath.Join(out, "results.json"), append(b, '\n'), 0o644)

	fmt.Printf("payload: %d ELF files, %.0f MiB; %d target(s); %d CPUs; median of %d runs\n\n", res.PayloadFiles, float64(res.PayloadBytes)/(1<<20), res.Targets, res.CPUs, runs)
	fmt.Println("| task | mkrelease | standard tools | ratio | target |")
	fmt.Println("| --- | --- | --- | --- | --- |")
	fmt.Printf("| packaging: wheel, closure, bundle, SBOM, checksums | %.2f s, %d MiB peak | %.2f s (wheel pack + tar\\|gzip -n + sha256sum), %d MiB peak | %.2fx | >= %gx |\n",
		res.Build.Median, res.Build.PeakRSS>>20, res.Standard.Median, res.Standard.PeakRSS>>20, res.BuildSpeedup, targets.build)
	fmt.Printf("| verify the release's files against SHA256SUMS | %.2f s, %d MiB peak | %.2f s (sha256sum -c) | %.2fx | >= %gx |\n",
		res.VerifySums.Median, res.VerifySums.PeakRSS>>20, res.Sha256sum.Median, res.VerifySpeedup, targets.verify)
	fmt.Printf("| audit the bundle in depth (extract, SHA256SUMS, every wheel's RECORD) | %.2f s, %d MiB peak | %.2f s (tar -xzf + sha256sum -c + wheel unpack of every wheel), %d MiB peak | %.2fx | >= %gx |\n",
		res.VerifyBundle.Median, res.VerifyBundle.PeakRSS>>20, res.AuditStandard.Median, res.AuditStandard.PeakRSS>>20, res.AuditSpeedup, targets.audit)
	fmt.Printf("| first rebuild with nothing changed, right after a build | %.2f s, %d MiB peak | | | <= %g s |\n",
		res.FirstRebuild.Median, res.FirstRebuild.PeakRSS>>20, targets.rebuild)
	fmt.Printf("| later rebuilds with nothing changed (this payload) | %.2f s, %d MiB peak | | | <= %g s |\n",
		res.Rebuild.Median, res.Rebuild.PeakRSS>>20, targets.rebuild)
	fmt.Printf("| rebuild after one file changed (every wheel and bundle again, signed again) | %.2f s, %d MiB peak | | | |\n",
		res.Changed.Median, res.Changed.PeakRSS>>20)
	fmt.Printf("\nbundle (%s): %.1f MiB (standard pipeline's: %.1f MiB)\n", bts[0].name, float64(res.BundleBytes)/(1<<20), float64(res.StandardBundle)/(1<<20))
	if check {
		return res.check()
	}
	return nil
}

// check says which targets the results miss.
func (res *results) check() error {
	var errs []error
	for _, c := range []struct {
		what       string
		got, least float64
	}{
		{"packaging", res.BuildSpeedup, targets.build},
		{"verify", res.VerifySpeedup, targets.verify},
		{"bundle audit", res.AuditSpeedup, targets.audit},
	} {
		if c.got < c.least {
			errs = append(errs, fmt.Errorf("%s %.2fx, want >= %g", c.what, c.got, c.least))
		}
	}
	for _, r := range []struct {
		what string
		t    timing
	}{{"first unchanged rebuild", res.FirstRebuild}, {"unchanged rebuild", res.Rebuild}} {
		if r.t.Median > targets.rebuild {
			errs = append(errs, fmt.Errorf("%s %.2f s, want <= %g s", r.what, r.t.Median, targets.rebuild))
		}
	}
	for _, t := range []struct {
		what string
		t    timing
	}{{"build", res.Build}, {"verify", res.VerifySums}, {"bundle audit", res.VerifyBundle}, {"first rebuild", res.FirstRebuild}, {"rebuild", res.Rebuild}, {"rebuild after a change", res.Changed}} {
		if t.t.PeakRSS > targets.rss {
			errs = append(errs, fmt.Errorf("%s peak RSS %d MiB, want <= %d", t.what, t.t.PeakRSS>>20, targets.rss>>20))
		}
	}
	return errors.Join(errs...)
}

func command(dir string, env []string, name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, env
	return c
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
