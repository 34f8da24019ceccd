// Package progress shows how far long work has come: build actions, wheel
// compression, dependency fetches, evidence workers.
//
// On a terminal a [Meter] keeps one status line at the bottom of stderr
// and redraws it in place (at most ten times a second): each running task
// as "NAME n of N" or "NAME 12.0 of 40.0 MiB, 85.3 MB/s", with an estimate
// of the time left once there is something to estimate from. Log lines
// written through [Meter.Writer] clear the status line, appear above it,
// and it is drawn again. Anywhere else (a pipe, a file, CI=true, NO_COLOR,
// TERM=dumb) the meter draws nothing in place: it prints a plain line when
// a task moves on, at most one every five seconds per task, and one when
// it ends if it took a second or more, so that CI logs show the progress
// of long work without escape codes.
//
// A nil *Meter and a nil *Task do nothing, so code that reports progress
// needs no check: it asks [FromContext] for the meter, which is nil when
// the caller set none.
package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/internal/inert"
)

// Unit is what a task counts.
type Unit int

const (
	// Items are counted as "n of N" (actions, workers, wheels).
	Items Unit = iota
	// Bytes are shown in MiB with the rate in MB/s.
	Bytes
)

// redrawEvery bounds how often the status line is drawn on a terminal.
const redrawEvery = 100 * time.Millisecond

// plainEvery bounds how often a task prints a plain line while it runs.
const plainEvery = 5 * time.Second

// plainMin is how long a task must have run for a plain meter to print its
// last line: short work is not worth a line.
const plainMin = time.Second

// Meter shows the progress of the tasks started on it. Its methods may be
// called from several goroutines.
type Meter struct {
	mu sync.Mutex
	w  io.Writer
	// live: a terminal, one status line redrawn in place.
	live  bool
	width func() int
	now   func() time.Time

	tasks    []*Task
	drawn    bool // a status line is on the screen
	lastDraw time.Time
}

// Options configure a Meter.
type Options struct {
	// Live draws one status line in place (a terminal); otherwise plain
	// lines are printed.
	Live bool
	// Width returns the terminal's width in columns (nil: 80).
	Width func() int
	// Now is the clock (nil: time.Now); tests set it.
	Now func() time.Time
}

// New returns a meter writing to w (stderr).
func New(w io.Writer, o Options) *Meter {
	m := &Meter{w: w, live: o.Live, width: o.Width, now: o.Now}
	if m.width == nil {
		m.width = func() int { return 80 }
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// Live says whether progress should be drawn in place: stderr is a
// terminal, and neither CI=true, NO_COLOR (any value) nor TERM=dumb is
// set. lookup reads the environment.
func Live(isTerminal bool, lookup func(string) (string, bool)) bool {
	if !isTerminal {
		return false
	}
	if v, _ := lookup("CI"); strings.EqualFold(v, "true") || v == "1" {
		return false
	}
	if _, ok := lookup("NO_COLOR"); ok {
		return false
	}
	if v, _ := lookup("TERM"); v == "dumb" {
		return false
	}
	return true
}

type ctxKey struct{}

// NewContext returns ctx carrying m.
func NewContext(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, ctxKey{}, m)
}

// FromContext returns the meter ctx carries, or nil (which does nothing).
func FromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(ctxKey{}).(*Meter)
	return m
}

// Task is one piece of long work on a meter.
type Task struct {
	m         *Meter
	name      string
	total     int64 // 0: unknown
	unit      Unit
	done      int64
	start     time.Time
	lastPlain time.Time
	ended     bool
}

// Start begins a task named name (shown as is: "wheels", "evidence
// throughput") of total units (0 when unknown).
func (m *Meter) Start(name string, total int64, unit Unit) *Task {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	// A name may come from a wheel or evidence (a case's id): it is shown
	// inert, whatever bytes it holds.
	t := &Task{m: m, name: inert.Escape(name), total: total, unit: unit, start: now, lastPlain: now}
	m.tasks = append(m.tasks, t)
	m.redraw(true)
	return t
}

// Add records n more units done.
func (t *Task) Add(n int64) {
	if t == nil {
		return
	}
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.ended {
		return
	}
	t.done += n
	if m.live {
		m.redraw(false)
		return
	}
	if now := m.now(); now.Sub(t.lastPlain) >= plainEvery {
		t.lastPlain = now
		m.plain(t, now)
	}
}

// Done ends the task; a plain meter prints its last line (what was done,
// in how long), a live one removes it from the status line.
func (t *Task) Done() { t.end(true) }

// DoneQuiet ends the task as Done does, but a plain meter prints no last
// line: for a caller that logs the task's result itself (with more in it
// than a count), so that the end of the work is printed once.
func (t *Task) DoneQuiet() { t.end(false) }

func (t *Task) end(summary bool) {
	if t == nil {
		return
	}
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.ended {
		return
	}
	t.ended = true
	for i, x := range m.tasks {
		if x == t {
			m.tasks = append(m.tasks[:i], m.tasks[i+1:]...)
			break
		}
	}
	if m.live {
		m.redraw(true)
		return
	}
	if now := m.now(); summary && now.Sub(t.start) >= plainMin {
		m.plain(t, now)
	}
}

