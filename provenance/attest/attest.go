// Package attest is the signing stage of the release pipeline: it states,
// in one in-toto Statement with a SLSA Provenance v1 predicate, what the
// build produced (every wheel, bundle and the SBOM, by name and sha256) and
// from what (the digests of release.toml and release.lock, each pinned
// source, overlay and dependency wheel, the toolchains), signs it, and
// writes NAME-VERSION.intoto.jsonl (a DSSE envelope, as cosign reads it)
// and NAME-VERSION.sigstore.json (a Sigstore bundle v0.3), each with a
// .sha256 sidecar. Signed statements carry run facts (invocation id, times)
// and a signature, so they are not reproducible and SHA256SUMS does not
// list them: the stage runs after the checksums.
package attest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pin"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/sbom"
)

// UnsignedPartsParameter is the internal parameter of a merged release's
// provenance that lists the parts no trusted key vouched for (manifest.json's
// build.unsigned_parts: each part's targets, the sha256 of its part.json
// and why); absent when every part's statement verified.
const UnsignedPartsParameter = "unsigned_parts"

// RemoteActionsParameter is the internal parameter of a release's
// provenance that lists the build actions whose outputs came from a remote
// action cache instead of running in this build, in the order they ran:
// each one's step, target and action key, the cache's URL, and the key id
// of the writer whose signed record was taken ("writer"). That includes
// the actions the local cache served from a remote cache's record an
// earlier build took. Absent when every action's outputs were built here.
const RemoteActionsParameter = "remote_cache_actions"

// WorkTreesParameter is the internal parameter that says, for each source
// read from a git work tree on the building machine, whether the tree
// below it was what HEAD holds ("clean") or held changes no commit holds
// ("modified"), by source name. Absent when no source was.
const WorkTreesParameter = "work_trees"

// Stage signs the provenance with Signer; without one it is skipped.
type Stage struct {
	Signer provenance.Signer
	// Started is when the build began; Getenv reads CI facts (GitHub
	// Actions) for the builder and invocation ids.
	Started time.Time
	Getenv  func(string) string
	// Materials and Byproducts are added to what the manifest records: a
	// merged release names its parts and their builders in both.
	Materials, Byproducts []provenance.Dependency
	// Sandbox is how the build steps were isolated: the compile stage's
	// executor's, or a merged release's weakest part's.
	Sandbox executor.Sandbox
	// Compiled, when set, is what the compile stage did (it fills it
	// before this stage runs): the actions a remote cache served are
	// listed ([RemoteActionsParameter]).
	Compiled *build.Report
}

// String names the stage.
func (Stage) String() string { return "provenance" }

// Skip skips the stage when there is no signer (reproduce), or nothing to
// vouch for (no subject, such as a wheel, was built).
func (s Stage) Skip(r *release.Release) (string, bool) {
	if s.Signer == nil {
		return "no signing key for this run", true
	}
	if len(r.Artifacts.Filter(dist.Subjects())) == 0 {
		return "no wheel, bundle or SBOM was built: nothing to vouch for", true
	}
	return "", false
}

// Run states, signs and writes.
func (s Stage) Run(ctx context.Context, r *release.Release) error {
	p := s.Provenance(r, ProjectOf(ctx, r.Config), s.Started, time.Now())
	names := dist.NamesOf(r.Config.Project.NormalizedName, r.Config.Project.Version)
	envName, bundleName := names.Provenance(), names.ProvenanceBundle()
	env, bundle, kept := s.kept(r, p, envName, bundleName)
	if !kept {
		statement, err := p.Statement()
		if err != nil {
			return fmt.Errorf("provenance: %w", err)
		}
		if env, bundle, err = provenance.Sign(ctx, s.Signer, statement); err != nil {
			return fmt.Errorf("provenance: %w", err)
		}
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{envName, env}, {bundleName, bundle}} {
		path := filepath.Join(r.Stage, f.name)
		if err := atomicfile.WriteFile(path, f.data, 0o644); err != nil {
			return err
		}
		sha := checksum.Bytes(f.data)
		if err := dist.WriteSidecar(path, sha); err != nil {
			return err
		}
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindProvenance, Path: f.name, SHA256: sha, Size: int64(len(f.data))})
	}
	if kept {
		r.Logger.Info("provenance kept: the release folder's signed statement says exactly what this build would sign", "statement", envName, "key", provenance.KeyID(s.Signer.Public())[:16], "subjects", len(p.Subjects))
		return nil
	}
	r.Logger.Info("provenance signed", "statement", envName, "key", provenance.KeyID(s.Signer.Public())[:16], "subjects", len(p.Subjects))
	return nil
}

