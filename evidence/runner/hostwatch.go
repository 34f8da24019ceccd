package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/hostload"
)

// The ids of the refusals of a timed lane that was stopped before its
// end. Each refusal's message starts with its id in brackets, as the
// publish policies' denials do (package policies); nothing is written.
const (
	// RuleHostTooBusy: the machine was too busy while a crossover lane
	// ran for its timings to mean anything (package hostload says when).
	RuleHostTooBusy = "evidence.host_too_busy"
	// RuleLaneTimeout: a crossover lane ran longer than its
	// lane_timeout.
	RuleLaneTimeout = "evidence.lane_timeout"
)

// LaneStoppedError is a crossover lane stopped before its end, because
// the host was too busy ([RuleHostTooBusy]) or the lane ran out of its
// lane_timeout ([RuleLaneTimeout]). The run writes no evidence: timings
// taken on a machine that busy, or a lane cut short, would only be
// refused when the release is published. It maps to exit status 1.
type LaneStoppedError struct {
	// Rule is RuleHostTooBusy or RuleLaneTimeout.
	Rule string
	// Target ("" when not known) and Lane are the lane stopped.
	Target, Lane string
	// Done workloads of Total had all their workers run; Workload is the
	// one that was running.
	Done, Total int
	Workload    string
	// Elapsed is how long the lane ran; LaneTimeout its bound.
	Elapsed, LaneTimeout time.Duration
	// Load is the host's load when the lane stopped (Judged is false when
	// it is not watched here, or was not measured for a window yet).
	Load hostload.Verdict
}

// Error names the lane, the load and what to do.
func (e *LaneStoppedError) Error() string {
	var b strings.Builder
	b.WriteString("[" + e.Rule + "] ")
	if e.Target != "" {
		b.WriteString(e.Target + " ")
	}
	b.WriteString(e.Lane + ": ")
	where := fmt.Sprintf("in workload %d of %d (%s)", e.Done+1, e.Total, e.Workload)
	rerun := "`mkrelease evidence run`"
	if e.Target != "" {
		rerun = "`mkrelease evidence run --target " + e.Target + "`"
	}
	switch e.Rule {
	case RuleHostTooBusy:
		fmt.Fprintf(&b, "the machine is too busy for timings to mean anything: %s; a lane is timed with %s. "+
			"The lane was stopped after %s, %s, and no evidence was written: rerun on an idle machine (%s), "+
			"or, on a machine never quieter than this (a shared runner), raise max_host_load in its [[evidence.lane]] table of release.toml",
			e.Load, e.Load.Limits(), round(e.Elapsed), where, rerun)
	default:
		fmt.Fprintf(&b, "the lane ran longer than its lane_timeout %s and was stopped %s; no evidence was written", e.LaneTimeout, where)
		if e.Load.Judged {
			fmt.Fprintf(&b, ". The host's load then: %s", e.Load)
		}
		fmt.Fprintf(&b, ". Rerun on an idle machine (%s), or, if the lane needs longer on this one, raise lane_timeout in its [[evidence.lane]] table of release.toml", rerun)
	}
	return b.String()
}

// ExitCode is 1: the run refused.
func (e *LaneStoppedError) ExitCode() int { return 1 }

// round is d to a tenth of a second.
func round(d time.Duration) time.Duration { return d.Round(100 * time.Millisecond) }

// hostWatch is how a crossover lane watches the host's load while its
// workers run: a sample every interval, judged by policy (package
// hostload).
type hostWatch struct {
	// read samples the load now; nil watches nothing.
	read     func() (hostload.Sample, error)
	cpus     hostload.CPUs
	policy   hostload.Policy
	interval time.Duration
	// off says why nothing is watched (read is nil).
	off string
}

// newHostWatch watches this host: on Linux its /proc, once a second, by
// hostload.DefaultPolicy. Elsewhere there is no /proc and nothing is
// watched (the lane's lane_timeout still bounds it, and the noise bound
// of the publish policies still judges its timings).
func newHostWatch() hostWatch {
	cpus, err := hostload.ReadCPUs()
	if err != nil {
		return hostWatch{off: err.Error()}
	}
	return hostWatch{read: hostload.Read, cpus: cpus, policy: hostload.DefaultPolicy, interval: time.Second}
}

