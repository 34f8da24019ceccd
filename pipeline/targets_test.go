package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// events records what overlap called, from both goroutines.
type events struct {
	mu      sync.Mutex
	log     []string
	waiting map[string]chan struct{}
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.log = append(e.log, s)
	if c, ok := e.waiting[s]; ok {
		close(c)
		delete(e.waiting, s)
	}
}

// wait returns once s has been recorded (or the context is done), so that
// a fake lane fails at a known point of the other's work.
func (e *events) wait(ctx context.Context, s string) {
	e.mu.Lock()
	if slices.Contains(e.log, s) {
		e.mu.Unlock()
		return
	}
	if e.waiting == nil {
		e.waiting = map[string]chan struct{}{}
	}
	c, ok := e.waiting[s]
	if !ok {
		c = make(chan struct{})
		e.waiting[s] = c
	}
	e.mu.Unlock()
	select {
	case <-c:
	case <-ctx.Done():
	}
}

func (e *events) of(prefix string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, s := range e.log {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// meet blocks until the other side of a rendezvous has arrived too, and
// fails when it does not within a while: the two were not run side by
// side.
func meet(ctx context.Context, mine, theirs chan struct{}, what string) error {
	close(mine)
	select {
	case <-theirs:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s: the other side never ran meanwhile", what)
	}
}

func TestOverlap(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name string
		n    int
		// write, finish and take are the lanes' work beyond recording.
		write     func(ctx context.Context, ev *events, i int) error
		finish    func(ctx context.Context, ev *events) error
		take      func(ctx context.Context, ev *events, i int) error
		cancelled bool
		wantErr   error
		written   []string
		taken     []string
		finished  bool
	}{
		{name: "every target taken in order, after its write", n: 3,
			written: []string{"w0", "w1", "w2"}, taken: []string{"t0", "t1", "t2"}, finished: true},
		{name: "no targets: only finish", n: 0, finished: true},
		{name: "a write fails: that target and later ones are neither written nor taken", n: 3,
			write: func(ctx context.Context, ev *events, i int) error {
				if i == 1 {
					ev.wait(ctx, "t0")
					return boom
				}
				return nil
			},
			wantErr: boom, written: []string{"w0", "w1"}, taken: []string{"t0"}},
		{name: "a take fails: the write under way is stopped, no later one starts", n: 3,
			write: func(ctx context.Context, _ *events, i int) error {
				if i == 1 {
					<-ctx.Done() // a long write, stopped
					return fmt.Errorf("wheel: %w", ctx.Err())
				}
				return nil
			},
			take: func(ctx context.Context, ev *events, i int) error {
				if i == 0 {
					ev.wait(ctx, "w1")
					return boom
				}
				return nil
			},
			wantErr: boom, written: []string{"w0", "w1"}, taken: []string{"t0"}},
		{name: "finish fails after every write; the takes still end", n: 2,
			finish: func(ctx context.Context, ev *events) error {
				ev.wait(ctx, "t0")
				return boom
			},
			wantErr: boom, written: []string{"w0", "w1"}, taken: []string{"t0"}, finished: true},
		{name: "a cancelled context starts nothing", n: 2, cancelled: true, wantErr: context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ev events
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if c.cancelled {
				cancel()
			}
			err := overlap(ctx, c.n,
				func(ctx context.Context, i int) error {
					ev.add(fmt.Sprintf("w%d", i))
					if c.write != nil {
						return c.write(ctx, &ev, i)
					}
					return nil
				},
				func(ctx context.Context) error {
					ev.add("finish")
					if c.finish != nil {
						return c.finish(ctx, &ev)
					}
					return nil
				},
				func(ctx context.Context, i int) error {
					if c.finish != nil && i == 1 {
						<-ctx.Done() // still taking when finish fails
						return ctx.Err()
					}
					ev.add(fmt.Sprintf("t%d", i))
					if c.take != nil {
						return c.take(ctx, &ev, i)
					}
					return nil
				})
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Errorf("err %v, want %v", err, c.wantErr)
			}
			if got := ev.of("w"); !slices.Equal(got, c.written) {
				t.Errorf("written %v, want %v", got, c.written)
			}
			if got := ev.of("t"); !slices.Equal(got, c.taken) {
				t.Errorf("taken %v, want %v", got, c.taken)
			}
			if got := len(ev.of("finish")) > 0; got != c.finished {
				t.Errorf("finish ran: %v, want %v", got, c.finished)
			}
		})
	}
}

// TestOverlapSideBySide shows the point of overlap: a target is taken
// while the next one is written, and finish runs while the last target is
// taken. Each side waits for the other to have started, so run one after
// the other they would never meet.
func TestOverlapSideBySide(t *testing.T) {
	const n = 4
	writing := make([]chan struct{}, n+1) // writing[i]: write(i) started; writing[n]: finish did
	taking := make([]chan struct{}, n)
	for i := range writing {
		writing[i] = make(chan struct{})
	}
	for i := range taking {
		taking[i] = make(chan struct{})
	}
	var order events
	err := overlap(t.Context(), n,
		func(ctx context.Context, i int) error {
			order.add(fmt.Sprintf("w%d", i))
			if i == 0 {
				close(writing[0])
				return nil
			}
			return meet(ctx, writing[i], taking[i-1], fmt.Sprintf("write(%d) and take(%d)", i, i-1))
		},
		func(ctx context.Context) error {
			return meet(ctx, writing[n], taking[n-1], fmt.Sprintf("finish and take(%d)", n-1))
		},
		func(ctx context.Context, i int) error {
			order.add(fmt.Sprintf("t%d", i))
			return meet(ctx, taking[i], writing[i+1], fmt.Sprintf("take(%d) and the next write", i))
		})
	if err != nil {
		t.Fatal(err)
	}
	if got := order.of("t"); !slices.Equal(got, []string{"t0", "t1", "t2", "t3"}) {
		t.Errorf("taken %v, want each target once, in order", got)
	}
}