// Writer returns a writer for log lines: on a terminal each write clears
// the status line first and draws it again after. Each write should be
// whole lines; they are written inert (package inert: a control
// character shows as \x1b), so that nothing logged acts on the terminal.
func (m *Meter) Writer() io.Writer { return logWriter{m} }

type logWriter struct{ m *Meter }

func (l logWriter) Write(p []byte) (int, error) {
	m := l.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live && m.drawn {
		io.WriteString(m.w, "\r\x1b[K")
		m.drawn = false
	}
	_, err := io.WriteString(m.w, inert.Escape(string(p)))
	if m.live {
		m.redraw(true)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// redraw draws the status line (m.mu held), unless it was drawn less than
// redrawEvery ago and force is false.
func (m *Meter) redraw(force bool) {
	if !m.live {
		return
	}
	now := m.now()
	if !force && now.Sub(m.lastDraw) < redrawEvery {
		return
	}
	m.lastDraw = now
	line := fit(m.tasks, now, m.width()-1)
	switch {
	case line != "":
		io.WriteString(m.w, "\r\x1b[K"+line)
		m.drawn = true
	case m.drawn:
		io.WriteString(m.w, "\r\x1b[K")
		m.drawn = false
	}
}

// fit renders the tasks' status in at most width columns: when they do not
// fit, the names are shortened (their ends kept), never the figures, and
// the line is cut only when the figures alone are too wide.
func fit(tasks []*Task, now time.Time, width int) string {
	const sep = " · "
	names := make([][]rune, len(tasks))
	details := make([]string, len(tasks))
	total := len([]rune(sep)) * max(len(tasks)-1, 0)
	for i, t := range tasks {
		names[i], details[i] = []rune(t.name), t.detail(now)
		total += len(names[i]) + 1 + len([]rune(details[i]))
	}
	// Shorten the longest name by one rune at a time until the line fits
	// or every name is down to a few runes.
	for width > 0 && total > width {
		longest := -1
		for i, n := range names {
			if len(n) > 8 && (longest < 0 || len(n) > len(names[longest])) {
				longest = i
			}
		}
		if longest < 0 {
			break
		}
		n := names[longest]
		names[longest] = append(append(append([]rune{}, n[:len(n)/2-1]...), '…'), n[len(n)/2+1:]...)
		total--
	}
	parts := make([]string, len(tasks))
	for i := range tasks {
		parts[i] = string(names[i]) + " " + details[i]
	}
	line := []rune(strings.Join(parts, sep))
	if width > 0 && len(line) > width {
		line = append(line[:width-1], '…')
	}
	return string(line)
}

// plain prints one line for t (m.mu held).
func (m *Meter) plain(t *Task, now time.Time) {
	s := t.status(now)
	if t.ended {
		s = t.summary(now)
	}
	fmt.Fprintf(m.w, "mkrelease: %s\n", s)
}

// status is the task as a plain line shows it while it runs.
func (t *Task) status(now time.Time) string { return t.name + " " + t.detail(now) }

// detail is the task's figures: done (of total), the rate, the time left.
func (t *Task) detail(now time.Time) string {
	elapsed := now.Sub(t.start)
	var s string
	switch t.unit {
	case Bytes:
		s = mib(t.done)
		if t.total > 0 {
			s = mibNumber(t.done) + " of " + mib(t.total)
		}
		if elapsed >= time.Second/10 && t.done > 0 {
			s += ", " + rate(t.done, elapsed)
		}
	default:
		s = fmt.Sprintf("%d", t.done)
		if t.total > 0 {
			s = fmt.Sprintf("%d of %d", t.done, t.total)
		}
	}
	if eta, ok := t.eta(elapsed); ok {
		s += ", " + eta + " left"
	}
	return s
}

// summary is the task's last plain line.
func (t *Task) summary(now time.Time) string {
	elapsed := now.Sub(t.start)
	took := roundDuration(elapsed)
	if t.unit == Bytes {
		s := fmt.Sprintf("%s: %s in %s", t.name, mib(t.done), took)
		if elapsed > 0 && t.done > 0 {
			s += " (" + rate(t.done, elapsed) + ")"
		}
		return s
	}
	if t.total > 0 {
		return fmt.Sprintf("%s: %d of %d in %s", t.name, t.done, t.total, took)
	}
	return fmt.Sprintf("%s: %d in %s", t.name, t.done, took)
}

// eta estimates the time left from the rate so far.
func (t *Task) eta(elapsed time.Duration) (string, bool) {
	if t.total <= 0 || t.done <= 0 || t.done >= t.total || elapsed < time.Second {
		return "", false
	}
	left := time.Duration(float64(elapsed) * float64(t.total-t.done) / float64(t.done))
	return minutes(left), true
}

func mib(n int64) string       { return mibNumber(n) + " MiB" }
func mibNumber(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func rate(n int64, d time.Duration) string {
	return fmt.Sprintf("%.1f MB/s", float64(n)/1e6/d.Seconds())
}

// minutes writes a duration as m:ss (or h:mm:ss).
func minutes(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
