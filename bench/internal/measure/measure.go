// Package measure runs benchmark commands and reads their wall time and
// peak RSS.
package measure

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Timed runs cmd under GNU time and returns its wall time and peak RSS.
// GNU time is a small process: a child forked straight from a large Go
// process would inherit its high-water mark and report its memory.
// Before it starts, the page cache's dirty pages are written back (sync,
// untimed), so that no command pays for writing back what the one before
// it wrote: the standard audit writes 600 MiB of files just before
// mkrelease's audit runs.
func Timed(cmd *exec.Cmd) (float64, int64, error) {
	writeBack()
	f, err := os.CreateTemp("", "bench-time-")
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd.Args = append([]string{"/usr/bin/time", "-f", "%M", "-o", f.Name()}, cmd.Args...)
	cmd.Path = "/usr/bin/time"
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, stderr.String())
	}
	secs := time.Since(start).Seconds()
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return 0, 0, err
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("GNU time printed %q", b)
	}
	return secs, kb * 1024, nil
}

// Median returns the median of xs.
func Median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// Timing is the runs of one measurement: every wall time, their median
// and the highest peak RSS.
type Timing struct {
	Seconds []float64 `json:"seconds"`
	Median  float64   `json:"median_seconds"`
	PeakRSS int64     `json:"peak_rss_bytes"`
}

// Add records one run.
func (t *Timing) Add(secs float64, rss int64) {
	t.Seconds = append(t.Seconds, secs)
	t.Median = Median(t.Seconds)
	t.PeakRSS = max(t.PeakRSS, rss)
}
