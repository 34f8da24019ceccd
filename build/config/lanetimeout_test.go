package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// crossoverLane is a crossover lane for validTOML, with extra lines.
func crossoverLane(extra string) string {
	return "\n[[evidence.lane]]\nname = \"speed\"\nkind = \"crossover\"\ncandidate = [\"w\"]\nreference = [\"w\"]\n" + extra +
		"\n[[evidence.lane.workload]]\nname = \"add\"\nphase = \"p\"\n"
}

// TestLaneTimeout: a crossover lane is bounded by lane_timeout, 30m
// unless it says otherwise.
func TestLaneTimeout(t *testing.T) {
	for _, tt := range []struct {
		extra string
		want  time.Duration
	}{
		{"", DefaultLaneTimeout},
		{"lane_timeout = \"45m\"\n", 45 * time.Minute},
		{"lane_timeout = \"1h30m\"\n", 90 * time.Minute},
	} {
		c, err := Parse("release.toml", "/p", []byte(validTOML+crossoverLane(tt.extra)))
		if err != nil {
			t.Fatalf("%q: %v", tt.extra, err)
		}
		if got := c.Evidence.Lanes[0].LaneTimeout.Duration; got != tt.want {
			t.Errorf("%q: lane_timeout %s, want %s", tt.extra, got, tt.want)
		}
	}
	if DefaultLaneTimeout != 30*time.Minute {
		t.Errorf("DefaultLaneTimeout = %s: docs/evidence.md says 30m", DefaultLaneTimeout)
	}
}

// TestLaneTimeoutRefused: a bad lane_timeout is refused at its line and
// column, saying what to write.
func TestLaneTimeoutRefused(t *testing.T) {
	for _, tt := range []struct {
		name, src, line, col, says string
	}{
		{"not a duration", validTOML + crossoverLane("lane_timeout = \"soon\"\n"), "lane_timeout", "16", `invalid duration "soon": write it like "90s" or "10m"`},
		{"zero", validTOML + crossoverLane("lane_timeout = \"0s\"\n"), "lane_timeout", "16", "must be positive"},
		{"negative", validTOML + crossoverLane("lane_timeout = \"-5m\"\n"), "lane_timeout", "16", "must be positive"},
		{"on a cases lane", validTOML + "\n[[evidence.lane]]\nname = \"sem\"\nkind = \"cases\"\nrun = [\"true\"]\nlane_timeout = \"1h\"\n",
			"lane_timeout", "16", `cases lane "sem" has lane_timeout, which bounds a crossover lane` + "\n\thint: a cases lane's timeout bounds the whole lane"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("release.toml", "/p", []byte(tt.src))
			var list ErrorList
			if !errors.As(err, &list) || list.ExitCode() != 2 {
				t.Fatalf("Parse = %v, want a configuration error", err)
			}
			line := 1 + strings.Count(tt.src[:strings.Index(tt.src, tt.line+" =")], "\n")
			if pos := fmt.Sprintf("release.toml:%d:%s:", line, tt.col); !strings.HasPrefix(err.Error(), pos) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Parse error:\n%s\nwant it at %s saying %q", err, pos, tt.says)
			}
		})
	}
}