// forLane is h as lane l watches the host: its run queue limit is the
// lane's max_host_load (config.Lane.HostLoadLimit), and at 0 nothing is
// watched, steal time neither (the lane says so once).
func (h hostWatch) forLane(l config.Lane) hostWatch {
	limit := l.HostLoadLimit()
	if limit == 0 {
		return hostWatch{off: "max_host_load = 0 in its [[evidence.lane]] table turns the watch off"}
	}
	h.policy.MaxQueuePerCPU = limit
	return h
}

// ManifestHostWatch says how a crossover lane watched the host's load
// while its workers ran (docs/evidence.md, "When the machine is too
// busy"), so that a reader of the evidence sees whether its timings were
// taken under the watch, and with which limits.
type ManifestHostWatch struct {
	// Watched: the load was watched, and a host too busy would have
	// stopped the lane (no evidence written).
	Watched bool `json:"watched"`
	// MaxHostLoad is the lane's max_host_load: the most runnable tasks
	// per CPU beyond the lane's own (median over Window); 0 turned the
	// watch off.
	MaxHostLoad float64 `json:"max_host_load"`
	// MaxSteal is the most steal time, a share of the CPU time wanted,
	// and Window the time a load must last; set when watched.
	MaxSteal float64 `json:"max_steal,omitempty"`
	Window   string  `json:"window,omitempty"`
	// Off says why the load was not watched.
	Off string `json:"off,omitempty"`
}

// record is what the evidence records of lane l's watch of this host
// (h, before forLane).
func (h hostWatch) record(l config.Lane) *ManifestHostWatch {
	w := h.forLane(l)
	r := &ManifestHostWatch{MaxHostLoad: l.HostLoadLimit(), Off: w.off}
	if w.read != nil {
		r.Watched, r.MaxSteal, r.Window, r.Off = true, w.policy.MaxSteal, w.policy.Window.String(), ""
	} else if r.Off == "" {
		r.Off = "the host's load was not read"
	}
	return r
}

// hostBusy is the cause a watched lane is stopped with.
type hostBusy struct{ v hostload.Verdict }

func (h *hostBusy) Error() string { return "the host is too busy: " + h.v.String() }

// errLaneTimeout is the cause a lane that ran out of its lane_timeout is
// stopped with.
var errLaneTimeout = errors.New("the lane ran out of its lane_timeout")

// watching is a running watch.
type watching struct {
	mu      sync.Mutex
	samples []hostload.Sample
	last    hostload.Verdict
	done    chan struct{}
}

// start samples the host at once (before the lane's first worker) and
// then every interval until ctx ends, and stops the lane (stop, with a
// *hostBusy cause) when a window of samples finds the host too busy.
// Sampling costs two reads of small /proc files a second.
func (h hostWatch) start(ctx context.Context, stop context.CancelCauseFunc) *watching {
	w := &watching{done: make(chan struct{})}
	if h.read == nil {
		close(w.done)
		return w
	}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(h.interval)
		defer tick.Stop()
		for {
			if s, err := h.read(); err == nil {
				if v := w.add(s, h); v.Busy {
					stop(&hostBusy{v})
					return
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// add keeps s (and the samples of the last two windows) and judges them.
func (w *watching) add(s hostload.Sample, h hostWatch) hostload.Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples = append(w.samples, s)
	keep := 0
	for keep < len(w.samples)-1 && s.At.Sub(w.samples[keep].At) > 2*h.policy.Window {
		keep++
	}
	w.samples = w.samples[keep:]
	w.last = hostload.Judge(w.samples, h.cpus, h.policy)
	return w.last
}

// verdict is the last verdict (after the watch ended, when stop waits).
func (w *watching) verdict() hostload.Verdict {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// wait waits for the watch to end (its context ended).
func (w *watching) wait() { <-w.done }
