package assemble

import (
	"context"
	"path/filepath"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
)

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
	if writer == "" {
		res, err := wheel.Write(ctx, c, r.Stage)
		if err != nil {
			return written{}, err
		}
		return written{Path: res.Path, SHA256: res.SHA256, Size: res.Size}, nil
	}
	key, err := c.CacheKey(writer)
	if err != nil {
		return written{}, err
	}
	name := c.Name.String()
	cache := r.ActionCache()
	o, how, reason, err := cache.Keep(key, "wheel", target, r.Stage, name, func() error {
		_, err := wheel.Write(ctx, c, r.Stage)
		return err
	})
	if err != nil {
		return written{}, err
	}
	switch how {
	case actioncache.Restored:
		r.Logger.Debug("wheel from the cache", "wheel", name, "key", key[:12])
	case actioncache.Rewritten:
		r.Logger.Warn("discarded a damaged cache entry; writing the wheel again", "wheel", name, "problem", reason)
	}
	return written{Path: filepath.Join(r.Stage, name), SHA256: o.SHA256, Size: o.Size}, nil
}
