// Package hostload tells whether the machine is too busy for timings to
// mean anything: a timed verifier lane (a crossover lane) samples the
// host's run queue and steal time while its workers run, and stops with a
// refusal when [Judge] finds the host too loaded, rather than let every
// worker crawl into its timeout.
//
// The figures are Linux's: the run queue is procs_running of /proc/stat
// (tasks running or waiting for a CPU right now, on the whole host; the
// running count of /proc/loadavg where that line is missing), steal time
// the steal column of /proc/stat's cpu line (time a virtual machine's
// CPUs wanted to run and the hypervisor ran something else). Elsewhere
// there is no /proc: [Read] returns [ErrUnsupported] and nothing is
// watched.
//
// The parsers and [Judge] are pure (bytes or samples in, figures or a
// verdict out), so that a verdict can be tested with recorded samples.
package hostload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/evidence/stats"
)

// ErrUnsupported is what [Read] returns where the host's load cannot be
// read (no /proc: macOS, Windows).
var ErrUnsupported = errors.New("the host's load is read from Linux's /proc, which this system does not have")

// CPUTimes are the aggregate cpu line of /proc/stat, in clock ticks since
// boot. Guest time is part of User and Nice already, as the kernel counts
// it.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal uint64
	// StealKnown: the line has the steal column (Linux 2.6.11 and later;
	// 0 outside a virtual machine).
	StealKnown bool
}

// busy is the time the CPUs ran (or, for steal, wanted to run) something:
// everything but idle and I/O wait.
func (c CPUTimes) busy() uint64 {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal
}

// Stat is what /proc/stat says of the host's load.
type Stat struct {
	// CPU is the aggregate cpu line.
	CPU CPUTimes
	// CPUs counts the cpuN lines: the online CPUs, over which the run
	// queue is spread.
	CPUs int
	// ProcsRunning is procs_running: tasks running or runnable now.
	ProcsRunning int
	// HasProcsRunning: the procs_running line was there.
	HasProcsRunning bool
}

// ParseStat reads the contents of /proc/stat. It needs the aggregate cpu
// line; the other lines it reads are optional.
func ParseStat(data []byte) (Stat, error) {
	var s Stat
	haveCPU := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch name := fields[0]; {
		case name == "cpu":
			if haveCPU {
				return Stat{}, errors.New("/proc/stat: two aggregate cpu lines")
			}
			c, err := parseCPULine(fields[1:])
			if err != nil {
				return Stat{}, fmt.Errorf("/proc/stat: cpu line: %w", err)
			}
			s.CPU, haveCPU = c, true
		case strings.HasPrefix(name, "cpu"):
			if _, err := strconv.ParseUint(name[3:], 10, 32); err == nil {
				s.CPUs++
			}
		case name == "procs_running":
			if len(fields) != 2 {
				return Stat{}, fmt.Errorf("/proc/stat: procs_running line %q", sc.Text())
			}
			n, err := strconv.ParseUint(fields[1], 10, 31)
			if err != nil {
				return Stat{}, fmt.Errorf("/proc/stat: procs_running: %w", err)
			}
			s.ProcsRunning, s.HasProcsRunning = int(n), true
		}
	}
	if err := sc.Err(); err != nil {
		return Stat{}, fmt.Errorf("/proc/stat: %w", err)
	}
	if !haveCPU {
		return Stat{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	return s, nil
}

// parseCPULine reads the columns of a cpu line: user nice system idle
// iowait irq softirq steal (guest, guest_nice: not read). At least the
// first four must be there.
func parseCPULine(cols []string) (CPUTimes, error) {
	if len(cols) < 4 {
		return CPUTimes{}, fmt.Errorf("%d columns, want at least 4", len(cols))
	}
	var v [8]uint64
	for i := 0; i < len(cols) && i < len(v); i++ {
		n, err := strconv.ParseUint(cols[i], 10, 64)
		if err != nil {
			return CPUTimes{}, fmt.Errorf("column %d: %w", i+1, err)
		}
		v[i] = n
	}
	return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3], IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7],
		StealKnown: len(cols) >= 8}, nil
}

