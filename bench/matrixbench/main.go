// Command matrixbench measures a release built on several machines, on
// the embedded default, in one run:
//
//   - the build leg of one target (`build --target linux-x86_64 --part`)
//     in a fresh copy of the project with an empty local cache, once with
//     an empty remote action cache (cold: every action runs) and once with
//     the remote cache a cold leg filled (warm: every action is fetched);
//
//   - `merge` of that part and the part of the other three targets against
//     the standard tools doing the least a shell-script merge would:
//     `cp -r` of both parts and `sha256sum` of every file.
//
//     go run ./bench/matrixbench [-runs 3] [-out bench/out-matrix]
//
// The remote cache is Debian's nginx with WebDAV PUT, on 127.0.0.1
// (scripts/bootstrap installs it). Peak RSS is read with GNU time.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mkrelease/mkrelease/bench/internal/measure"
	"github.com/mkrelease/mkrelease/internal/testnginx"
	"github.com/mkrelease/mkrelease/provenance"
)

// timing is one measurement's runs.
type timing = measure.Timing

type results struct {
	CPUs           int     `json:"cpus"`
	ColdLeg        timing  `json:"leg_cold_remote_cache"`
	WarmLeg        timing  `json:"leg_warm_remote_cache"`
	WarmSpeedup    float64 `json:"warm_speedup"`
	Merge          timing  `json:"mkrelease_merge"`
	CopyAndSum     timing  `json:"cp_r_and_sha256sum"`
	MergeOverhead  float64 `json:"merge_over_cp_and_sha256sum"`
	PartsBytes     int64   `json:"parts_bytes"`
	ActionsCold    int     `json:"actions_run_cold"`
	ActionsWarmRun int     `json:"actions_run_warm"`
}

func main() {
	runs := flag.Int("runs", 3, "runs per measurement")
	out := flag.String("out", "bench/out-matrix", "work folder (replaced)")
	flag.Parse()
	if err := run(*runs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "matrixbench:", err)
		os.Exit(1)
	}
}

