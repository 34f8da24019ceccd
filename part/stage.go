package part

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/provenance/attest"
	"github.com/mkrelease/mkrelease/release"
)

// Stage writes part.json, and with a Signer the part statement, into the
// staging folder. It takes the place of the provenance stage in a part's
// build (a part is not signed as a release) and runs after the checksums,
// once every other file of the part exists.
type Stage struct {
	// Signer signs the part statement; nil writes none.
	Signer provenance.Signer
	// Getenv reads CI facts for the builder and invocation ids.
	Getenv func(string) string
	// OS and Arch name the host; empty means this one.
	OS, Arch string
	// Sandbox is how the part's build steps were isolated: the compile
	// stage's executor's.
	Sandbox executor.Sandbox
	// Closures are the targets' closures (the closure stage's), for the
	// part's description of its targets.
	Closures bundle.Closures
}

// String names the stage.
func (Stage) String() string { return "part" }

// Run records the part.
func (s Stage) Run(ctx context.Context, r *release.Release) error {
	m, err := s.manifest(ctx, r)
	if err != nil {
		return err
	}
	data, err := m.Encode()
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(r.Stage, dist.PartFile), data, 0o644); err != nil {
		return err
	}
	sha := checksum.Bytes(data)
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindPart, Path: dist.PartFile, SHA256: sha, Size: int64(len(data))})
	if s.Signer == nil {
		r.Logger.Warn("the part is not signed (no signing key): merge cannot tell who built it, and refuses it unless told --allow-unsigned-parts")
		return nil
	}
	st, err := Statement(m, sha)
	if err != nil {
		return err
	}
	env, err := provenance.SignStatement(ctx, s.Signer, st)
	if err != nil {
		return fmt.Errorf("part statement: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(r.Stage, dist.PartStatementFile), env, 0o644); err != nil {
		return err
	}
	r.Artifacts.Add(dist.Artifact{Kind: dist.KindPartStatement, Path: dist.PartStatementFile, SHA256: checksum.Bytes(env), Size: int64(len(env))})
	r.Logger.Info("part written", "targets", m.Targets, "files", len(m.Files), "key", provenance.KeyID(s.Signer.Public())[:16])
	return nil
}

// manifest assembles part.json for the staged folder of r.
func (s Stage) manifest(ctx context.Context, r *release.Release) (*Manifest, error) {
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := r.Config
	m := &Manifest{
		Schema:          Schema,
		Project:         dist.ManifestProject{Name: c.Project.NormalizedName, Version: c.Project.Version},
		Mkrelease:       release.ToolVersion,
		SourceDateEpoch: r.Epoch,
		Config:          Config{ReleaseTOML: c.SHA256},
		Toolchains:      []dist.ManifestToolchain{},
		Targets:         []string{},
		Host:            Host{OS: or(s.OS, runtime.GOOS), Arch: or(s.Arch, runtime.GOARCH), Builder: attest.BuilderID(getenv), Invocation: attest.InvocationID(getenv)},
		Sandbox:         SandboxOf(s.Sandbox),
		Files:           []File{},
	}
	for _, f := range c.MetadataFiles {
		if m.Config.MetadataFiles == nil {
			m.Config.MetadataFiles = map[string]string{}
		}
		m.Config.MetadataFiles[f.Path] = f.SHA256
	}
	if r.Lock != nil {
		m.Config.ReleaseLock = r.Lock.SHA256
		m.Toolchains = append(m.Toolchains, r.Lock.Toolchains...)
	}
	for _, t := range r.Targets {
		m.Targets = append(m.Targets, t.Name)
	}
	doc, err := bundle.SBOM(r, s.Closures)
	if err != nil {
		return nil, err
	}
	m.SBOM = doc
	staged, err := dist.Open(ctx, r.Stage)
	if err != nil {
		return nil, err
	}
	if len(staged.Irregular) > 0 {
		return nil, fmt.Errorf("part: the staging folder holds entries that are not files: %v", staged.Irregular)
	}
	for _, a := range staged.Files(nil) {
		m.Files = append(m.Files, File{Path: a.Path, SHA256: a.SHA256, Size: a.Size})
	}
	return m, nil
}

// statementPredicate is the predicate of a part statement.
type statementPredicate struct {
	Project string   `json:"project"`
	Version string   `json:"version"`
	Targets []string `json:"targets"`
	Host    Host     `json:"host"`
}

// Statement is the in-toto statement of a part: its one subject is
// part.json (digest sha), which names every other file by digest.
func Statement(m *Manifest, sha string) ([]byte, error) {
	st, err := provenance.NewStatement(PredicateType, []provenance.Subject{{Name: dist.PartFile, SHA256: sha}},
		statementPredicate{Project: m.Project.Name, Version: m.Project.Version, Targets: m.Targets, Host: m.Host})
	if err != nil {
		return nil, fmt.Errorf("part statement: %w", err)
	}
	return st, nil
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
