package release

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/projectfile"
)

// ToolVersion is the version of mkrelease. It is recorded in every manifest:
// an artifact is a function of the inputs and of this version.
const ToolVersion = "0.1.0-dev"

// Facts are what manifest.json records beyond r: how the build steps were
// isolated and each target's dependency closure.
type Facts struct {
	// Sandbox is the compile stage's executor's.
	Sandbox executor.Sandbox
	// Dependencies lists the wheels of a target's dependency closure, as
	// manifest.json records them (the closure stage's); nil for none.
	Dependencies func(target string) []dist.ManifestArtifact
}

// BuildManifest assembles the manifest of r, with f.
func BuildManifest(r *Release, f Facts) *dist.Manifest {
	sb := f.Sandbox
	m := &dist.Manifest{
		Schema:          dist.ManifestSchema,
		Project:         dist.ManifestProject{Name: r.Config.Project.NormalizedName, Version: r.Config.Project.Version},
		Mkrelease:       ToolVersion,
		SourceDateEpoch: r.Epoch,
		Config:          dist.ManifestConfig{ReleaseTOML: r.Config.SHA256},
		Sources:         []dist.ManifestSource{},
		Overlays:        []dist.ManifestOverlay{},
		Toolchains:      []dist.ManifestToolchain{},
		Build:           dist.ManifestBuild{Sandboxed: sb.Isolated, Isolation: sb.Level()},
		Targets:         []dist.ManifestTarget{},
	}
	if r.Lock != nil {
		m.Config.ReleaseLock = r.Lock.SHA256
	}
	m.Config.Files = projectFiles(r.Config)
	if found := r.Found; found != nil {
		m.Sources = append(m.Sources, found.Sources...)
		for _, o := range found.Overlays {
			m.Overlays = append(m.Overlays, dist.ManifestOverlay{Name: o.Name, Source: o.Source, Kind: o.Kind, Path: o.Path, Digest: o.Digest, Result: o.Result})
		}
		m.Toolchains = append(m.Toolchains, found.Toolchains...)
	}
	for _, t := range r.Targets {
		mt := dist.ManifestTarget{Name: t.Name, Env: t.Env, Outputs: []dist.ManifestArtifact{}, Wheels: []dist.ManifestArtifact{}}
		for _, a := range r.Artifacts.Filter(dist.And(dist.ByTarget(t.Name), dist.ByKind(dist.KindBinary))) {
			mt.Outputs = append(mt.Outputs, dist.ManifestArtifact{Path: a.Path, Step: a.Step, Size: a.Size, SHA256: a.SHA256})
		}
		for _, a := range r.Artifacts.Filter(dist.WheelsOf(t.Name)) {
			mt.Wheels = append(mt.Wheels, dist.ManifestArtifact{Path: a.Path, Name: a.Name, Size: a.Size, SHA256: a.SHA256})
			if a.Target != "" || mt.PlatformTag == "" {
				mt.PlatformTag = a.PlatformTag // a native wheel's, else "any"
			}
		}
		mt.Dependencies = []dist.ManifestArtifact{}
		if f.Dependencies != nil {
			mt.Dependencies = append(mt.Dependencies, f.Dependencies(t.Name)...)
		}
		for _, a := range r.Artifacts.Filter(dist.And(dist.ByTarget(t.Name), dist.ByKind(dist.KindBundle))) {
			mt.Bundle = &dist.ManifestArtifact{Path: a.Path, Size: a.Size, SHA256: a.SHA256}
		}
		m.Targets = append(m.Targets, mt)
	}
	return m
}

