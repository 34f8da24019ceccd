// Command noisebench measures the noise of a crossover lane on this
// machine: it runs `mkrelease evidence run --lane throughput` on one
// target's bundle of a built release several times back to back, reads
// each run's evidence back with `mkrelease report --json` (every figure
// recomputed by mkrelease from the raw records, as the policies see them),
// and prints each workload's worst robust CV per run and the distribution
// over every worker, against the bound (by default 10 %, the policies' default noise bound).
//
//	go run ./bench/noisebench [-runs 5] [-dist dist] [-lane throughput] [-target linux-x86_64] [-check]
//
// It works on a copy of the release folder (under -out), so the folder's
// own evidence is left alone. With -check it exits 1 when any worker of
// any run is above the bound; without, it only reports. It needs a built
// release (`mkrelease build`) and the interpreter the lanes need, and it
// takes about 6 minutes a run on 2 cores: run it on a machine nothing else
// is loading, as docs/benchmarks.md's figures were.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/report"
)

type options struct {
	runs   int
	dist   string
	lane   string
	target string
	out    string
	bound  float64
	check  bool
}

// result is what one run of the lane gave.
type result struct {
	Run     int                `json:"run"`
	Seconds float64            `json:"seconds"`
	Load    string             `json:"loadavg_before"`
	ExitOK  bool               `json:"evidence_run_ok"`
	Worst   map[string]float64 `json:"worst_robust_cv"` // per workload, over its chosen workers
	R       map[string]float64 `json:"r"`
	Workers []float64          `json:"workers_robust_cv"` // every chosen worker
}

func main() {
	var o options
	flag.IntVar(&o.runs, "runs", 5, "runs of the lane, back to back")
	flag.StringVar(&o.dist, "dist", "dist", "the built release folder (copied, not changed)")
	flag.StringVar(&o.lane, "lane", "throughput", "the crossover lane to run")
	flag.StringVar(&o.target, "target", "linux-x86_64", "the target whose bundle the lane runs")
	flag.StringVar(&o.out, "out", "bench/out-noise", "work folder (replaced)")
	flag.Float64Var(&o.bound, "bound", 0.10, "the robust CV bound to report against")
	flag.BoolVar(&o.check, "check", false, "exit 1 when a worker of any run is above the bound")
	flag.Parse()
	over, err := run(o, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noisebench:", err)
		os.Exit(2)
	}
	if o.check && over > 0 {
		fmt.Fprintf(os.Stderr, "noisebench: %d workers above the bound of %.0f%%\n", over, 100*o.bound)
		os.Exit(1)
	}
}

// run measures, prints the table on w and logs on logw; it returns the
// number of workers above the bound over every run.
func run(o options, w, logw io.Writer) (int, error) {
	if o.runs < 1 {
		return 0, fmt.Errorf("-runs must be at least 1, got %d", o.runs)
	}
	out, err := filepath.Abs(o.out)
	if err != nil {
		return 0, err
	}
	if err := os.RemoveAll(out); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	bin := filepath.Join(out, "mkrelease")
	if b, err := exec.Command("go", "build", "-o", bin, "./cmd/mkrelease").CombinedOutput(); err != nil {
		return 0, fmt.Errorf("go build: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(o.dist, dist.ArtifactsFile)); err != nil {
		return 0, fmt.Errorf("%s is not a built release (%v): run `mkrelease build` first", o.dist, err)
	}
	work := filepath.Join(out, "dist")
	if b, err := exec.Command("cp", "-a", o.dist, work).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("copying %s: %v\n%s", o.dist, err, b)
	}
	var results []result
	for i := 1; i <= o.runs; i++ {
		r := result{Run: i, Load: loadavg()}
		fmt.Fprintf(logw, "noisebench: run %d of %d (load average %s)\n", i, o.runs, r.Load)
		cmd := exec.Command(bin, "evidence", "run", "--dist", work, "--target", o.target, "--lane", o.lane)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		start := time.Now()
		err := cmd.Run()
		r.Seconds = time.Since(start).Seconds()
		r.ExitOK = err == nil
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				return 0, fmt.Errorf("evidence run: %v\n%s", err, errb.String())
			}
			// Exit 1: a workload had no usable measurement; the
			// evidence is written and the report shows why.
		}
		rep, raw, err := readReport(bin, work)
		if err != nil {
			return 0, err
		}
		// Each run's whole report (every worker's steps), for a look at
		// which workers a noisy run hit.
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("run-%d.report.json", i)), raw, 0o644); err != nil {
			return 0, err
		}
		if err := r.fill(rep, o.target, o.lane); err != nil {
			return 0, err
		}
		results = append(results, r)
	}
	machine := cpuModel()
	over := printTable(w, o, machine, results)
	b, err := json.MarshalIndent(struct {
		Machine string   `json:"machine"`
		CPUs    int      `json:"cpus"`
		Bound   float64  `json:"bound"`
		Runs    []result `json:"runs"`
	}{machine, runtime.NumCPU(), o.bound, results}, "", " ")
	if err != nil {
		return 0, err
	}
	return over, os.WriteFile(filepath.Join(out, "results.json"), append(b, '\n'), 0o644)
}

