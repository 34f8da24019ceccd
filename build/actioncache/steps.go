package actioncache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Beside the entries, the cache folder holds, by target and step name, a
// Go build cache of each step's own (GOCACHE) and a folder of each step's
// own for the caches of the other tools it runs ($MKRELEASE_STEP_CACHE:
// zig's, for instance). Both outlive the run, so that a step run again
// after a change rebuilds only what the change touched; neither is ever
// seen by another step.
const (
	goBuildDir   = "go-build"
	stepCacheDir = "steps"
)

// StepDirs returns the Go build cache and the cache folder of step for
// target.
func (c *Cache) StepDirs(target, step string) (goCache, stepCache string) {
	return filepath.Join(c.Dir, goBuildDir, target, step), filepath.Join(c.Dir, stepCacheDir, target, step)
}

// UseStepDirs records that a step about to run uses the folders
// [Cache.StepDirs] returned (their modification time), so that
// [Cache.Trim] keeps them. A folder not there yet needs no record: the
// run creates it now.
func UseStepDirs(now time.Time, dirs ...string) error {
	for _, d := range dirs {
		if err := os.Chtimes(d, now, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("record the use of the step's cache folder: %w", err)
		}
	}
	return nil
}

// trimSteps removes the step folders ([Cache.StepDirs]) that no step run
// used for MaxUnused before now: those of a step renamed or removed, a
// target dropped, or a step whose action the cache itself served all that
// time. Go trims what is inside a Go build cache in use itself; zig and
// most other tools never trim theirs. A step whose folders went runs as
// on a new machine.
func (c *Cache) trimSteps(now time.Time) (folders int, bytes int64, err error) {
	var errs []error
	for _, kind := range []string{goBuildDir, stepCacheDir} {
		root := filepath.Join(c.Dir, kind)
		// TARGET/STEP; the pattern does not depend on the cache folder's
		// own name, which may hold glob characters.
		steps, _ := fs.Glob(os.DirFS(root), "*/*")
		for _, s := range steps {
			dir := filepath.Join(root, filepath.FromSlash(s))
			info, err := os.Lstat(dir)
			if err != nil || !info.IsDir() || now.Sub(info.ModTime()) <= MaxUnused {
				continue
			}
			size := treeSize(dir)
			if err := removeTree(dir); err != nil {
				errs = append(errs, err)
				continue
			}
			folders++
			bytes += size
			_ = os.Remove(filepath.Dir(dir)) // the target's folder, once it holds no other step's
		}
	}
	return folders, bytes, errors.Join(errs...)
}

// removeTree removes dir and what it holds, making its folders writable
// first when it has to: a tool may have left some that are not (Go's
// module cache is read-only).
func removeTree(dir string) error {
	if os.RemoveAll(dir) == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
