// Package noisetrace holds the scripts that record the verifier worker's
// call-by-call CPU times (trace.py) and replay any timing design over them
// (replay.py); this test runs their Python unit tests, which check the
// worker's timing rules and that its design holds the 10 % noise bound on
// a synthetic switching host where the previous design did not.
package noisetrace

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/mkrelease/mkrelease/evidence/stats"
)

func TestPythonUnitTests(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	out, err := exec.Command(py, "-m", "unittest", "-v", "test_replay.py").CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest test_replay.py: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestSettledCVIsMkreleasesRobustCV checks that the worker's settled_cv,
// which decides when it stops timing, is the robust CV mkrelease records
// for the same steps and warm-ups (evidence/stats.Worker), on step sets
// built to be hard for a median: ties, two clusters split near half, odd
// and even counts.
func TestSettledCVIsMkreleasesRobustCV(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	type testCase struct {
		Steps   []float64 `json:"steps"`
		Warmups int       `json:"warmups"`
	}
	rng := rand.New(rand.NewPCG(15, 2026))
	var cases []testCase
	for i := range 400 {
		n := 3 + rng.IntN(18)
		w := rng.IntN(min(4, n-2))
		steps := make([]float64, n)
		for j := range steps {
			switch i % 4 {
			case 0: // scatter
				steps[j] = 0.02 * (1 + 0.5*rng.Float64())
			case 1: // two clusters
				steps[j] = 0.02 * []float64{1, 1.3}[rng.IntN(2)] * (1 + 0.01*rng.Float64())
			case 2: // ties
				steps[j] = 0.001 * float64(1+rng.IntN(3))
			default: // one slow step, the rest close
				steps[j] = 0.005 * (1 + 0.02*rng.Float64())
			}
		}
		if i%4 == 3 {
			steps[rng.IntN(n)] *= 3
		}
		cases = append(cases, testCase{steps, w}) // n-w-1 >= 2: mkrelease accepts it
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
sys.path.insert(0, "../../backend/verifier")
import worker
print(json.dumps([worker.settled_cv(c["steps"], c["warmups"]) for c in json.load(sys.stdin)]))`
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var got []float64
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("python3 printed %d values for %d cases (%v): %.200s", len(got), len(cases), err, out)
	}
	for i, c := range cases {
		want, err := stats.Worker(c.Steps, c.Warmups)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if math.Abs(got[i]-want.RobustCV) > 1e-12*max(1, want.RobustCV) {
			t.Errorf("steps %v, %d warm-ups: worker.settled_cv %v, mkrelease's robust CV %v", c.Steps, c.Warmups, got[i], want.RobustCV)
		}
	}
}