// TargetManifest is the manifest of one target, as its bundle carries it:
// the manifest of r narrowed to what built that target, so that it is the
// same whether the release builds the target alone or with others. It
// keeps the target's entry of targets (without its bundle, which cannot
// hold its own digest), the toolchains of every target and of this one,
// and the sources the target's build reads ([config.Config.SourcesOf])
// with their overlays. Bundle is left for the caller to fill.
func TargetManifest(r *Release, target string, f Facts) *dist.Manifest {
	m := BuildManifest(r, f)
	reads := r.Config.SourcesOf(target)
	m.Sources = slices.DeleteFunc(m.Sources, func(s dist.ManifestSource) bool { return !reads[s.Name] })
	m.Overlays = slices.DeleteFunc(m.Overlays, func(o dist.ManifestOverlay) bool { return !reads[o.Source] })
	m.Toolchains = slices.DeleteFunc(m.Toolchains, func(tc dist.ManifestToolchain) bool { return tc.Target != "" && tc.Target != target })
	m.Targets = slices.DeleteFunc(m.Targets, func(t dist.ManifestTarget) bool { return t.Name != target })
	for i := range m.Targets {
		m.Targets[i].Bundle = nil
	}
	return m
}

// projectFiles hashes the project files a release reads besides
// release.toml and the sources: readme, changelog, dependency lock, and the
// pyproject.toml files its metadata comes from (with the digest of the
// bytes that were read). They are read as the stages read them, beneath
// the project folder (package projectfile): one a link leads out of is
// not hashed here, and the stage that reads it refuses it.
func projectFiles(c *config.Config) map[string]string {
	out := map[string]string{}
	for _, f := range c.MetadataFiles {
		out[f.Path] = f.SHA256
	}
	for _, p := range []string{c.Project.Readme, c.Bundle.Changelog, c.Dependencies.Lock} {
		if p == "" {
			continue
		}
		if data, err := projectfile.ReadFile(c.Dir, p, projectfile.MaxText); err == nil {
			out[p] = checksum.Bytes(data)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ManifestStage writes manifest.json into the staging folder.
type ManifestStage struct {
	// Facts are what it records beyond r (see [BuildManifest]).
	Facts Facts
}

// String names the stage.
func (ManifestStage) String() string { return "manifest" }

// Run writes the manifest: r.Manifest when a stage before assembled it
// (merge does, from the manifests of its parts), else [BuildManifest]'s.
// Later stages read r.Manifest.
func (s ManifestStage) Run(_ context.Context, r *Release) error {
	if r.Manifest == nil {
		r.Manifest = BuildManifest(r, s.Facts)
	}
	data, err := json.MarshalIndent(r.Manifest, "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.WriteFile(filepath.Join(r.Stage, dist.ManifestFile), data, 0o644); err != nil {
		return err
	}
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindManifest, Path: dist.ManifestFile, SHA256: checksum.Bytes(data), Size: int64(len(data))})
	return nil
}

// OutputStage replaces the output folder with the staging folder in one
// step: it is the last stage of a pipeline that writes output.
type OutputStage struct{}

// String names the stage.
func (OutputStage) String() string { return "output" }

// Run swaps the staging folder into place.
func (OutputStage) Run(_ context.Context, r *Release) error {
	if err := atomicfile.ReplaceDir(r.Stage, r.Out); err != nil {
		return err
	}
	r.Stage = ""
	return nil
}

// OutputError is an output folder mkrelease will not replace. It maps to
// exit status 2.
type OutputError struct {
	Dir string
	Msg string
}

// Error says why and what to do.
func (e *OutputError) Error() string {
	return fmt.Sprintf("%s: %s\n\thint: remove it, or choose another folder with --out", e.Dir, e.Msg)
}

// ExitCode is 2.
func (e *OutputError) ExitCode() int { return 2 }

// CheckOutput refuses an output folder that exists and holds something
// other than a previous mkrelease output: the whole folder is replaced.
func CheckOutput(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return &OutputError{Dir: dir, Msg: "exists and is not a folder"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, dist.ManifestFile))
	if err == nil {
		var m struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(data, &m) == nil && m.Schema == dist.ManifestSchema {
			return nil
		}
	}
	return &OutputError{Dir: dir, Msg: "exists and is not an mkrelease output (no manifest.json); mkrelease replaces the whole folder"}
}
