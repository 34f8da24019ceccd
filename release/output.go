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
	"github.com/mkrelease/mkrelease/internal/artifact"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// ToolVersion is the version of mkrelease. It is recorded in every manifest:
// an artifact is a function of the inputs and of this version.
const ToolVersion = "0.1.0-dev"

// ManifestSchema identifies the manifest.json format.
const ManifestSchema = "https://mkrelease.dev/schemas/manifest/v1"

// Manifest is manifest.json: every input of the build and every output, with
// digests. It holds no time but the epoch, no host, user or absolute path,
// so two builds of the same inputs write the same bytes.
type Manifest struct {
	Schema          string              `json:"schema"`
	Project         ManifestProject     `json:"project"`
	Mkrelease       string              `json:"mkrelease"`
	SourceDateEpoch int64               `json:"source_date_epoch"`
	Config          ManifestConfig      `json:"config"`
	Sources         []ManifestSource    `json:"sources"`
	Overlays        []ManifestOverlay   `json:"overlays"`
	Toolchains      []ManifestToolchain `json:"toolchains"`
	// Build says how the build steps were isolated from the host.
	Build   ManifestBuild    `json:"build"`
	Targets []ManifestTarget `json:"targets"`
	// Bundle is set in the manifest inside a bundle: its target, support
	// boundary and closure.
	Bundle *ManifestBundle `json:"bundle,omitempty"`
}

// ManifestBundle describes the bundle a manifest ships in.
type ManifestBundle struct {
	Target       string             `json:"target"`
	PlatformTag  string             `json:"platform_tag"`
	Pythons      []string           `json:"pythons"`
	Dependencies []ManifestArtifact `json:"dependencies"`
}

// ManifestProject names the release.
type ManifestProject struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ManifestConfig holds the digests of release.toml, release.lock and every
// other project file the release reads (readme, changelog, dependency lock),
// by path.
type ManifestConfig struct {
	ReleaseTOML string            `json:"release_toml_sha256"`
	ReleaseLock string            `json:"release_lock_sha256"`
	Files       map[string]string `json:"files_sha256,omitempty"`
}

// ManifestSource is a pinned source as built.
type ManifestSource struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Location   string `json:"location"`
	Commit     string `json:"commit,omitempty"`
	CommitTime int64  `json:"commit_time,omitempty"`
	SHA256     string `json:"sha256,omitempty"`
	Tree       string `json:"tree"`
}

// ManifestOverlay is an overlay as applied.
type ManifestOverlay struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Digest string `json:"digest"`
	Result string `json:"result"`
}

// ManifestBuild records how the build steps ran: sandboxed (their own
// namespaces and a file system view of the system, the toolchains and their
// own folders only), or not, and then at which isolation level (network: a
// network namespace alone; none). The sandbox's name and version, and why a
// build was not sandboxed, are host facts: they go into the provenance, not
// here.
type ManifestBuild struct {
	Sandboxed bool   `json:"sandboxed"`
	Isolation string `json:"isolation"`
}

// ManifestToolchain is a toolchain identity.
type ManifestToolchain struct {
	Name    string `json:"name"`
	Target  string `json:"target,omitempty"`
	Version string `json:"version"`
}

// ManifestTarget lists a target's declared environment, its build outputs
// and its wheels.
type ManifestTarget struct {
	Name         string             `json:"name"`
	Env          map[string]string  `json:"env,omitempty"`
	PlatformTag  string             `json:"platform_tag,omitempty"`
	Outputs      []ManifestArtifact `json:"outputs"`
	Wheels       []ManifestArtifact `json:"wheels"`
	Dependencies []ManifestArtifact `json:"dependencies"`
	Bundle       *ManifestArtifact  `json:"bundle,omitempty"`
}