// kept returns the signed provenance of the release folder this build
// replaces (r.Out) when signing again would change nothing but the run's
// facts: its envelope and Sigstore bundle verify with this build's key and
// carry the same envelope, and its statement is, byte for byte, the one p
// gives with the invocation id and times it recorded (the invocation id
// only when p's is a random one: a CI run's own id must match). A rebuild
// with nothing changed then signs nothing, and a development key is not
// even read (provenance.DevKey).
func (s Stage) kept(r *release.Release, p provenance.Provenance, envName, bundleName string) (env, bundle []byte, ok bool) {
	if r.Out == "" {
		return nil, nil, false
	}
	env, err1 := os.ReadFile(filepath.Join(r.Out, envName))
	bundle, err2 := os.ReadFile(filepath.Join(r.Out, bundleName))
	if err1 != nil || err2 != nil {
		return nil, nil, false
	}
	v, err := provenance.NewVerifier(s.Signer.Public())
	if err != nil {
		return nil, nil, false
	}
	res, err := v.Verify(env, provenance.WithoutArtifactsUnsafe())
	if err != nil {
		return nil, nil, false
	}
	bres, err := v.VerifyBundle(bundle, provenance.WithoutArtifactsUnsafe())
	if err != nil || !bres.Envelope.Equal(res.Envelope) {
		return nil, nil, false
	}
	old := res.Provenance
	if strings.HasPrefix(p.InvocationID, "urn:uuid:") {
		p.InvocationID = old.InvocationID
	}
	p.StartedOn, p.FinishedOn = old.StartedOn, old.FinishedOn
	statement, err := p.Statement()
	if err != nil || !bytes.Equal(statement, res.Statement) {
		return nil, nil, false
	}
	return env, bundle, true
}

func (s Stage) getenv(k string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(k)
}

// ProjectOf names the project of c for the URIs of its own files: its git
// repository, when the project folder is a work tree of a repository that
// [project] urls names ([source.Repository]), else its name and version.
func ProjectOf(ctx context.Context, c *config.Config) pin.Project {
	p := pin.Project{Name: c.Project.NormalizedName, Version: c.Project.Version}
	p.Repository, p.Dir = source.Repository(ctx, c.Dir, c.Project.URLs)
	return p
}

// Provenance describes r: subjects, parameters, materials (those of
// r.Manifest, their project files named as project names them, and
// s.Materials), byproducts, builder.
func (s Stage) Provenance(r *release.Release, project pin.Project, started, finished time.Time) provenance.Provenance {
	getenv := s.getenv
	c := r.Config
	p := provenance.Provenance{
		ExternalParameters: map[string]any{
			"release_toml_sha256": c.SHA256,
			"project":             map[string]any{"name": c.Project.NormalizedName, "version": c.Project.Version},
			"targets":             targetNames(r),
		},
		InternalParameters: map[string]any{"source_date_epoch": r.Epoch, "sandbox": sandboxFacts(s.Sandbox)},
		BuilderID:          BuilderID(getenv),
		BuilderVersion:     map[string]string{"mkrelease": release.ToolVersion},
		InvocationID:       InvocationID(getenv),
		StartedOn:          started.UTC(),
		FinishedOn:         finished.UTC(),
	}
	if r.Lock != nil {
		p.ExternalParameters["release_lock_sha256"] = r.Lock.SHA256
	}
	if len(c.MetadataFiles) > 0 {
		// The pyproject.toml files release.toml takes metadata from
		// ([project] from, [[wheel]] from) are configuration as it is.
		files := map[string]any{}
		for _, f := range c.MetadataFiles {
			files[f.Path] = f.SHA256
		}
		p.ExternalParameters["metadata_files_sha256"] = files
	}
	for _, a := range r.Artifacts.Filter(dist.Subjects()) {
		p.Subjects = append(p.Subjects, provenance.Subject{Name: a.Path, SHA256: a.SHA256})
	}
	if m := r.Manifest; m != nil {
		p.ResolvedDependencies = append(p.ResolvedDependencies, Materials(m, project)...)
		if len(m.Build.UnsignedParts) > 0 {
			// A merge that took parts no trusted key vouched for says so
			// where a verifier looks: the user's choice among the external
			// parameters (a verifier that does not expect it refuses), and
			// which parts, and why, among the internal ones.
			p.ExternalParameters["allow_unsigned_parts"] = true
			p.InternalParameters[UnsignedPartsParameter] = m.Build.UnsignedParts
		}
	}
	if r.Found != nil {
		// Host facts, like the sandbox: whether each source read from a
		// git work tree here was what HEAD holds. manifest.json does not
		// record it, so that a rebuild from the same files elsewhere (a
		// source archive, no repository) writes the same manifest.
		trees := map[string]any{}
		for _, src := range r.Found.Sources {
			if src.WorkTree != "" {
				trees[src.Name] = src.WorkTree
			}
		}
		if len(trees) > 0 {
			p.InternalParameters[WorkTreesParameter] = trees
		}
	}
	if s.Compiled != nil {
		if served := remoteActions(s.Compiled.Actions); len(served) > 0 {
			p.InternalParameters[RemoteActionsParameter] = served
		}
	}
	p.ResolvedDependencies = append(p.ResolvedDependencies, s.Materials...)
	p.Byproducts = append(p.Byproducts, s.Byproducts...)
	return p
}