// Loadavg is /proc/loadavg: the load averages over 1, 5 and 15 minutes,
// the tasks runnable now and all tasks.
type Loadavg struct {
	Load1, Load5, Load15 float64
	Runnable, Tasks      int
}

// ParseLoadavg reads the contents of /proc/loadavg ("0.52 0.58 0.59 2/467
// 12345").
func ParseLoadavg(data []byte) (Loadavg, error) {
	fields := strings.Fields(string(data))
	if len(fields) < 4 {
		return Loadavg{}, fmt.Errorf("/proc/loadavg: %d fields, want at least 4", len(fields))
	}
	var l Loadavg
	for i, p := range []*float64{&l.Load1, &l.Load5, &l.Load15} {
		x, err := strconv.ParseFloat(fields[i], 64)
		if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return Loadavg{}, fmt.Errorf("/proc/loadavg: load average %q is not a number", fields[i])
		}
		*p = x
	}
	run, all, ok := strings.Cut(fields[3], "/")
	if !ok {
		return Loadavg{}, fmt.Errorf("/proc/loadavg: %q is not RUNNABLE/TASKS", fields[3])
	}
	r, err1 := strconv.ParseUint(run, 10, 31)
	t, err2 := strconv.ParseUint(all, 10, 31)
	if err1 != nil || err2 != nil {
		return Loadavg{}, fmt.Errorf("/proc/loadavg: %q is not RUNNABLE/TASKS", fields[3])
	}
	l.Runnable, l.Tasks = int(r), int(t)
	return l, nil
}

// Sample is the host's load at one moment.
type Sample struct {
	At time.Time
	// Running is the run queue: tasks running or waiting for a CPU, on
	// the whole host, the reader itself included.
	Running int
	// Load1 is the one-minute load average (shown, not judged: it counts
	// tasks waiting for the disk too, and lags).
	Load1 float64
	// CPU are the host's CPU times so far.
	CPU CPUTimes
}

// NewSample makes a sample from the contents of /proc/stat and
// /proc/loadavg (either may be nil when it could not be read, not both).
func NewSample(at time.Time, stat, loadavg []byte) (Sample, error) {
	s := Sample{At: at}
	var errs []error
	haveRunning := false
	if stat != nil {
		st, err := ParseStat(stat)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.CPU = st.CPU
			if st.HasProcsRunning {
				s.Running, haveRunning = st.ProcsRunning, true
			}
		}
	}
	if loadavg != nil {
		la, err := ParseLoadavg(loadavg)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.Load1 = la.Load1
			if !haveRunning {
				s.Running, haveRunning = la.Runnable, true
			}
		}
	}
	if !haveRunning {
		errs = append(errs, errors.New("neither /proc/stat nor /proc/loadavg gave the run queue"))
		return Sample{}, errors.Join(errs...)
	}
	return s, nil
}

// CPUs are the processors a verdict compares the run queue with.
type CPUs struct {
	// Online are the host's online CPUs (the cpuN lines of /proc/stat):
	// the run queue is the host's, spread over these.
	Online int
	// Allowed are the CPUs this process may use: its scheduler affinity,
	// and its cgroup's CPU quota (cpu.max, or cpu.cfs_quota_us) rounded
	// up; 0 when unknown.
	Allowed int
}

// String is "2 CPUs", or "64 CPUs (this process may use 2)".
func (c CPUs) String() string {
	s := plural(c.Online, "CPU")
	if c.Allowed > 0 && c.Allowed < c.Online {
		s += fmt.Sprintf(" (this process may use %d)", c.Allowed)
	}
	return s
}

