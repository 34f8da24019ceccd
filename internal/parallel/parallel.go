// Package parallel runs independent pieces of work side by side on a
// bounded number of goroutines, stopping at the first failure.
package parallel

import (
	"context"
	"runtime"
	"sync"
)

// Each calls fn(ctx, i) for every i in [0, n), on at most workers
// goroutines at a time (0 or less: runtime.GOMAXPROCS), handing out the
// indexes in order. The first call to fail cancels the context the others
// were given and stops further calls; Each returns that first error (in
// time, not in index order: the others may fail only because of it), else
// ctx's error when ctx ended before every call was made, else nil.
func Each(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(ctx, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
