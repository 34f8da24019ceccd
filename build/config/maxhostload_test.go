package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestMaxHostLoad: a crossover lane's max_host_load is what it writes (an
// integer or a fraction; 0 turns the host's watch off), or the default 2
// when it writes none.
func TestMaxHostLoad(t *testing.T) {
	for _, tt := range []struct {
		extra string
		want  float64
		set   bool // MaxHostLoad is not nil
	}{
		{"", DefaultMaxHostLoad, false},
		{"max_host_load = 3\n", 3, true},
		{"max_host_load = 2.5\n", 2.5, true},
		{"max_host_load = 0\n", 0, true},
		{"max_host_load = 0.0 # synthetic timings\n", 0, true},
	} {
		c, err := Parse("release.toml", "/p", []byte(validTOML+crossoverLane(tt.extra)))
		if err != nil {
			t.Fatalf("%q: %v", tt.extra, err)
		}
		l := c.Evidence.Lanes[0]
		if got := l.HostLoadLimit(); got != tt.want || (l.MaxHostLoad != nil) != tt.set {
			t.Errorf("%q: HostLoadLimit() = %v (set: %v), want %v (set: %v)", tt.extra, got, l.MaxHostLoad != nil, tt.want, tt.set)
		}
	}
	if DefaultMaxHostLoad != 2 {
		t.Errorf("DefaultMaxHostLoad = %v: docs/configuration.md and docs/evidence.md say 2", DefaultMaxHostLoad)
	}
}

// TestMaxHostLoadRefused: a max_host_load that is negative, not a number,
// infinite or a string is refused at its line and column, saying what to
// write; so is max_host_load on a cases lane, which is not timed.
func TestMaxHostLoadRefused(t *testing.T) {
	const hint = "hint: the most runnable tasks per CPU beyond the lane's own before the lane stops, e.g. max_host_load = 3; 0 turns the watch off; leave it out for the default, 2"
	for _, tt := range []struct {
		name, src, says string
	}{
		{"negative", validTOML + crossoverLane("max_host_load = -1\n"), "invalid max_host_load -1\n\t" + hint},
		{"negative fraction", validTOML + crossoverLane("max_host_load = -0.5\n"), "invalid max_host_load -0.5\n\t" + hint},
		{"NaN", validTOML + crossoverLane("max_host_load = nan\n"), "invalid max_host_load NaN\n\t" + hint},
		{"infinite", validTOML + crossoverLane("max_host_load = inf\n"), "invalid max_host_load +Inf\n\t" + hint},
		{"a string", validTOML + crossoverLane("max_host_load = \"2\"\n"), "wrong type: found a TOML string\n\thint: this key takes a number"},
		{"off as a word", validTOML + crossoverLane("max_host_load = \"off\"\n"), "wrong type: found a TOML string\n\thint: this key takes a number"},
		{"on a cases lane", validTOML + "\n[[evidence.lane]]\nname = \"sem\"\nkind = \"cases\"\nrun = [\"true\"]\nmax_host_load = 0\n",
			`cases lane "sem" has max_host_load, which bounds the host's load while a crossover lane runs` + "\n\thint: a cases lane is not timed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("release.toml", "/p", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) || list.ExitCode() != 2 || len(list) != 1 {
				t.Fatalf("Parse = %v, want one configuration error", err)
			}
			line := 1 + strings.Count(tt.src[:strings.Index(tt.src, "max_host_load =")], "\n")
			if pos := fmt.Sprintf("release.toml:%d:", line); !strings.HasPrefix(err.Error(), pos) || !strings.Contains(err.Error(), "max_host_load: "+tt.says) {
				t.Errorf("Parse error:\n%s\nwant it at %s saying %q", err, pos, tt.says)
			}
		})
	}
}

// TestWarmups: warmups and steps written in release.toml are kept, 0
// warm-ups too (the slowest step is still dropped, and stats.Worker takes
// 0); only keys left out take their defaults (16 steps, 3 warm-ups).
// Before, warmups = 0 silently became 3.
func TestWarmups(t *testing.T) {
	for _, tt := range []struct {
		extra          string
		steps, warmups int
	}{
		{"", 16, 3},
		{"warmups = 0\n", 16, 0},
		{"warmups = 2\n", 16, 2},
		{"steps = 3\nwarmups = 0\n", 3, 0},
		{"steps = 6\n", 6, 3},
	} {
		c, err := Parse("release.toml", "/p", []byte(validTOML+crossoverLane(tt.extra)))
		if err != nil {
			t.Fatalf("%q: %v", tt.extra, err)
		}
		if l := c.Evidence.Lanes[0]; l.Steps != tt.steps || l.Warmups != tt.warmups {
			t.Errorf("%q: %d steps, %d warm-ups; want %d, %d", tt.extra, l.Steps, l.Warmups, tt.steps, tt.warmups)
		}
	}
	// Written in an inline table, warmups = 0 is as written too.
	inline := validTOML + "\n[evidence]\nlane = [{name = \"speed\", kind = \"crossover\", candidate = [\"w\"], reference = [\"w\"], warmups = 0, " +
		"workload = [{name = \"add\", phase = \"p\"}]}]\n"
	c, err := Parse("release.toml", "/p", []byte(inline))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Evidence.Lanes[0]; l.Warmups != 0 || l.Steps != 16 {
		t.Errorf("inline table: %d steps, %d warm-ups; want 16, 0", l.Steps, l.Warmups)
	}
}

// TestWarmupsRefused: negative warm-ups, steps = 0, and steps that leave
// fewer than 3 timed steps are refused at the key to fix.
func TestWarmupsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, extra, key, says string
	}{
		{"negative warm-ups", "warmups = -1\n", "warmups", "warmups -1 is negative"},
		{"zero steps", "steps = 0\n", "steps", "steps 0 with 3 warm-ups"},
		{"zero steps and warm-ups", "steps = 0\nwarmups = 0\n", "steps", "steps 0 with 0 warm-ups"},
		{"too few steps", "steps = 2\nwarmups = 0\n", "steps", "steps 2 with 0 warm-ups"},
		{"too few after the default warm-ups", "steps = 5\n", "steps", "steps 5 with 3 warm-ups"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := validTOML + crossoverLane(tt.extra)
			_, err := Parse("release.toml", "/p", []byte(src))
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("Parse = %v, want one configuration error", err)
			}
			line := 1 + strings.Count(src[:strings.Index(src, tt.key+" =")], "\n")
			if pos := fmt.Sprintf("release.toml:%d:", line); !strings.HasPrefix(err.Error(), pos) || !strings.Contains(err.Error(), tt.key+": "+tt.says) {
				t.Errorf("Parse error:\n%s\nwant it at %s saying %q", err, pos, tt.says)
			}
		})
	}
}
