// Package bundle holds the stages that turn a target's wheels into what an
// offline installer and an auditor need: the dependency closure (package
// deps), the SBOM of the release (package sbom), and one offline bundle per
// target, a deterministic .tar.gz (package tarball) with a single root
// folder. A bundle depends on its own target alone: its manifest and SBOM
// describe that target, so building one target gives the same bundle as
// building them all.
//
//	NAME-VERSION-TARGET/
//	  INSTALL.md  install.sh  RELEASE_NOTES.md  manifest.json
//	  wheels/        the release's wheels
//	  dependencies/  the closure
//	  requirements.txt  pylock.toml   every wheel of the bundle, pinned by hash
//	  licenses/      one file per component + THIRD_PARTY_LICENSES.txt
//	  NAME-VERSION-TARGET.spdx.json   the SBOM of this target (SPDX 2.3)
//	  NAME-VERSION-TARGET.cdx.json    the same SBOM as CycloneDX 1.6
//	  SHA256SUMS     every other file
//
// Signed statements live beside the bundle, never inside it, so the bundle
// stays reproducible.
package bundle

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/release"
)

// ConfigError is a release.toml setting the bundle stages need. It maps to
// exit status 2.
type ConfigError struct{ Key, Msg string }

// Error names the key and what to set.
func (e *ConfigError) Error() string { return "release.toml: " + e.Key + ": " + e.Msg }

// ExitCode is 2.
func (e *ConfigError) ExitCode() int { return 2 }

func skipWithoutWheels(r *release.Release) (string, bool) {
	if len(r.Artifacts.Filter(dist.ByKind(dist.KindWheel))) == 0 {
		return "no wheels were built", true
	}
	return "", false
}

// Closures maps each target to its dependency closure. The closure stage
// fills it; the SBOM and bundle stages, manifest.json
// ([Closures.Dependencies]) and a part's description of its targets read
// it. The pipeline shares one value between them.
type Closures map[string]*deps.Closure

// Dependencies lists the wheels of target's closure as manifest.json
// records them: by file name, with name==version, size, digest and the
// http(s) URL it can be downloaded from (none when target has no closure).
func (cs Closures) Dependencies(target string) []dist.ManifestArtifact {
	cl := cs[target]
	if cl == nil {
		return nil
	}
	var out []dist.ManifestArtifact
	for _, p := range cl.Packages {
		for _, f := range p.Files {
			out = append(out, dist.ManifestArtifact{Path: f.Name, Name: p.Name + "==" + p.Version, Size: f.Size, SHA256: f.SHA256, URL: downloadURL(f)})
		}
	}
	return out
}

// downloadURL is f's URL when it is an http(s) one, else "".
func downloadURL(f deps.File) string {
	if strings.HasPrefix(f.URL, "https://") || strings.HasPrefix(f.URL, "http://") {
		return f.URL
	}
	return ""
}

// ClosureStage resolves, per target, the dependency closure of the
// release's wheels from the lock of [dependencies], and fetches it.
type ClosureStage struct {
	// Closures is filled with every target's closure.
	Closures Closures
}

// String names the stage.
func (ClosureStage) String() string { return "closure" }

// Skip skips the stage when there are no wheels.
func (ClosureStage) Skip(r *release.Release) (string, bool) { return skipWithoutWheels(r) }

// Run resolves and fetches every target's closure.
func (s ClosureStage) Run(ctx context.Context, r *release.Release) error {
	res, err := s.resolver(r)
	if err != nil {
		return err
	}
	for _, t := range r.Targets {
		if err := res.resolve(ctx, r, t); err != nil {
			return err
		}
	}
	return nil
}

// resolver resolves the targets' closures from one lock and finder.
type resolver struct {
	closures Closures
	lock     *deps.Lock
	finder   *deps.Finder
}