// Policy is when a host counts as too busy.
type Policy struct {
	// Window is how long a load must last to count: the verdict is over
	// the samples of the last Window, and there is none before a Window
	// of samples.
	Window time.Duration
	// MaxQueuePerCPU bounds the run queue beyond the lane's own tasks,
	// per online CPU (its median over the window).
	MaxQueuePerCPU float64
	// MaxSteal bounds the share of the CPU time the host's CPUs wanted
	// that the hypervisor took (steal), over the window.
	MaxSteal float64
	// Own is how many tasks of the run queue are the lane's: the sampling
	// thread and the worker being timed.
	Own int
}

// DefaultPolicy is the policy of a crossover lane; a lane's max_host_load
// in release.toml replaces its MaxQueuePerCPU (0 watches nothing).
//
// The run queue: a timed worker competing with k other runnable tasks per
// CPU gets about 1/(k+1) of a CPU from the scheduler (CFS shares a CPU
// evenly among equal tasks), so its steps take k+1 times as long, and as
// those tasks come and go its step times swing by the same factor. Up to
// k = 2 a step takes at most three times as long, and the noise bound
// (the policy's max_robust_cv, 10 %) judges the timings themselves; beyond
// it the worker runs on a third of a CPU or less, a lane that takes 5
// minutes on an idle machine takes a quarter of an hour or more, and a
// change of one task in the queue moves step times by a quarter or more:
// the ratio says nothing of the candidate. k is the median over 10 s
// (one sample a second), so that a moment's burst (a compiler starting)
// does not count, and a load that is there half the time does.
//
// Steal: where a hypervisor takes 10 % or more of the CPU time the guest
// wanted, in bursts the guest cannot see, a step's time changes by as
// much as the noise bound allows in all: the timings measure the
// neighbours.
//
// Own is 2: the sampling thread (it is running when it reads /proc/stat)
// and the worker's main thread.
var DefaultPolicy = Policy{Window: 10 * time.Second, MaxQueuePerCPU: 2, MaxSteal: 0.10, Own: 2}

// Verdict is what [Judge] found.
type Verdict struct {
	// Judged: the samples span a window; when false, nothing else is set.
	Judged bool
	// Busy: the host is too busy for timings.
	Busy bool
	// Queue is the median run queue over the window (the lane's own tasks
	// included), Beyond the same without them.
	Queue, Beyond float64
	// CPUs are the CPUs compared with.
	CPUs CPUs
	// Span is the time the samples judged cover.
	Span time.Duration
	// Steal is the share of the wanted CPU time stolen over the window;
	// StealKnown is false when the kernel does not report it
	// (StealReported is false), or the CPUs wanted too little time to
	// tell.
	Steal                     float64
	StealKnown, StealReported bool
	// Load1 is the newest sample's one-minute load average.
	Load1 float64
	// Policy is the policy judged by.
	Policy Policy
}

// minWanted is the least CPU time (clock ticks; USER_HZ is 100 on Linux)
// the CPUs must have wanted over a window for its steal share to count:
// half a second.
const minWanted = 50

// Judge says whether the host was too busy over the last p.Window of
// samples (in time order) for timings to mean anything: the median run
// queue beyond p.Own is above p.MaxQueuePerCPU per online CPU, or the
// steal share is above p.MaxSteal.
func Judge(samples []Sample, cpus CPUs, p Policy) Verdict {
	if len(samples) < 2 || cpus.Online < 1 {
		return Verdict{}
	}
	last := samples[len(samples)-1]
	// The first sample of the window: the newest that is a whole window
	// older than the last.
	first := -1
	for i := len(samples) - 2; i >= 0; i-- {
		if last.At.Sub(samples[i].At) >= p.Window {
			first = i
			break
		}
	}
	if first < 0 {
		return Verdict{}
	}
	win := samples[first:]
	queue := make([]float64, len(win))
	for i, s := range win {
		queue[i] = float64(s.Running)
	}
	v := Verdict{Judged: true, CPUs: cpus, Span: last.At.Sub(win[0].At), Load1: last.Load1, Policy: p}
	v.Queue = stats.Median(queue)
	v.Beyond = max(v.Queue-float64(p.Own), 0)
	a, b := win[0].CPU, last.CPU
	v.StealReported = a.StealKnown && b.StealKnown
	if v.StealReported && b.Steal >= a.Steal && b.busy() >= a.busy() {
		if wanted := b.busy() - a.busy(); wanted >= minWanted {
			v.Steal, v.StealKnown = float64(b.Steal-a.Steal)/float64(wanted), true
		}
	}
	v.Busy = v.Beyond > p.MaxQueuePerCPU*float64(cpus.Online) || (v.StealKnown && v.Steal > p.MaxSteal)
	return v
}

