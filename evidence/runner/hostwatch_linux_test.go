//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// spin loads the machine with n busy loops (processes: goroutines beyond
// GOMAXPROCS would not be runnable tasks), each ended by the test's end
// or after limit, whichever comes first.
func spin(t *testing.T, n int, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	var cmds []*exec.Cmd
	t.Cleanup(func() {
		cancel()
		for _, c := range cmds {
			c.Wait()
		}
	})
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
}

// TestLoadedHostRefusesTheLane runs a crossover lane on a machine loaded
// on purpose (a busy loop on every CPU and four more per CPU): the lane
// refuses with RuleHostTooBusy once a window of samples has seen the
// load, long before a worker's own timeout (a minute), naming the load
// and what to do. TestHostTooBusyStopsTheLane has the same lane run to
// its end on a host that is not busy, and package hostload's
// TestJudgeRecorded judges samples recorded on this 2-CPU machine idle
// and loaded.
func TestLoadedHostRefusesTheLane(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the machine for about 12 s")
	}
	w := newHostWatch()
	if w.read == nil {
		t.Skip(w.off)
	}
	spin(t, 5*w.cpus.Online, 60*time.Second)
	o := newOutput()
	env := shEnv(t, o)
	env.watch = w
	env.vars["STEP_SLEEP"] = "1"
	l := crossoverLane(3, time.Hour, time.Minute) // 12 workers of 4 s each
	start := time.Now()
	ms, err := runCrossover(context.Background(), l, env)
	took := time.Since(start)
	t.Logf("stopped after %s: %v", took.Round(10*time.Millisecond), err)
	var stopped *LaneStoppedError
	if !errors.As(err, &stopped) || stopped.Rule != RuleHostTooBusy || ms != nil {
		t.Fatalf("runCrossover = %d measurements, %v; want a host_too_busy refusal", len(ms), err)
	}
	// A window (10 s) of samples, and then some for a loaded machine to
	// schedule the watch; a worker's timeout is a minute.
	if took > 25*time.Second {
		t.Errorf("the lane stopped after %s", took)
	}
	msg := err.Error()
	for _, s := range []string{"[evidence.host_too_busy] speed: the machine is too busy for timings to mean anything: run queue ",
		fmt.Sprintf(" on %d CPU", w.cpus.Online), " over 1", "rerun on an idle machine"} {
		if !strings.Contains(msg, s) {
			t.Errorf("refusal %q does not say %q", msg, s)
		}
	}
	if stopped.Load.Beyond <= stopped.Load.Policy.MaxQueuePerCPU*float64(w.cpus.Online) {
		t.Errorf("refused with a run queue of %v beyond the lane's own", stopped.Load.Beyond)
	}
}
