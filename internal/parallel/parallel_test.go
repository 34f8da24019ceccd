package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestEach(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		workers int
		n       int
		failAt  int // -1: none
		want    error
	}{
		{"all run, one worker", 1, 10, -1, nil},
		{"all run, more workers than work", 8, 3, -1, nil},
		{"default workers", 0, 5, -1, nil},
		{"no work", 2, 0, -1, nil},
		{"first failure returned", 2, 50, 3, boom},
		{"failure of the last", 1, 4, 3, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			done := make([]atomic.Bool, tc.n)
			err := Each(context.Background(), tc.workers, tc.n, func(ctx context.Context, i int) error {
				calls.Add(1)
				if i == tc.failAt {
					return boom
				}
				if tc.failAt >= 0 && i > tc.failAt {
					<-ctx.Done() // a call after the failure sees it cancelled
					return ctx.Err()
				}
				done[i].Store(true)
				return nil
			})
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Each = %v, want %v", err, tc.want)
			}
			if tc.failAt < 0 {
				for i := range done {
					if !done[i].Load() {
						t.Errorf("index %d was not run", i)
					}
				}
			} else if c := calls.Load(); c == int64(tc.n) && tc.n > tc.failAt+1+tc.workers {
				t.Errorf("every one of %d indexes ran after a failure at %d", c, tc.failAt)
			}
		})
	}
}

func TestEachStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int64
	err := Each(ctx, 2, 100, func(ctx context.Context, i int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Each on a cancelled context = %v, want context.Canceled", err)
	}
	if calls.Load() == 100 {
		t.Errorf("every index ran on a cancelled context")
	}
}
