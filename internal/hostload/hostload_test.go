package hostload

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

const statIdle = `cpu  1618858 427 651684 280168 7058 0 7352 0 0 0
cpu0 800000 200 300000 140000 3000 0 3000 0 0 0
cpu1 818858 227 351684 140168 4058 0 4352 0 0 0
intr 123 4 5
ctxt 99
btime 1796657000
processes 20063
procs_running 3
procs_blocked 0
softirq 1 2 3
`

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		name    string
		data    string
		want    Stat
		wantErr string
	}{
		{"linux 6", statIdle, Stat{CPU: CPUTimes{User: 1618858, Nice: 427, System: 651684, Idle: 280168, IOWait: 7058, SoftIRQ: 7352, StealKnown: true},
			CPUs: 2, ProcsRunning: 3, HasProcsRunning: true}, ""},
		{"steal reported", "cpu 10 0 10 100 0 0 0 25 0 0\ncpu0 10 0 10 100 0 0 0 25\nprocs_running 1\n",
			Stat{CPU: CPUTimes{User: 10, System: 10, Idle: 100, Steal: 25, StealKnown: true}, CPUs: 1, ProcsRunning: 1, HasProcsRunning: true}, ""},
		{"no steal column (before 2.6.11)", "cpu 1 2 3 4 5 6 7\n", Stat{CPU: CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7}}, ""},
		{"four columns", "cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu3 1 2 3 4\n", Stat{CPU: CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4}, CPUs: 2}, ""},
		{"cpufreq-like names are not CPUs", "cpu 1 2 3 4\ncpux 1\ncpu0 1 2 3 4\n", Stat{CPU: CPUTimes{User: 1, Nice: 2, System: 3, Idle: 4}, CPUs: 1}, ""},
		{"no cpu line", "procs_running 3\n", Stat{}, "no aggregate cpu line"},
		{"short cpu line", "cpu 1 2 3\n", Stat{}, "3 columns"},
		{"not a number", "cpu 1 2 x 4\n", Stat{}, "column 3"},
		{"negative", "cpu 1 2 -3 4\n", Stat{}, "column 3"},
		{"two cpu lines", "cpu 1 2 3 4\ncpu 1 2 3 4\n", Stat{}, "two aggregate"},
		{"bad procs_running", "cpu 1 2 3 4\nprocs_running many\n", Stat{}, "procs_running"},
		{"procs_running without value", "cpu 1 2 3 4\nprocs_running\n", Stat{}, "procs_running"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.data))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseStat = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseLoadavg(t *testing.T) {
	for _, tt := range []struct {
		data    string
		want    Loadavg
		wantErr bool
	}{
		{"6.98 2.71 2.39 16/226 20063\n", Loadavg{6.98, 2.71, 2.39, 16, 226}, false},
		{"0.00 0.01 0.05 1/80 1", Loadavg{0, 0.01, 0.05, 1, 80}, false},
		{"6.98 2.71 2.39 16/226", Loadavg{6.98, 2.71, 2.39, 16, 226}, false},
		{"6.98 2.71 2.39", Loadavg{}, true},
		{"6.98 2.71 x 16/226 1", Loadavg{}, true},
		{"6.98 -2.71 2.39 16/226 1", Loadavg{}, true},
		{"NaN 2.71 2.39 16/226 1", Loadavg{}, true},
		{"6.98 2.71 2.39 16-226 1", Loadavg{}, true},
		{"6.98 2.71 2.39 16/ 1", Loadavg{}, true},
		{"", Loadavg{}, true},
	} {
		got, err := ParseLoadavg([]byte(tt.data))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseLoadavg(%q) = %+v, %v; want %+v, error %v", tt.data, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNewSample(t *testing.T) {
	at := time.Unix(1796669865, 0)
	s, err := NewSample(at, []byte(statIdle), []byte("6.98 2.71 2.39 16/226 20063\n"))
	if err != nil || s.Running != 3 || s.Load1 != 6.98 || s.CPU.User != 1618858 {
		t.Errorf("both files: %+v, %v; want procs_running 3 (not loadavg's 16), load 6.98", s, err)
	}
	s, err = NewSample(at, []byte("cpu 1 2 3 4\n"), []byte("6.98 2.71 2.39 16/226 20063\n"))
	if err != nil || s.Running != 16 {
		t.Errorf("no procs_running: %+v, %v; want loadavg's 16", s, err)
	}
	s, err = NewSample(at, nil, []byte("1.00 2.71 2.39 5/226 20063\n"))
	if err != nil || s.Running != 5 || s.CPU.StealKnown {
		t.Errorf("loadavg only: %+v, %v; want 5, steal unknown", s, err)
	}
	if _, err := NewSample(at, []byte("cpu 1 2 3 4\n"), nil); err == nil {
		t.Error("no run queue anywhere: no error")
	}
	if _, err := NewSample(at, []byte("garbage"), []byte("garbage")); err == nil {
		t.Error("garbage: no error")
	}
}

// series makes samples one second apart with the run queues given and
// steal growing by steal ticks of every 100 busy ticks.
func series(queue []int, stealPer100 uint64) []Sample {
	t0 := time.Unix(1796669865, 0)
	var out []Sample
	var c CPUTimes
	c.StealKnown = true
	for i, q := range queue {
		out = append(out, Sample{At: t0.Add(time.Duration(i) * time.Second), Running: q, CPU: c})
		c.User += 100 - stealPer100
		c.Steal += stealPer100
		c.Idle += 100
	}
	return out
}

func repeat(q, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = q
	}
	return out
}