// resolver reads the dependency lock and sets up the finder, once for
// every target.
func (s ClosureStage) resolver(r *release.Release) (*resolver, error) {
	if s.Closures == nil {
		return nil, errors.New("closure: no closures to fill (the pipeline shares them with the stages that read them)")
	}
	c := r.Config
	if len(c.Bundle.Pythons) == 0 {
		return nil, &ConfigError{Key: "bundle.pythons", Msg: `set the CPython versions the bundles support, e.g. pythons = ["3.11", "3.12", "3.13"]`}
	}
	lock, err := DependencyLock(c)
	if err != nil {
		return nil, err
	}
	for _, n := range lock.Notes {
		r.Logger.Warn("dependency lock: ignored", "where", n.Where, "why", n.Msg)
	}
	finder := &deps.Finder{Index: c.Dependencies.Index, CacheDir: filepath.Join(r.CacheDir, "wheels")}
	for i, fl := range c.Dependencies.FindLinks {
		if !strings.Contains(fl, "://") {
			dir, err := projectfile.Folder(c.Dir, fl)
			if err != nil {
				return nil, &ConfigError{Key: fmt.Sprintf("dependencies.find_links[%d]", i), Msg: err.Error()}
			}
			fl = dir
		}
		finder.FindLinks = append(finder.FindLinks, fl)
	}
	return &resolver{closures: s.Closures, lock: lock, finder: finder}, nil
}

// DependencyLock reads and parses the release's dependency lock
// ([dependencies] lock), beneath the project folder (a symbolic link
// leading out of it is refused, see package projectfile): a .toml file is
// a PEP 751 pylock.toml, anything else a pip requirements file in
// hash-checking mode. No lock is an empty one.
func DependencyLock(c *config.Config) (*deps.Lock, error) {
	f := c.Dependencies.Lock
	if f == "" {
		return &deps.Lock{}, nil
	}
	data, err := projectfile.ReadFile(c.Dir, f, projectfile.MaxText)
	if err != nil {
		return nil, err
	}
	// The lock's own relative paths resolve against its folder.
	path := filepath.Join(c.Dir, filepath.FromSlash(f))
	if strings.HasSuffix(f, ".toml") {
		return deps.ParsePylock(path, data)
	}
	return deps.ParseRequirements(path, data)
}

// resolve resolves and fetches the closure of target t's wheels, which
// are in r.Artifacts; a target without wheels has none.
func (res *resolver) resolve(ctx context.Context, r *release.Release, t config.Target) error {
	var roots []deps.Root
	tag := ""
	for _, a := range r.Artifacts.Filter(dist.WheelsOf(t.Name)) {
		root, err := deps.LoadOwn(filepath.Join(r.Stage, a.Path), a.SHA256, a.Size)
		if err != nil {
			return err
		}
		roots = append(roots, root)
		if a.Target != "" || tag == "" {
			tag = a.PlatformTag // a native wheel's: a shared one is "any"
		}
	}
	if len(roots) == 0 {
		return nil
	}
	if t.InstallPlatform != "" {
		tag = t.InstallPlatform
	}
	if tag == "any" {
		return &ConfigError{Key: "target " + t.Name,
			Msg: `its wheels are pure Python ("any"): set install_platform = "<platform tag>" (e.g. "manylinux_2_17_x86_64") for the platform its bundle installs on`}
	}
	cl, err := deps.Resolve(ctx, roots, res.lock, res.finder, deps.Target{Name: t.Name, Platform: tag, Pythons: r.Config.Bundle.Pythons})
	if err != nil {
		return fmt.Errorf("dependency closure of target %s: %w", t.Name, err)
	}
	for _, f := range cl.Findings {
		r.Logger.Warn("dependency closure", "target", t.Name, "finding", f.String())
	}
	res.closures[t.Name] = cl
	r.Logger.Info("closure resolved", "target", t.Name, "dependencies", len(cl.Packages))
	return nil
}

// notes reads the release notes of this version from the changelog.
func notes(c *config.Config) (string, error) {
	if c.Bundle.Changelog == "" {
		return "", &ConfigError{Key: "bundle.changelog", Msg: `name the changelog whose section for this version becomes RELEASE_NOTES.md, e.g. changelog = "CHANGELOG.md"`}
	}
	data, err := projectfile.ReadFile(c.Dir, c.Bundle.Changelog, projectfile.MaxText)
	if err != nil {
		return "", &ConfigError{Key: "bundle.changelog", Msg: err.Error()}
	}
	return ReleaseNotes(c.Bundle.Changelog, data, c.Project.Version)
}
