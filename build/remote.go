package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
)

// RemoteCache is a shared action cache the compile stage reads when the
// local cache misses, and writes after running an action. It only moves
// bytes: what it returns is checked by [actioncache.Cache.Import] (the
// record must list exactly the declared outputs, every blob is re-hashed)
// before it reaches the local cache, and builds restore from the local
// cache only. Package remotecache implements it over HTTP.
type RemoteCache interface {
	// GetAction returns the record stored for an action key; an error
	// wrapping actioncache.ErrMiss when there is none.
	GetAction(ctx context.Context, key string) ([]byte, error)
	// GetBlob writes the blob stored under its sha256 to w; size is the
	// size expected (the download stops one byte past it). An error
	// wrapping actioncache.ErrMiss when there is none.
	GetBlob(ctx context.Context, sha256 string, size int64, w io.Writer) error
	// HasBlob reports whether a blob is stored.
	HasBlob(ctx context.Context, sha256 string) (bool, error)
	// PutAction and PutBlob store a record and a blob.
	PutAction(ctx context.Context, key string, record []byte) error
	PutBlob(ctx context.Context, sha256 string, size int64, r io.Reader) error
	// String names the cache (its URL) in messages.
	String() string
}

// emptySHA256 is the digest of no bytes: an empty output is not fetched.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// remote is the compile stage's use of a RemoteCache: the first failure of
// the server (down, slow, an error status) is reported once and the rest
// of the run uses the local cache only.
// Actions running side by side share it.
type remote struct {
	cache  RemoteCache
	upload bool
	log    *slog.Logger
	// maxSize is the most bytes one entry's outputs may declare in all
	// ([cache] remote_max_size): a larger entry is not downloaded.
	maxSize int64

	mu  sync.Mutex
	off bool
}

// usable reports whether the remote cache is configured and has not failed.
func (rm *remote) usable() bool {
	if rm == nil || rm.cache == nil {
		return false
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return !rm.off
}

// fail turns the remote cache off for the rest of the run, with the one
// warning. An interrupted build is not the server's failure.
func (rm *remote) fail(ctx context.Context, err error) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if ctx.Err() != nil || rm.off {
		return
	}
	rm.off = true
	rm.log.Warn("the remote cache is not usable; continuing with the local cache only", "url", rm.cache.String(), "problem", err.Error())
}

// fetch looks key up in the remote cache and, when it holds an entry that
// passes every check, imports it into the local cache and restores it into
// dst. An entry whose outputs declare more than rm.maxSize bytes is
// skipped before any of them is downloaded, and every download stops at
// the size its record declares. It returns the entry (nil on a miss) and
// an error only for what fails the build (an interrupt, or restoring into
// dst); an entry that cannot be stored in the local cache (a full disk)
// is skipped with a warning, and the action runs here.
func (rm *remote) fetch(ctx context.Context, cache *actioncache.Cache, key string, t config.Target, step config.Step, dst string, rec *ActionRecord, log *slog.Logger) (*actioncache.Entry, error) {
	data, err := rm.cache.GetAction(ctx, key)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, actioncache.ErrMiss):
		return nil, nil
	case err != nil:
		rm.fail(ctx, err)
		return nil, nil
	}
	_, err = cache.Import(key, step.Name, t.Name, step.Outputs, data, rm.maxSize, func(o actioncache.Output, w io.Writer) error {
		if o.Size == 0 && o.SHA256 == emptySHA256 {
			return nil
		}
		return rm.cache.GetBlob(ctx, o.SHA256, o.Size, w)
	})
	var corrupt *actioncache.CorruptError
	var fe *actioncache.FetchError
	var large *actioncache.TooLargeError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &large):
		log.Warn("skipped an entry of the remote cache larger than [cache] remote_max_size; running the action", "url", rm.cache.String(), "key", key[:12],
			"size", large.Size, "largest", large.Path, "remote_max_size", large.Max,
			"hint", "if this step's outputs really are that large, raise remote_max_size (in bytes) in [cache] of release.toml")
		rec.RemoteRejected = true
		return nil, nil
	case errors.As(err, &corrupt):
		log.Warn("refused an entry of the remote cache; running the action", "url", rm.cache.String(), "key", key[:12], "problem", corrupt.Reason)
		rec.RemoteRejected = true
		return nil, nil
	case errors.As(err, &fe) && errors.Is(err, actioncache.ErrMiss):
		log.Warn("refused an entry of the remote cache; running the action", "url", rm.cache.String(), "key", key[:12],
			"problem", "output "+fe.Path+" is not in the remote cache")
		rec.RemoteRejected = true
		return nil, nil
	case errors.As(err, &fe):
		rm.fail(ctx, err)
		return nil, nil
	case err != nil:
		// The local cache could not take the entry (a full disk): the
		// remote cache never fails a build, and what Import wrote is
		// gone. An action that cannot write here either fails on its
		// own account.
		log.Warn("could not store the remote cache's entry in the local cache; running the action", "url", rm.cache.String(), "key", key[:12], "problem", err.Error())
		return nil, nil
	}
	e, err := cache.Restore(key, step.Name, t.Name, step.Outputs, dst)
	switch {
	case errors.As(err, &corrupt):
		log.Warn("discarded a damaged cache entry; running the action again", "key", key[:12], "problem", corrupt.Reason)
		rec.Rebuilt = true
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("step %s [%s]: %w", step.Name, t.Name, err)
	}
	return e, nil
}

// put uploads a verified entry of the local cache: its blobs first (those
// the server lacks, or all of them when force is set because the server's
// copy was refused), then its record, so that a record never names a
// blob the server does not hold. A failure turns the remote cache off;
// it never fails the build.
func (rm *remote) put(ctx context.Context, cache *actioncache.Cache, e *actioncache.Entry, force bool, log *slog.Logger) {
	err := func() error {
		for _, o := range e.Outputs {
			if !force {
				has, err := rm.cache.HasBlob(ctx, o.SHA256)
				if err != nil {
					return err
				}
				if has {
					continue
				}
			}
			f, err := cache.Open(e.Key, o)
			if err != nil {
				return fmt.Errorf("reading the local cache entry %s: %w", e.Key, err)
			}
			err = rm.cache.PutBlob(ctx, o.SHA256, o.Size, f)
			f.Close()
			if err != nil {
				return err
			}
		}
		record, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return err
		}
		return rm.cache.PutAction(ctx, e.Key, append(record, '\n'))
	}()
	if err != nil {
		rm.fail(ctx, err)
		return
	}
	log.Info("action uploaded to the remote cache", "key", e.Key[:12])
}