// readReport runs `mkrelease report DIST --json` and decodes it; it also
// returns the JSON as read.
func readReport(bin, dist string) (*report.Report, []byte, error) {
	cmd := exec.Command(bin, "report", dist, "--json")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	b, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("report: %v\n%s", err, errb.String())
	}
	var rep report.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, nil, fmt.Errorf("report --json: %w", err)
	}
	return &rep, b, nil
}

// fill takes the lane's figures for target from rep.
func (r *result) fill(rep *report.Report, target, lane string) error {
	for _, ev := range rep.Evidence {
		if ev.Target != target {
			continue
		}
		for _, l := range ev.Lanes {
			if l.Name != lane || l.Crossover == nil {
				continue
			}
			r.Worst, r.R = map[string]float64{}, map[string]float64{}
			for _, wl := range l.Crossover.Workloads {
				r.Worst[wl.Name] = wl.MaxRobustCV
				r.R[wl.Name] = wl.R
				for _, wk := range wl.Workers {
					if wk.Chosen {
						r.Workers = append(r.Workers, wk.RobustCV)
					}
				}
			}
			return nil
		}
	}
	return fmt.Errorf("the report has no crossover lane %q for %s: is it declared in release.toml?", lane, target)
}

// printTable writes the per-workload table and the summary (machine names
// the processor), and returns
// the number of workers above the bound.
func printTable(w io.Writer, o options, machine string, rs []result) int {
	var names []string
	for n := range rs[0].Worst {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintf(w, "Lane %s of %s, %d runs back to back on %s (%d CPUs); each cell is the workload's worst worker robust CV.\n\n",
		o.lane, o.target, len(rs), machine, runtime.NumCPU())
	head := "| workload |"
	rule := "| --- |"
	for _, r := range rs {
		head += fmt.Sprintf(" run %d |", r.Run)
		rule += " ---: |"
	}
	fmt.Fprintln(w, head+" worst |")
	fmt.Fprintln(w, rule+" ---: |")
	for _, n := range names {
		line, worst := "| "+n+" |", 0.0
		for _, r := range rs {
			line += fmt.Sprintf(" %.2f%% |", 100*r.Worst[n])
			worst = max(worst, r.Worst[n])
		}
		fmt.Fprintf(w, "%s %.2f%% |\n", line, 100*worst)
	}
	var all []float64
	over := 0
	line := "| lane minutes |"
	for _, r := range rs {
		all = append(all, r.Workers...)
		line += fmt.Sprintf(" %.1f |", r.Seconds/60)
		for _, x := range r.Workers {
			if x > o.bound {
				over++
			}
		}
	}
	fmt.Fprintln(w, line+" |")
	slices.Sort(all)
	fmt.Fprintf(w, "\nEvery worker (%d): median %.2f%%, p90 %.2f%%, worst %.2f%%; above %.0f%%: %d.\n",
		len(all), 100*quantile(all, 0.5), 100*quantile(all, 0.9), 100*all[len(all)-1], 100*o.bound, over)
	return over
}

// quantile is the q-quantile of sorted xs by the nearest-rank method:
// the value of rank ⌈q·n⌉ (the smallest for q = 0).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(len(xs))))
	return xs[min(max(rank-1, 0), len(xs)-1)]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOOS + "/" + runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOOS + "/" + runtime.GOARCH
}