// remoteActions lists the actions whose outputs a remote cache's record
// gave, for [RemoteActionsParameter].
func remoteActions(actions []build.ActionRecord) []map[string]any {
	var out []map[string]any
	for _, a := range actions {
		if a.RemoteWriter == "" && !a.Remote {
			continue
		}
		out = append(out, map[string]any{"step": a.Step, "target": a.Target, "key": a.Key, "cache": a.RemoteCache, "writer": a.RemoteWriter})
	}
	return out
}

// Materials are the inputs manifest.json records, as the provenance's
// resolved dependencies, in this order: the pinned sources, the overlays,
// each target's dependency wheels, the toolchains. Every URI is absolute
// and independent of the folder the project is in: a source's URL as
// release.toml gives it (git+URL@COMMIT, an archive's URL), and a file or
// folder of the project (a local source, an overlay, a repository or
// archive kept in the project) as project names it ([pin.Project.URI]).
func Materials(m *dist.Manifest, project pin.Project) []provenance.Dependency {
	var out []provenance.Dependency
	for _, src := range m.Sources {
		d := provenance.Dependency{Name: "source:" + src.Name, Digest: map[string]string{}}
		if h, err := provenance.DirHash(src.Tree); err == nil {
			d.Digest = h
		}
		kind, ok := pin.Lookup(src.Kind)
		if !ok {
			kind = pin.Local // a kind this mkrelease does not know: its location, as a project path
		}
		var digest map[string]string
		d.URI, digest = kind.Resolved(src, project)
		maps.Copy(d.Digest, digest)
		out = append(out, d)
	}
	for _, o := range m.Overlays {
		d := provenance.Dependency{Name: "overlay:" + o.Name, URI: project.URI(o.Path), Digest: map[string]string{},
			Annotations: map[string]any{"source": o.Source, "result": o.Result}}
		if sha, ok := strings.CutPrefix(o.Digest, "sha256:"); ok {
			d.Digest["sha256"] = sha
		} else if h, err := provenance.DirHash(o.Digest); err == nil {
			d.Digest = h
		}
		out = append(out, d)
	}
	for _, t := range m.Targets {
		for _, w := range t.Dependencies {
			name, version, _ := strings.Cut(w.Name, "==")
			out = append(out, provenance.Dependency{Name: w.Path, URI: sbom.WheelPURL(name, version, path.Base(w.Path)),
				Digest: map[string]string{"sha256": w.SHA256}, DownloadLocation: w.URL, Annotations: map[string]any{"target": t.Name}})
		}
	}
	for _, tc := range m.Toolchains {
		uri := "urn:mkrelease:toolchain:" + url.PathEscape(tc.Name)
		if tc.Target != "" {
			uri += ":" + url.PathEscape(tc.Target)
		}
		d := provenance.Dependency{Name: "toolchain:" + tc.Key(), URI: uri, Annotations: map[string]any{"version": tc.Version}}
		if tc.SHA256 != "" {
			d.Digest = map[string]string{"sha256": tc.SHA256}
		}
		out = append(out, d)
	}
	return out
}

// sandboxFacts records how the build steps ran, for the release policies
// (build.sandboxed) and auditors: isolated or not, the sandbox and its
// namespaces, the isolation level, and why not when not.
func sandboxFacts(sb executor.Sandbox) map[string]any {
	ns := sb.Namespaces
	if ns == nil {
		ns = []string{}
	}
	facts := map[string]any{"isolated": sb.Isolated, "sandbox": sb.Name, "namespaces": ns, "level": sb.Level()}
	if !sb.Isolated {
		facts["reason"] = sb.Reason
	}
	return facts
}

func targetNames(r *release.Release) []string {
	out := []string{}
	for _, t := range r.Targets {
		out = append(out, t.Name)
	}
	return out
}

// BuilderID names who ran the build: the GitHub Actions workflow when the
// build runs there, else a local build.
func BuilderID(getenv func(string) string) string {
	if getenv("GITHUB_ACTIONS") == "true" && getenv("GITHUB_WORKFLOW_REF") != "" {
		return getenv("GITHUB_SERVER_URL") + "/" + getenv("GITHUB_WORKFLOW_REF")
	}
	return "https://mkrelease.dev/builders/local@v1"
}

// InvocationID identifies this run: the GitHub Actions run when there is
// one, else a random (version 4) UUID, as RFC 9562 spells it.
func InvocationID(getenv func(string) string) string {
	if getenv("GITHUB_ACTIONS") == "true" && getenv("GITHUB_RUN_ID") != "" {
		return fmt.Sprintf("%s/%s/actions/runs/%s/attempts/%s", getenv("GITHUB_SERVER_URL"), getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"), getenv("GITHUB_RUN_ATTEMPT"))
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "unknown"
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant 10
	h := hex.EncodeToString(b)
	return "urn:uuid:" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
