// Package noisetrace holds the scripts that record the verifier worker's
// call-by-call CPU times (trace.py) and replay any timing design over them
// (replay.py); this test runs their Python unit tests, which check the
// worker's timing rules and that its design holds the 10 % noise bound on
// a synthetic switching host where the previous design did not.
package noisetrace

import (
	"os/exec"
	"testing"
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
