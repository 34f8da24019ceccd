package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/release"
)

type fakeStage struct {
	name string
	skip string
	err  error
	ran  *[]string
}

func (s fakeStage) String() string { return s.name }

func (s fakeStage) Skip(*release.Release) (string, bool) { return s.skip, s.skip != "" }

func (s fakeStage) Run(context.Context, *release.Release) error {
	*s.ran = append(*s.ran, s.name)
	return s.err
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name    string
		stages  func(ran *[]string) []Stage
		cancel  bool
		wantRan string
		wantErr string
	}{
		{"in order, skipping what does not apply", func(ran *[]string) []Stage {
			return []Stage{fakeStage{name: "a", ran: ran}, fakeStage{name: "b", skip: "no wheels", ran: ran}, fakeStage{name: "c", ran: ran}}
		}, false, "a,c", ""},
		{"stops at the first error", func(ran *[]string) []Stage {
			return []Stage{fakeStage{name: "a", err: boom, ran: ran}, fakeStage{name: "b", ran: ran}}
		}, false, "a", "boom"},
		{"an interrupted stage says so", func(ran *[]string) []Stage {
			return []Stage{fakeStage{name: "compile", err: context.Canceled, ran: ran}}
		}, false, "compile", "compile: interrupted"},
		{"a cancelled run starts nothing", func(ran *[]string) []Stage {
			return []Stage{fakeStage{name: "a", ran: ran}}
		}, true, "", "context canceled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ran []string
			ctx, cancel := context.WithCancel(t.Context())
			if c.cancel {
				cancel()
			}
			defer cancel()
			err := Run(ctx, &release.Release{}, c.stages(&ran))
			if got := strings.Join(ran, ","); got != c.wantRan {
				t.Errorf("ran %q, want %q", got, c.wantRan)
			}
			if (err == nil) != (c.wantErr == "") || err != nil && !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("err %v, want %q", err, c.wantErr)
			}
		})
	}
}
