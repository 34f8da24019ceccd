package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/mkrelease/mkrelease/build/actioncache"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/tarball"
	"github.com/mkrelease/mkrelease/release"
)

// Stage writes RELEASE_NOTES.md and one offline bundle per target.
type Stage struct {
	// Sandbox is how the build steps were isolated, for each bundle's
	// manifest.json ([release.TargetManifest]).
	Sandbox executor.Sandbox
	// Closures are the targets' closures (the closure stage fills them).
	Closures Closures
}

// String names the stage.
func (Stage) String() string { return "bundles" }

// Skip skips the stage when there are no wheels.
func (Stage) Skip(r *release.Release) (string, bool) { return skipWithoutWheels(r) }

// Run writes the release notes and the bundles.
func (s Stage) Run(ctx context.Context, r *release.Release) error {
	writer, err := s.writeNotes(r)
	if err != nil {
		return err
	}
	for _, t := range r.Targets {
		if s.Closures[t.Name] == nil {
			continue
		}
		if err := s.writeBundle(ctx, r, t.Name, writer); err != nil {
			return err
		}
	}
	return nil
}

// writeNotes writes RELEASE_NOTES.md, which every bundle holds, and
// returns the identity the bundles are cached under ("" for none).
func (s Stage) writeNotes(r *release.Release) (writer string, err error) {
	n, err := notes(r.Config)
	if err != nil {
		return "", err
	}
	if err := atomicfile.WriteFile(filepath.Join(r.Stage, dist.NotesFile), []byte(n), 0o644); err != nil {
		return "", err
	}
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindNotes, Path: dist.NotesFile, SHA256: checksum.Bytes([]byte(n)), Size: int64(len(n))})
	if !r.NoCache {
		writer = r.WriterIdentity()
	}
	return writer, nil
}

// Targets is the closure and bundle stages split by target, for a
// pipeline that takes up a target as soon as its wheels are written,
// while the next target's are: [Targets.Add] each target in the order of
// r.Targets once its wheels are in r.Artifacts. It does what
// [ClosureStage] then [Stage] do for every target, with the same files
// and the same refusals; like them it does nothing for a release without
// wheels.
type Targets struct {
	Closure ClosureStage
	Bundle  Stage

	res    *resolver // set up on the first target with wheels
	notes  bool      // RELEASE_NOTES.md is written
	writer string
}

// Add resolves and fetches the closure of target t, then writes its
// bundle. The first target with wheels reads the dependency lock and
// writes the release notes.
func (b *Targets) Add(ctx context.Context, r *release.Release, t config.Target) error {
	if len(r.Artifacts.Filter(dist.WheelsOf(t.Name))) == 0 {
		return nil
	}
	if b.res == nil {
		res, err := b.Closure.resolver(r)
		if err != nil {
			return err
		}
		b.res = res
	}
	if err := b.res.resolve(ctx, r, t); err != nil {
		return err
	}
	if b.Bundle.Closures[t.Name] == nil {
		return nil
	}
	if !b.notes {
		w, err := b.Bundle.writeNotes(r)
		if err != nil {
			return err
		}
		b.notes, b.writer = true, w
	}
	return b.Bundle.writeBundle(ctx, r, t.Name, b.writer)
}

// writeBundle writes the bundle of target, which has a closure.
func (s Stage) writeBundle(ctx context.Context, r *release.Release, target, writer string) error {
	cl := s.Closures[target]
	c := r.Config
	names := dist.NamesOf(c.Project.NormalizedName, c.Project.Version)
	root, file := names.BundleRoot(target), names.Bundle(target)
	var entries []tarball.Entry
	var sums checksum.Sums
	addFile := func(p, src, sha string) {
		entries = append(entries, tarball.Entry{Path: p, File: src, Mode: 0o644, SHA256: sha})
		sums = append(sums, checksum.Sum{Name: p, SHA256: sha})
	}
	addData := func(p string, data []byte, mode fs.FileMode) {
		entries = append(entries, tarball.Entry{Path: p, Data: data, Mode: mode})
		sums = append(sums, checksum.Sum{Name: p, SHA256: checksum.Bytes(data)})
	}
	docs := Docs{Name: c.Project.NormalizedName, Version: c.Project.Version, Target: target,
		PlatformTag: cl.Target.Platform, Root: root, File: file, Pythons: c.Bundle.Pythons}
	for _, p := range cl.Own {
		docs.Own = append(docs.Own, p.Name+"=="+p.Version)
		for _, f := range p.Files {
			addFile("wheels/"+f.Name, f.Path, f.SHA256)
		}
	}
	for _, p := range cl.Packages {
		docs.Deps = append(docs.Deps, p.Name+"=="+p.Version)
		for _, f := range p.Files {
			addFile("dependencies/"+f.Name, f.Path, f.SHA256)
		}
	}
	// Both folders exist even when empty: install.sh and INSTALL.md name them.
	entries = append(entries, tarball.Entry{Path: "wheels", Mode: fs.ModeDir | 0o755}, tarball.Entry{Path: "dependencies", Mode: fs.ModeDir | 0o755})
	reqs, lock := deps.RequirementsTxt(cl), deps.PylockToml(cl, nil)
	if err := checkOwnLocks(file, cl, reqs, lock); err != nil {
		return err
	}
	addData("requirements.txt", reqs, 0o644)
	addData("pylock.toml", lock, 0o644)
	lic := licenseEntries(cl)
	licPaths := make([]string, 0, len(lic))
	for p := range lic {
		licPaths = append(licPaths, p)
	}
	sort.Strings(licPaths)
	for _, p := range licPaths {
		addData(p, lic[p], 0o644)
	}
	// The notes as the notes stage wrote them: every bundle carries the
	// release's file, not a copy kept on the side.
	notes, err := os.ReadFile(filepath.Join(r.Stage, dist.NotesFile))
	if err != nil {
		return fmt.Errorf("bundle %s: release notes: %w", file, err)
	}
	addData(dist.NotesFile, notes, 0o644)
	doc, err := InstallDoc(docs)
	if err != nil {
		return err
	}
	addData("INSTALL.md", doc, 0o644)
	m, err := s.bundleManifest(r, target, cl)
	if err != nil {
		return err
	}
	addData(dist.ManifestFile, m, 0o644)
	spdx, cdx, err := targetSBOM(r, s.Closures, target)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", file, err)
	}
	addData(names.TargetSBOM(target), spdx, 0o644)
	addData(names.TargetCycloneDX(target), cdx, 0o644)
	// install.sh comes last: it carries the digest of every other file.
	docs.Files = slices.Clone(sums)
	install, err := InstallScript(docs)
	if err != nil {
		return err
	}
	addData("install.sh", install, 0o755)
	sumData, err := sums.Marshal()
	if err != nil {
		return fmt.Errorf("bundle %s: %w", file, err)
	}
	entries = append(entries, tarball.Entry{Path: dist.ChecksumsFile, Data: sumData, Mode: 0o644})

	sha, size, err := archive(ctx, r, target, file, entries, tarball.Options{Root: root, MTime: r.Epoch}, writer)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", file, err)
	}
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindBundle, Path: file, Target: target, SHA256: sha, Size: size})
	r.Logger.Info("bundle written", "bundle", file, "dependencies", len(cl.Packages))
	return nil
}