func TestJudge(t *testing.T) {
	two := CPUs{Online: 2, Allowed: 2}
	for _, tt := range []struct {
		name    string
		samples []Sample
		cpus    CPUs
		judged  bool
		busy    bool
		says    string
	}{
		{"no samples", nil, two, false, false, "not measured yet"},
		{"less than a window", series(repeat(30, 10), 0), two, false, false, "not measured yet"},
		{"idle", series(repeat(2, 11), 0), two, true, false, "run queue 2 on 2 CPUs over 10 s, steal 0 %"},
		{"the lane and a browser", series(repeat(4, 11), 0), two, true, false, "run queue 4 on 2 CPUs"},
		// At the limit: 4 beyond the lane's own 2 on 2 CPUs is allowed...
		{"at the limit", series(repeat(6, 11), 0), two, true, false, "run queue 6 on 2 CPUs"},
		// ... one more is not.
		{"just above", series(repeat(7, 11), 0), two, true, true, "run queue 7 on 2 CPUs"},
		{"ten times the cores", series(repeat(21, 11), 0), two, true, true, "run queue 21 on 2 CPUs over 10 s, steal 0 %"},
		{"same queue, many CPUs", series(repeat(21, 11), 0), CPUs{Online: 16, Allowed: 16}, true, false, "run queue 21 on 16 CPUs"},
		{"a container's quota is not the host's CPUs", series(repeat(21, 11), 0), CPUs{Online: 16, Allowed: 2}, true, false,
			"run queue 21 on 16 CPUs (this process may use 2) over 10 s"},
		{"a burst is not sustained", series([]int{2, 2, 40, 40, 40, 2, 2, 2, 2, 2, 2}, 0), two, true, false, "run queue 2 on 2 CPUs"},
		{"most of the window is", series([]int{2, 2, 2, 2, 2, 30, 30, 30, 30, 30, 30}, 0), two, true, true, "run queue 30 on 2 CPUs"},
		{"only the last window counts", series(append(repeat(30, 20), repeat(2, 11)...), 0), two, true, false, "run queue 2 on 2 CPUs"},
		{"steal below the limit", series(repeat(2, 11), 9), two, true, false, "steal 9 %"},
		{"steal above the limit", series(repeat(2, 11), 25), two, true, true, "run queue 2 on 2 CPUs over 10 s, steal 25 %"},
		{"no CPUs known", series(repeat(30, 11), 0), CPUs{}, false, false, "not measured yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.samples, tt.cpus, DefaultPolicy)
			if v.Judged != tt.judged || v.Busy != tt.busy || !strings.Contains(v.String(), tt.says) {
				t.Errorf("Judge = judged %v, busy %v, %q; want judged %v, busy %v, saying %q", v.Judged, v.Busy, v, tt.judged, tt.busy, tt.says)
			}
		})
	}
}

