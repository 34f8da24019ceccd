package assemble

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
)

// wheelStep is the step name wheels are kept under in the action cache.
const wheelStep = "wheel"

// written is a wheel in the staging folder.
type written struct {
	Path   string
	SHA256 string
	Size   int64
}

// write writes the wheel c of target into the staging folder. Written
// wheels are kept in the action cache under their key (Contents.CacheKey:
// writer, the identity of the writing code; the file name, the epoch,
// every member's path, mode and digest), so a rebuild with nothing changed
// copies each wheel, checked against its recorded digest, instead of
// compressing it again. Nothing is cached when writer is "" (--no-cache,
// or the writer could not be identified).
func write(ctx context.Context, r *release.Release, target string, c *wheel.Contents, writer string) (written, error) {
	name := c.Name.String()
	key := ""
	if writer != "" {
		k, err := c.CacheKey(writer)
		if err != nil {
			return written{}, err
		}
		key = k
	}
	cache := &actioncache.Cache{Dir: r.CacheDir}
	if key != "" {
		e, err := cache.Restore(key, wheelStep, target, []string{name}, r.Stage)
		var corrupt *actioncache.CorruptError
		switch {
		case err == nil:
			r.Logger.Debug("wheel from the cache", "wheel", name, "key", key[:12])
			o := e.Outputs[0]
			return written{Path: filepath.Join(r.Stage, name), SHA256: o.SHA256, Size: o.Size}, nil
		case errors.As(err, &corrupt):
			r.Logger.Warn("discarded a damaged cache entry; writing the wheel again", "wheel", name, "problem", corrupt.Reason)
		case !errors.Is(err, actioncache.ErrMiss):
			return written{}, err
		}
	}
	res, err := wheel.Write(ctx, c, r.Stage)
	if err != nil {
		return written{}, err
	}
	if key != "" {
		if _, err := cache.Put(key, wheelStep, target, r.Stage, []string{name}, nil); err != nil {
			// The wheel is written; only the next build loses the shortcut.
			r.Logger.Warn("could not keep the wheel in the cache", "wheel", name, "problem", err.Error())
		}
	}
	return written{Path: res.Path, SHA256: res.SHA256, Size: res.Size}, nil
}

// writerIdentity is the sha256 of the running mkrelease executable (the
// wheel writer's code and its compression library), remembered by the
// file's identity on disk; "" when it cannot be read, and then no wheel is
// cached.
func writerIdentity(r *release.Release) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	sha, _, err := digestmemo.Memo{Dir: build.DigestsDir(r.CacheDir)}.SHA256(exe)
	if err != nil {
		r.Logger.Debug("wheels are not cached: the mkrelease executable cannot be read", "problem", err.Error())
		return ""
	}
	return sha
}