func run(runs int, out string) error {
	if !testnginx.Installed() {
		return fmt.Errorf("nginx is not installed (%s): scripts/bootstrap installs it", testnginx.Binary)
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	os.RemoveAll(out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(out, "mkrelease")
	if b, err := exec.Command("go", "build", "-o", bin, "./cmd/mkrelease").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	srv, err := testnginx.Start(filepath.Join(out, "nginx"))
	if err != nil {
		return err
	}
	defer srv.Stop()
	base := strings.TrimSuffix(srv.CacheURL, "/mk")
	// One signing key for every leg, as a release's CI secret is; the legs
	// trust it as the remote cache's writer (the warm leg takes what the
	// cold one uploaded, signed by it).
	key, pub := filepath.Join(out, "release.key"), filepath.Join(out, "release.pub")
	if err := provenance.Keygen(key, pub, []byte("bench")); err != nil {
		return err
	}
	env := func(dir string) []string {
		return append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "MKRELEASE_CACHE="+filepath.Join(dir, "cache"), "MKRELEASE_KEY_PASSWORD=bench")
	}
	n := 0
	// leg builds the part name of targets in a fresh copy with an empty
	// local cache and HOME, against the remote cache at url, and returns the
	// part and the number of actions that ran.
	leg := func(name string, targets []string, url string, t *timing) (string, int, error) {
		n++
		dir := filepath.Join(out, fmt.Sprintf("leg-%d", n))
		if err := clone(dir); err != nil {
			return "", 0, err
		}
		part := filepath.Join(dir, "part-"+name)
		args := []string{"build"}
		for _, t := range targets {
			args = append(args, "--target", t)
		}
		cmd := exec.Command(bin, append(args, "--part", "--out", part, "--remote-cache", url, "--remote-cache-trusted-writer", pub, "--key", "file://"+key, "--json")...)
		cmd.Dir = dir
		cmd.Env = env(dir)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		secs, rss, err := measure.Timed(cmd)
		if err != nil {
			return "", 0, fmt.Errorf("build leg %s: %w", name, err)
		}
		var rep struct {
			Run int `json:"actions_run"`
		}
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			return "", 0, fmt.Errorf("build --json: %w", err)
		}
		if t != nil {
			t.Add(secs, rss)
		}
		return part, rep.Run, nil
	}
	res := results{CPUs: runtime.NumCPU()}
	var partX86 string
	for i := range runs {
		url := fmt.Sprintf("%s/cold-%d", base, i)
		p, ran, err := leg("linux-x86_64", []string{"linux-x86_64"}, url, &res.ColdLeg)
		if err != nil {
			return err
		}
		partX86, res.ActionsCold = p, ran
		if _, ran, err = leg("linux-x86_64", []string{"linux-x86_64"}, url, &res.WarmLeg); err != nil {
			return err
		}
		res.ActionsWarmRun = ran
	}
	res.WarmSpeedup = res.ColdLeg.Median / res.WarmLeg.Median
	partOthers, _, err := leg("others", []string{"linux-aarch64", "macos-arm64", "windows-x86_64"}, base+"/cold-0", nil)
	if err != nil {
		return err
	}
	merger := filepath.Join(out, "merge")
	if err := clone(merger); err != nil {
		return err
	}
	for i := range runs {
		cmd := exec.Command(bin, "merge", partX86, partOthers, "--out", fmt.Sprintf("dist-%d", i), "--key", "file://"+key, "--trusted-key", pub)
		cmd.Dir = merger
		cmd.Env = env(merger)
		secs, rss, err := measure.Timed(cmd)
		if err != nil {
			return fmt.Errorf("merge: %w", err)
		}
		res.Merge.Add(secs, rss)
		dst := filepath.Join(out, fmt.Sprintf("copy-%d", i))
		script := `mkdir -p "$0" && cp -r "$1" "$2" "$0"/ && find "$0" -type f -print0 | xargs -0 sha256sum > /dev/null`
		secs, rss, err = measure.Timed(exec.Command("sh", "-c", script, dst, partX86, partOthers))
		if err != nil {
			return fmt.Errorf("cp and sha256sum: %w", err)
		}
		res.CopyAndSum.Add(secs, rss)
	}
	res.MergeOverhead = res.Merge.Median / res.CopyAndSum.Median
	for _, p := range []string{partX86, partOthers} {
		filepath.Walk(p, func(_ string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				res.PartsBytes += info.Size()
			}
			return nil
		})
	}
	data, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "results.json"), data, 0o644); err != nil {
		return err
	}
	fmt.Printf("build leg, empty local cache: cold remote cache %.2f s (%d actions run), warm remote cache %.2f s (%d run): %.1fx\n",
		res.ColdLeg.Median, res.ActionsCold, res.WarmLeg.Median, res.ActionsWarmRun, res.WarmSpeedup)
	fmt.Printf("merge of 2 parts (%.1f MiB): %.2f s, cp -r + sha256sum %.2f s: %.2fx; peak RSS %d MiB\n",
		float64(res.PartsBytes)/(1<<20), res.Merge.Median, res.CopyAndSum.Median, res.MergeOverhead, res.Merge.PeakRSS>>20)
	return nil
}

// clone copies what a release of the embedded default needs into dir, as
// a fresh clone has it once scripts/bootstrap has run (its toolchains
// folder, zig, is a link to the checkout's).
func clone(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := []string{"-r", "release.toml", "release.lock", "backend", dir}
	if b, err := exec.Command("cp", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("cp: %v\n%s", err, b)
	}
	tc, err := filepath.Abs(".toolchains")
	if err != nil {
		return err
	}
	if _, err := os.Stat(tc); err != nil {
		return fmt.Errorf("the embedded default builds with zig from .toolchains: run scripts/bootstrap first (%w)", err)
	}
	return os.Symlink(tc, filepath.Join(dir, ".toolchains"))
}
