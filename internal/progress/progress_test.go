package progress

import (
	"context"
	"strings"
	"testing"
	"time"
)

// clock is a fake time source the tests move by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time       { return c.t }
func (c *clock) step(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                { return &clock{t: time.Unix(1793491200, 0)} }
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLive(t *testing.T) {
	for _, tt := range []struct {
		name string
		tty  bool
		env  func(string) (string, bool)
		want bool
	}{
		{"terminal", true, env("TERM", "xterm-256color"), true},
		{"pipe", false, env("TERM", "xterm"), false},
		{"CI=true", true, env("CI", "true"), false},
		{"CI=1", true, env("CI", "1"), false},
		{"CI=false", true, env("CI", "false"), true},
		{"NO_COLOR empty", true, env("NO_COLOR", ""), false},
		{"NO_COLOR=1", true, env("NO_COLOR", "1"), false},
		{"dumb terminal", true, env("TERM", "dumb"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Live(tt.tty, tt.env); got != tt.want {
				t.Errorf("Live = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLiveStatusLine(t *testing.T) {
	c := newClock()
	var b strings.Builder
	m := New(&b, Options{Live: true, Now: c.now, Width: func() int { return 200 }})
	task := m.Start("evidence throughput", 44, Items)
	c.step(10 * time.Second)
	task.Add(11)
	out := b.String()
	if !strings.Contains(out, "\r\x1b[Kevidence throughput 11 of 44, 0:30 left") {
		t.Errorf("status line after 11 of 44 in 10 s = %q, want 11 of 44 with 0:30 left", out)
	}
	// Redraws are throttled: an update 10 ms later draws nothing.
	b.Reset()
	c.step(10 * time.Millisecond)
	task.Add(1)
	if b.Len() != 0 {
		t.Errorf("redrew within %v: %q", redrawEvery, b.String())
	}
	// A log line clears the status line, is written whole, and the status
	// line comes back below it.
	b.Reset()
	m.Writer().Write([]byte("mkrelease: action done\n"))
	if got := b.String(); !strings.HasPrefix(got, "\r\x1b[Kmkrelease: action done\n\r\x1b[Kevidence throughput 12 of 44") {
		t.Errorf("log line through the meter = %q", got)
	}
	b.Reset()
	task.Done()
	if got := b.String(); got != "\r\x1b[K" {
		t.Errorf("Done with no other task = %q, want the status line cleared", got)
	}
	// After Done, nothing more is drawn for the task.
	b.Reset()
	task.Add(1)
	m.Writer().Write([]byte("x\n"))
	if got := b.String(); got != "x\n" {
		t.Errorf("after Done = %q, want the log line alone", got)
	}
}

func TestLiveBytesAndWidth(t *testing.T) {
	c := newClock()
	var b strings.Builder
	m := New(&b, Options{Live: true, Now: c.now, Width: func() int { return 60 }})
	task := m.Start("wheel vexl_compiler-0.3.0-py3-none-any.whl", 40<<20, Bytes)
	c.step(2 * time.Second)
	task.Add(20 << 20)
	last := b.String()[strings.LastIndex(b.String(), "\r\x1b[K")+len("\r\x1b[K"):]
	if n := len([]rune(last)); n > 59 {
		t.Errorf("status line of %d columns on a 60-column terminal: %q", n, last)
	}
	// The name is shortened, the figures are kept.
	if want := "20.0 of 40.0 MiB, 10.5 MB/s, 0:02 left"; !strings.HasSuffix(last, want) || !strings.HasPrefix(last, "wheel") || !strings.Contains(last, "…") {
		t.Errorf("status line on 60 columns = %q, want a shortened name and %q", last, want)
	}
	// Figures alone wider than the terminal: the line is cut.
	if got := fit([]*Task{task}, c.now(), 12); len([]rune(got)) != 12 || !strings.HasSuffix(got, "…") {
		t.Errorf("fit in 12 columns = %q", got)
	}
	wide := New(&b, Options{Live: true, Now: c.now, Width: func() int { return 200 }})
	b.Reset()
	wt := wide.Start("wheel w", 40<<20, Bytes)
	c.step(2 * time.Second)
	wt.Add(20 << 20)
	if got := b.String(); !strings.Contains(got, "wheel w 20.0 of 40.0 MiB, 10.5 MB/s, 0:02 left") {
		t.Errorf("bytes status = %q", got)
	}
}

func TestPlainLines(t *testing.T) {
	c := newClock()
	var b strings.Builder
	m := New(&b, Options{Now: c.now})
	task := m.Start("evidence throughput", 44, Items)
	for range 4 {
		c.step(2 * time.Second)
		task.Add(1)
	}
	c.step(1 * time.Second)
	task.Done()
	want := "mkrelease: evidence throughput 3 of 44, 1:22 left\n" +
		"mkrelease: evidence throughput: 4 of 44 in 9s\n"
	if got := b.String(); got != want {
		t.Errorf("plain output:\n%q\nwant\n%q", got, want)
	}
	if strings.Contains(b.String(), "\x1b") || strings.Contains(b.String(), "\r") {
		t.Errorf("plain output holds escape codes: %q", b.String())
	}
	// A short task prints nothing; a long byte task prints its rate.
	b.Reset()
	short := m.Start("build actions", 9, Items)
	short.Add(9)
	c.step(300 * time.Millisecond)
	short.Done()
	long := m.Start("wheel w", 0, Bytes)
	c.step(2 * time.Second)
	long.Add(100 << 20)
	long.Done()
	if got, want := b.String(), "mkrelease: wheel w: 100.0 MiB in 2s (52.4 MB/s)\n"; got != want {
		t.Errorf("plain output = %q, want %q", got, want)
	}
}

func TestNilDoesNothing(t *testing.T) {
	m := FromContext(context.Background())
	if m != nil {
		t.Fatal("a context without a meter has one")
	}
	task := m.Start("x", 1, Items)
	task.Add(1)
	task.Done()
	c := newClock()
	var b strings.Builder
	mm := New(&b, Options{Now: c.now})
	if FromContext(NewContext(context.Background(), mm)) != mm {
		t.Error("NewContext/FromContext lose the meter")
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0:00", 59 * time.Second: "0:59", 61 * time.Second: "1:01", 3725 * time.Second: "1:02:05",
	} {
		if got := minutes(d); got != want {
			t.Errorf("minutes(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestInertNamesAndLines: a task's name and a log line that hold escape
// sequences (a case id from evidence) are drawn escaped; only the meter's
// own sequences reach the terminal.
func TestInertNamesAndLines(t *testing.T) {
	c := newClock()
	var b strings.Builder
	m := New(&b, Options{Live: true, Now: c.now, Width: func() int { return 200 }})
	task := m.Start("case \x1b[2K\x1b[32mpublished", 2, Items)
	m.Writer().Write([]byte("mkrelease: case failed: x\x1b[1A\rpublished\n"))
	task.Done()
	out := strings.ReplaceAll(b.String(), "\r\x1b[K", "") // the meter's own
	if strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("raw control characters reached the terminal: %q", out)
	}
	for _, want := range []string{`case \x1b[2K\x1b[32mpublished`, `x\x1b[1A\rpublished`} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
}

// TestDoneQuiet: a task its caller logs the end of prints its progress
// while it runs but no last line; on a terminal it leaves the status
// line as Done does.
func TestDoneQuiet(t *testing.T) {
	c := newClock()
	var b strings.Builder
	m := New(&b, Options{Now: c.now})
	task := m.Start("lane semantic: cases", 0, Items)
	c.step(6 * time.Second)
	task.Add(315)
	c.step(2 * time.Second)
	task.Add(4)
	task.DoneQuiet()
	task.Add(1) // ended: not counted, not printed
	if got, want := b.String(), "mkrelease: lane semantic: cases 315\n"; got != want {
		t.Errorf("plain output = %q, want %q", got, want)
	}
	b.Reset()
	live := New(&b, Options{Live: true, Now: c.now})
	lt := live.Start("lane x", 3, Items)
	lt.DoneQuiet()
	if got := b.String(); !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("live output %q does not end by clearing the status line", got)
	}
}