// ManifestArtifact is one output file.
type ManifestArtifact struct {
	Path   string `json:"path"`
	Name   string `json:"name,omitempty"`
	Step   string `json:"step,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// BuildManifest assembles the manifest of r.
func BuildManifest(r *Release) *Manifest {
	m := &Manifest{
		Schema:          ManifestSchema,
		Project:         ManifestProject{Name: r.Config.Project.NormalizedName, Version: r.Config.Project.Version},
		Mkrelease:       ToolVersion,
		SourceDateEpoch: r.Epoch,
		Config:          ManifestConfig{ReleaseTOML: r.Config.SHA256},
		Sources:         []ManifestSource{},
		Overlays:        []ManifestOverlay{},
		Toolchains:      []ManifestToolchain{},
		Build:           ManifestBuild{Sandboxed: r.Sandbox.Isolated, Isolation: r.Sandbox.Level()},
		Targets:         []ManifestTarget{},
	}
	if r.Lock != nil {
		m.Config.ReleaseLock = r.Lock.SHA256
	}
	m.Config.Files = projectFiles(r.Config)
	if f := r.Found; f != nil {
		for _, s := range f.Sources {
			m.Sources = append(m.Sources, ManifestSource{s.Name, s.Kind, s.Location, s.Commit, s.CommitTime, s.SHA256, s.Tree})
		}
		for _, o := range f.Overlays {
			m.Overlays = append(m.Overlays, ManifestOverlay{o.Name, o.Source, o.Kind, o.Path, o.Digest, o.Result})
		}
		for _, t := range f.Toolchains {
			m.Toolchains = append(m.Toolchains, ManifestToolchain{t.Name, t.Target, t.Version})
		}
	}
	for _, t := range r.Targets {
		mt := ManifestTarget{Name: t.Name, Env: t.Env, Outputs: []ManifestArtifact{}, Wheels: []ManifestArtifact{}}
		for _, a := range r.Artifacts.Filter(artifact.And(artifact.ByTarget(t.Name), artifact.ByKind(artifact.Binary))) {
			mt.Outputs = append(mt.Outputs, ManifestArtifact{Path: a.Path, Step: a.Step, Size: a.Size, SHA256: a.SHA256})
		}
		for _, a := range r.Artifacts.Filter(artifact.And(artifact.ByTarget(t.Name), artifact.ByKind(artifact.Wheel))) {
			mt.Wheels = append(mt.Wheels, ManifestArtifact{Path: a.Path, Name: a.Name, Size: a.Size, SHA256: a.SHA256})
			mt.PlatformTag = a.PlatformTag
		}
		mt.Dependencies = []ManifestArtifact{}
		if cl := r.Closures[t.Name]; cl != nil {
			for _, p := range cl.Packages {
				for _, f := range p.Files {
					mt.Dependencies = append(mt.Dependencies, ManifestArtifact{Path: f.Name, Name: p.Name + "==" + p.Version, Size: f.Size, SHA256: f.SHA256})
				}
			}
		}
		for _, a := range r.Artifacts.Filter(artifact.And(artifact.ByTarget(t.Name), artifact.ByKind(artifact.Bundle))) {
			mt.Bundle = &ManifestArtifact{Path: a.Path, Size: a.Size, SHA256: a.SHA256}
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
func TargetManifest(r *Release, target string) *Manifest {
	m := BuildManifest(r)
	reads := r.Config.SourcesOf(target)
	m.Sources = slices.DeleteFunc(m.Sources, func(s ManifestSource) bool { return !reads[s.Name] })
	m.Overlays = slices.DeleteFunc(m.Overlays, func(o ManifestOverlay) bool { return !reads[o.Source] })
	m.Toolchains = slices.DeleteFunc(m.Toolchains, func(tc ManifestToolchain) bool { return tc.Target != "" && tc.Target != target })
	m.Targets = slices.DeleteFunc(m.Targets, func(t ManifestTarget) bool { return t.Name != target })
	for i := range m.Targets {
		m.Targets[i].Bundle = nil
	}
	return m
}

// projectFiles hashes the project files a release reads besides
// release.toml and the sources: readme, changelog, dependency lock.
func projectFiles(c *config.Config) map[string]string {
	out := map[string]string{}
	for _, p := range []string{c.Project.Readme, c.Bundle.Changelog, c.Dependencies.Lock} {
		if p == "" {
			continue
		}
		if data, err := os.ReadFile(filepath.Join(c.Dir, filepath.FromSlash(p))); err == nil {
			out[p] = checksum.Bytes(data)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ManifestStage writes manifest.json into the staging folder.
type ManifestStage struct{}

// String names the stage.
func (ManifestStage) String() string { return "manifest" }

// Run writes the manifest.
func (ManifestStage) Run(_ context.Context, r *Release) error {
	data, err := json.MarshalIndent(BuildManifest(r), "", "  ")
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.WriteFile(filepath.Join(r.Stage, "manifest.json"), data, 0o644); err != nil {
		return err
	}
	r.Artifacts.Add(artifact.Artifact{Kind: artifact.Manifest, Path: "manifest.json", SHA256: checksum.Bytes(data), Size: int64(len(data))})
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
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err == nil {
		var m struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(data, &m) == nil && m.Schema == ManifestSchema {
			return nil
		}
	}
	return &OutputError{Dir: dir, Msg: "exists and is not an mkrelease output (no manifest.json); mkrelease replaces the whole folder"}
}