func TestJudgeSteal(t *testing.T) {
	two := CPUs{Online: 2}
	// Steal unknown: a kernel without the column.
	s := series(repeat(2, 11), 50)
	for i := range s {
		s[i].CPU.StealKnown = false
	}
	if v := Judge(s, two, DefaultPolicy); v.StealKnown || v.Busy || !strings.Contains(v.String(), "steal not reported") {
		t.Errorf("no steal column: %+v %q", v, v)
	}
	// Too little CPU time wanted to tell: an idle guest whose few busy
	// ticks were half stolen.
	s = series(repeat(2, 11), 0)
	for i := range s {
		s[i].CPU = CPUTimes{User: uint64(i) * 2, Steal: uint64(i) * 2, Idle: uint64(i) * 200, StealKnown: true}
	}
	if v := Judge(s, two, DefaultPolicy); v.StealKnown || v.Busy || !strings.Contains(v.String(), "steal not measurable") {
		t.Errorf("40 busy ticks: steal judged %+v %q", v, v)
	}
	// Counters that went backwards (a CPU taken offline): not judged.
	s = series(repeat(2, 11), 50)
	s[0].CPU.Steal = 1 << 20
	if v := Judge(s, two, DefaultPolicy); v.StealKnown || v.Busy {
		t.Errorf("steal went backwards: %+v", v)
	}
}

// TestJudgeRecorded judges samples recorded on a 2-CPU virtual machine
// (testdata: /proc/stat's cpu and procs_running lines and /proc/loadavg,
// one a second): with ten busy loops running (one per CPU plus four per
// CPU more) it is too busy; idle, or with other work on it (a run queue
// of 2 to 6, counting the sampler), it is not.
func TestJudgeRecorded(t *testing.T) {
	for _, tt := range []struct {
		file string
		busy bool
		says string
	}{
		{"loaded-10-spinners-2cpu.txt", true, "run queue 13.5 on 2 CPUs over 10."},
		{"light-2cpu.txt", false, "run queue 4 on 2 CPUs over 10."},
		{"idle-2cpu.txt", false, "run queue 1 on 2 CPUs over 10.3 s, steal not measurable (the CPUs were nearly idle)"},
	} {
		samples, cpus := readRecording(t, "testdata/"+tt.file)
		v := Judge(samples, cpus, DefaultPolicy)
		if !v.Judged || v.Busy != tt.busy || !strings.Contains(v.String(), tt.says) {
			t.Errorf("%s: judged %v, busy %v, %q; want busy %v, saying %q", tt.file, v.Judged, v.Busy, v, tt.busy, tt.says)
		}
		t.Logf("%s: %s (%s)", tt.file, v, v.Limits())
	}
}

// readRecording reads a recording: "sample UNIXTIME" lines, each followed
// by the /proc/stat lines and a "loadavg ..." line.
func readRecording(t *testing.T, file string) ([]Sample, CPUs) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []Sample
	var cpus CPUs
	var at time.Time
	var stat bytes.Buffer
	for sc := bufio.NewScanner(bytes.NewReader(data)); sc.Scan(); {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "sample "):
			f, err := strconv.ParseFloat(strings.TrimPrefix(line, "sample "), 64)
			if err != nil {
				t.Fatal(err)
			}
			sec, frac := math.Modf(f)
			at, stat = time.Unix(int64(sec), int64(frac*1e9)), bytes.Buffer{}
		case strings.HasPrefix(line, "loadavg "):
			s, err := NewSample(at, stat.Bytes(), []byte(strings.TrimPrefix(line, "loadavg ")))
			if err != nil {
				t.Fatal(err)
			}
			st, _ := ParseStat(stat.Bytes())
			cpus.Online = st.CPUs
			out = append(out, s)
		default:
			stat.WriteString(line + "\n")
		}
	}
	return out, cpus
}