// archive writes the bundle file of target into the staging folder. Like
// wheels, bundles are kept in the action cache under the key of all they
// hold (tarball.Key: the writer's identity, the root, the time, every
// entry's path, mode and digest; the wheels' digests are those already
// known), so a rebuild with nothing changed copies the bundle, re-hashed
// against its entry, instead of compressing it again. Nothing is cached
// when writer, the identity of the writing code (Release.WriterIdentity), is
// "" (--no-cache, or it could not be read).
func archive(ctx context.Context, r *release.Release, target, file string, entries []tarball.Entry, o tarball.Options, writer string) (string, int64, error) {
	path := filepath.Join(r.Stage, file)
	if writer == "" {
		return tarball.WriteFile(ctx, path, entries, o)
	}
	key, err := tarball.Key(entries, o, writer)
	if err != nil {
		return "", 0, err
	}
	cache := r.ActionCache()
	out, how, reason, err := cache.Keep(key, "bundle", target, r.Stage, file, func() error {
		_, _, err := tarball.WriteFile(ctx, path, entries, o)
		return err
	})
	if err != nil {
		return "", 0, err
	}
	switch how {
	case actioncache.Restored:
		r.Logger.Debug("bundle from the cache", "bundle", file, "key", key[:12])
	case actioncache.Rewritten:
		r.Logger.Warn("discarded a damaged cache entry; writing the bundle again", "bundle", file, "problem", reason)
	}
	return out.SHA256, out.Size, nil
}

// bundleManifest is the release manifest narrowed to one target
// (release.TargetManifest: nothing of another target), with the bundle's
// support boundary and closure.
func (s Stage) bundleManifest(r *release.Release, target string, cl *deps.Closure) ([]byte, error) {
	m := release.TargetManifest(r, target, release.Facts{Sandbox: s.Sandbox, Dependencies: s.Closures.Dependencies})
	b := &dist.ManifestBundle{Target: target, PlatformTag: cl.Target.Platform, Pythons: cl.Target.Pythons, Dependencies: []dist.ManifestArtifact{}}
	for _, p := range cl.Packages {
		for _, f := range p.Files {
			b.Dependencies = append(b.Dependencies, dist.ManifestArtifact{Path: path.Join("dependencies", f.Name), Name: p.Name + "==" + p.Version,
				Size: f.Size, SHA256: f.SHA256, URL: downloadURL(f)})
		}
	}
	m.Bundle = b
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifest of target %s: %w", target, err)
	}
	return append(data, '\n'), nil
}

// checkOwnLocks runs the checks of Open on the locks about to be written,
// so that build never writes a bundle that verify and install refuse (a
// lock marker pip would misread, say).
func checkOwnLocks(file string, cl *deps.Closure, reqs, lock []byte) error {
	var wheels []bundleWheel
	for _, set := range []struct {
		dir string
		ps  []deps.Resolved
	}{{deps.OwnDir, cl.Own}, {deps.DependencyDir, cl.Packages}} {
		for _, p := range set.ps {
			for _, f := range p.Files {
				w, err := newBundleWheel(set.dir+"/"+f.Name, f.SHA256, f.Size)
				if err != nil {
					return fmt.Errorf("bundle %s: %w", file, err)
				}
				wheels = append(wheels, w)
			}
		}
	}
	pins, ps := checkRequirementsTxt(reqs, &cl.Target, wheels)
	ps = append(ps, checkPylockToml(lock, &cl.Target, pins, wheels)...)
	if len(ps) == 0 {
		return nil
	}
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("\n  " + p.file + ": " + p.text())
	}
	return &ConfigError{Key: "dependencies.lock", Msg: fmt.Sprintf("bundle %s: the locks mkrelease would write do not pass its own checks:%s\n\thint: a lock entry's marker or a wheel's name is one pip would read differently; fix the dependency lock", file, b.String())}
}