// String names the load: "run queue 21 on 2 CPUs over 10 s, steal 0 %".
func (v Verdict) String() string {
	if !v.Judged {
		return "not measured yet"
	}
	s := fmt.Sprintf("run queue %s on %s over %s", num(v.Queue), v.CPUs, seconds(v.Span))
	switch {
	case v.StealKnown:
		s += fmt.Sprintf(", steal %s %%", num(100*v.Steal))
	case v.StealReported:
		s += ", steal not measurable (the CPUs were nearly idle)"
	default:
		s += ", steal not reported"
	}
	return s
}

// Limits says what the verdict was judged against: "at most 4 runnable
// tasks beyond the lane's own 2 on 2 CPUs, and at most 10 % steal".
func (v Verdict) Limits() string {
	return fmt.Sprintf("at most %s runnable tasks beyond the lane's own %d on %s, and at most %s %% steal",
		num(v.Policy.MaxQueuePerCPU*float64(v.CPUs.Online)), v.Policy.Own, plural(v.CPUs.Online, "CPU"), num(100*v.Policy.MaxSteal))
}

// num shows a figure with at most one decimal, none when it is whole.
func num(x float64) string {
	r := math.Round(x*10) / 10
	if r == math.Trunc(r) {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

func seconds(d time.Duration) string {
	return num(math.Round(d.Seconds()*10)/10) + " s"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// ParseCPUMax reads a cgroup v2 cpu.max ("max 100000", "150000 100000")
// as a number of CPUs; ok is false for no limit ("max").
func ParseCPUMax(data []byte) (cpus float64, ok bool, err error) {
	fields := strings.Fields(string(data))
	if len(fields) == 0 || len(fields) > 2 {
		return 0, false, fmt.Errorf("cpu.max %q is not QUOTA PERIOD", data)
	}
	if fields[0] == "max" {
		return 0, false, nil
	}
	period := "100000"
	if len(fields) == 2 {
		period = fields[1]
	}
	return quota(fields[0], period)
}

// ParseCFSQuota reads cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us
// as a number of CPUs; ok is false for no limit (a quota of -1).
func ParseCFSQuota(quotaUS, periodUS []byte) (cpus float64, ok bool, err error) {
	q := strings.TrimSpace(string(quotaUS))
	if q == "-1" {
		return 0, false, nil
	}
	return quota(q, strings.TrimSpace(string(periodUS)))
}

func quota(q, p string) (float64, bool, error) {
	qn, err1 := strconv.ParseUint(q, 10, 63)
	pn, err2 := strconv.ParseUint(p, 10, 63)
	if err1 != nil || err2 != nil || pn == 0 {
		return 0, false, fmt.Errorf("CPU quota %q per period %q is not two counts of microseconds", q, p)
	}
	return float64(qn) / float64(pn), true, nil
}

// CgroupPaths reads /proc/self/cgroup: the process's cgroup v2 path (the
// "0::" line) and its cgroup v1 cpu controller's path ("" when absent).
func CgroupPaths(data []byte) (v2, v1cpu string) {
	for line := range strings.SplitSeq(string(data), "\n") {
		id, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		ctrls, path, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && ctrls == "" {
			v2 = path
			continue
		}
		if slices.Contains(strings.Split(ctrls, ","), "cpu") {
			v1cpu = path
		}
	}
	return v2, v1cpu
}