func TestVerdictLimits(t *testing.T) {
	v := Judge(series(repeat(21, 11), 0), CPUs{Online: 2}, DefaultPolicy)
	if got, want := v.Limits(), "at most 4 runnable tasks beyond the lane's own 2 on 2 CPUs, and at most 10 % steal"; got != want {
		t.Errorf("Limits = %q, want %q", got, want)
	}
}

func TestCgroup(t *testing.T) {
	for _, tt := range []struct {
		data string
		cpus float64
		ok   bool
		err  bool
	}{
		{"max 100000\n", 0, false, false},
		{"200000 100000\n", 2, true, false},
		{"150000 100000", 1.5, true, false},
		{"50000", 0.5, true, false},
		{"50000 0", 0, false, true},
		{"lots 100000", 0, false, true},
		{"", 0, false, true},
	} {
		cpus, ok, err := ParseCPUMax([]byte(tt.data))
		if cpus != tt.cpus || ok != tt.ok || (err != nil) != tt.err {
			t.Errorf("ParseCPUMax(%q) = %v, %v, %v", tt.data, cpus, ok, err)
		}
	}
	if cpus, ok, err := ParseCFSQuota([]byte("-1\n"), []byte("100000\n")); ok || err != nil || cpus != 0 {
		t.Errorf("cfs -1: %v %v %v", cpus, ok, err)
	}
	if cpus, ok, err := ParseCFSQuota([]byte("250000\n"), []byte("100000\n")); !ok || err != nil || cpus != 2.5 {
		t.Errorf("cfs 250000/100000: %v %v %v", cpus, ok, err)
	}
	v2, v1 := CgroupPaths([]byte("9:name=systemd:/\n4:memory:/x\n2:cpu,cpuacct:/docker/abc\n0::/user.slice/u.scope\n"))
	if v2 != "/user.slice/u.scope" || v1 != "/docker/abc" {
		t.Errorf("CgroupPaths = %q, %q", v2, v1)
	}
	if v2, v1 := CgroupPaths([]byte("0::/\n")); v2 != "/" || v1 != "" {
		t.Errorf("CgroupPaths(v2 only) = %q, %q", v2, v1)
	}
}

// FuzzParseStat: whatever /proc/stat holds, parsing never panics, and
// what it accepts has an aggregate cpu line and a run queue that is a
// count.
func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statIdle))
	f.Add([]byte("cpu 1 2 3 4 5 6 7 8 9 10 11 12\ncpu0 1 2 3 4\nprocs_running 0\n"))
	f.Add([]byte("cpu 18446744073709551615 0 0 0\n"))
	f.Add([]byte("cpu\x00 1 2 3 4\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseStat(data)
		if err != nil {
			return
		}
		if s.ProcsRunning < 0 || s.CPUs < 0 || (!s.HasProcsRunning && s.ProcsRunning != 0) {
			t.Fatalf("ParseStat(%q) = %+v", data, s)
		}
		if !bytes.Contains(data, []byte("cpu")) {
			t.Fatalf("accepted %q without a cpu line", data)
		}
	})
}

// FuzzParseLoadavg: parsing never panics, and what it accepts holds
// finite, non-negative figures.
func FuzzParseLoadavg(f *testing.F) {
	f.Add([]byte("6.98 2.71 2.39 16/226 20063\n"))
	f.Add([]byte("1e308 1e309 0 1/1 1"))
	f.Add([]byte("0 0 0 /"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLoadavg(data)
		if err != nil {
			return
		}
		for _, x := range []float64{l.Load1, l.Load5, l.Load15} {
			if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("ParseLoadavg(%q) = %+v", data, l)
			}
		}
		if l.Runnable < 0 || l.Tasks < 0 {
			t.Fatalf("ParseLoadavg(%q) = %+v", data, l)
		}
	})
}
