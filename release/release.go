// Package release holds the state a release pipeline works on (package
// pipeline runs the stages): the loaded configuration and lock, the epoch,
// the selected targets, the folders and the registry of artifacts written
// so far, and the stages every pipeline
// ends with (manifest, artifact list, output swap). Stages write only into
// the staging folder; the last stage of a pipeline that produces output
// swaps the staging folder into place, so a failed or killed run leaves
// the previous output untouched.
package release

import (
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// Release is the state of one pipeline run.
type Release struct {
	Config *config.Config
	// Lock is the release.lock the run verifies against.
	Lock *lock.Lock
	// LockFile is the path of release.lock as the user would type it.
	LockFile string
	// Targets are the targets this run builds, in release.toml order.
	Targets []config.Target
	// Epoch is SOURCE_DATE_EPOCH, seconds since 1970.
	Epoch int64

	// Out is the final output folder; Stage is the staging folder beside it
	// that stages write into.
	Out   string
	Stage string
	// CacheDir holds the action cache and fetched sources.
	CacheDir string
	// Scratch is a private temporary folder removed after the run.
	Scratch string
	// NoCache forces every action to run.
	NoCache bool

	Logger    *slog.Logger
	Artifacts dist.List
	// Manifest is manifest.json as the manifest stage wrote it: every
	// input and output of the release. The provenance is made from it.
	Manifest *dist.Manifest

	// Found is what the sources stage found, in the shape of release.lock:
	// manifest.json, the SBOM and the action keys record it. It is not
	// Lock, which is verified against it but may differ where the sources
	// stage compares nothing: a source's commit time, an archive's size
	// (an older lock has none), the order of the sources, and toolchains
	// release.toml no longer declares.
	Found *lock.Lock
	// Trees holds the sha256 of every file of each prepared source (its
	// workspace, overlays applied) by source name and slash-separated path,
	// as the sources stage hashed them.
	Trees map[string]map[string]string

	// writer remembers WriterIdentity for the run: the wheels and the
	// bundles stages both ask.
	writer struct {
		once sync.Once
		sha  string
	}
}

// DigestsDir is the folder of the cache rooted at cacheDir where the
// digests of large executables (toolchains, mkrelease itself) are
// remembered by their identity on disk (package digestmemo).
func DigestsDir(cacheDir string) string { return filepath.Join(cacheDir, "digests") }

// ActionCache is the action cache under CacheDir, which remembers in
// DigestsDir the stored files it found intact, so that restoring an
// unchanged entry does not read it again.
func (r *Release) ActionCache() *actioncache.Cache {
	c := &actioncache.Cache{Dir: r.CacheDir}
	if r.CacheDir != "" {
		c.Digests = digestmemo.Memo{Dir: DigestsDir(r.CacheDir)}
	}
	return c
}

// WriterIdentity is the sha256 of the running mkrelease executable: the
// code that writes wheels and bundles, with its compression libraries. It
// is part of the keys under which written wheels and bundles are kept in
// the action cache, so a changed mkrelease writes them again. It is
// remembered in DigestsDir by the file's identity on disk, and computed
// once per run; "" when the executable cannot be read, and then nothing
// written is cached.
func (r *Release) WriterIdentity() string {
	r.writer.once.Do(func() { r.writer.sha = r.writerIdentity() })
	return r.writer.sha
}

func (r *Release) writerIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	sha, _, err := digestmemo.Memo{Dir: DigestsDir(r.CacheDir)}.SHA256(exe)
	if err != nil {
		if r.Logger != nil {
			r.Logger.Debug("wheels and bundles are not cached: the mkrelease executable cannot be read", "problem", err.Error())
		}
		return ""
	}
	return sha
}
