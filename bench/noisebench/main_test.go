package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/report"
)

func TestQuantile(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 5}, {0.9, 9}, {1, 10}, {0, 1}} {
		if got := quantile(xs, tc.q); got != tc.want {
			t.Errorf("quantile(1..10, %v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile(nil) = %v, want 0", got)
	}
}

// laneReport is a report with one crossover lane of two workloads, one
// worker of which is a failed attempt that was not chosen.
func laneReport() *report.Report {
	return &report.Report{Evidence: []report.Evidence{
		{Target: "linux-aarch64"},
		{Target: "linux-x86_64", Lanes: []report.Lane{
			{Name: "semantic", Kind: "cases"},
			{Name: "throughput", Kind: "crossover", Crossover: &report.Crossover{Workloads: []report.Workload{
				{Name: "b", R: 2, MaxRobustCV: 0.12, Workers: []report.Worker{
					{Chosen: true, RobustCV: 0.12}, {Chosen: true, RobustCV: 0.01},
					{Chosen: false, RobustCV: 0.9}, {Chosen: true, RobustCV: 0.02}, {Chosen: true, RobustCV: 0.03},
				}},
				{Name: "a", R: 5, MaxRobustCV: 0.04, Workers: []report.Worker{
					{Chosen: true, RobustCV: 0.04}, {Chosen: true, RobustCV: 0.01}, {Chosen: true, RobustCV: 0.02}, {Chosen: true, RobustCV: 0.03},
				}},
			}}},
		}},
	}}
}

func TestFillTakesTheChosenWorkersOfTheLane(t *testing.T) {
	var r result
	if err := r.fill(laneReport(), "linux-x86_64", "throughput"); err != nil {
		t.Fatal(err)
	}
	if r.Worst["a"] != 0.04 || r.Worst["b"] != 0.12 || r.R["a"] != 5 || len(r.Workers) != 8 {
		t.Errorf("fill = %+v", r)
	}
	for _, x := range r.Workers {
		if x == 0.9 {
			t.Errorf("fill kept the attempt that was not chosen: %v", r.Workers)
		}
	}
	for _, tc := range []struct{ target, lane string }{{"linux-x86_64", "semantic"}, {"linux-aarch64", "throughput"}, {"macos-arm64", "throughput"}} {
		if err := new(result).fill(laneReport(), tc.target, tc.lane); err == nil || !strings.Contains(err.Error(), "no crossover lane") {
			t.Errorf("fill(%s, %s) = %v, want a refusal naming the lane", tc.target, tc.lane, err)
		}
	}
}

func TestPrintTableCountsWorkersAboveTheBound(t *testing.T) {
	var r1, r2 result
	if err := r1.fill(laneReport(), "linux-x86_64", "throughput"); err != nil {
		t.Fatal(err)
	}
	r2 = r1
	r1.Run, r2.Run = 1, 2
	var b bytes.Buffer
	over := printTable(&b, options{lane: "throughput", target: "linux-x86_64", bound: 0.10}, "a test CPU", []result{r1, r2})
	if over != 2 {
		t.Errorf("printTable counted %d workers above 10 %%, want 2 (one per run)", over)
	}
	out := b.String()
	for _, want := range []string{"| a | 4.00% | 4.00% | 4.00% |", "| b | 12.00% | 12.00% | 12.00% |", "Every worker (16): median 2.00%, p90 12.00%, worst 12.00%; above 10%: 2."} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "| a |") > strings.Index(out, "| b |") {
		t.Errorf("workloads are not sorted:\n%s", out)
	}
}
