// Package part is a release built on several machines: each machine builds
// some of the release's targets into a part (`mkrelease build --target T
// --part`), and `mkrelease merge` checks the parts and joins them into one
// release folder, byte for byte the folder one machine building every
// target writes.
//
// A part is a build output folder plus part.json ([Manifest]): the digests
// of release.toml and release.lock, the mkrelease version and the epoch,
// the toolchains as locked, the host that built it, how its steps were
// isolated, the description of its targets for the release's SBOM, and
// every file it holds by sha256. A part is not signed as a release; with a
// signing key it carries part.intoto.jsonl, a signed statement whose one
// subject is part.json, so that merge can tell who built what.
//
// Merge takes no part on trust: it checks every part statement with the
// trusted keys (--trusted-key, [signing] trusted_keys) and refuses to run
// without one. --allow-unsigned-parts takes the parts no trusted key
// vouches for (no statement, or no key to check it with); the merged
// release then says so, in manifest.json (build.unsigned_parts) and in its
// provenance (buildDefinition.internalParameters.unsigned_parts), and the
// default release policy refuses to publish it ([build.parts_signed]). A
// merge of parts whose statements all verified records nothing of the
// kind: its folder is the one a single machine writes.
package part

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/sbom"
)

// Schema identifies the part.json format.
const Schema = "https://mkrelease.dev/schemas/part/v1"

// PredicateType is the predicate type of a part statement.
const PredicateType = "https://mkrelease.dev/attestations/part/v1"

// Manifest is part.json. Unlike the release's manifest.json it records the
// host that built the part, so it is not reproducible; it never becomes a
// file of the merged release, whose provenance names it by digest.
type Manifest struct {
	Schema  string               `json:"schema"`
	Project dist.ManifestProject `json:"project"`
	// Mkrelease is the version of mkrelease that built the part.
	Mkrelease       string `json:"mkrelease"`
	SourceDateEpoch int64  `json:"source_date_epoch"`
	// Config holds the digests of release.toml and release.lock.
	Config Config `json:"config"`
	// Toolchains are release.lock's toolchains, as locked.
	Toolchains []dist.ManifestToolchain `json:"toolchains"`
	// Targets are the targets the part holds, in release.toml order.
	Targets []string `json:"targets"`
	// Host is the machine that built the part.
	Host Host `json:"host"`
	// Sandbox says how the part's build steps were isolated.
	Sandbox Sandbox `json:"sandbox"`
	// SBOM describes the part's targets, sources, overlays and
	// toolchains, as the release's SBOM is written from.
	SBOM sbom.Release `json:"sbom"`
	// Files are every file of the part but part.json and its statement,
	// sorted by path.
	Files []File `json:"files"`
}

// Config holds the digests of the configuration a part was built from.
type Config struct {
	ReleaseTOML string `json:"release_toml_sha256"`
	ReleaseLock string `json:"release_lock_sha256"`
	// MetadataFiles are the digests of the pyproject.toml files
	// release.toml takes metadata from (from), by project-relative path.
	MetadataFiles map[string]string `json:"metadata_files_sha256,omitempty"`
}

// Host is the machine that built a part: its OS and architecture (Go's
// names), the builder id and the invocation id the provenance would give
// a build there.
type Host struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Builder    string `json:"builder"`
	Invocation string `json:"invocation"`
}

// Sandbox is [executor.Sandbox] as part.json records it.
type Sandbox struct {
	Isolated   bool     `json:"isolated"`
	Name       string   `json:"name,omitempty"`
	Namespaces []string `json:"namespaces"`
	Network    bool     `json:"network_isolated"`
	Reason     string   `json:"reason,omitempty"`
}

// SandboxOf records sb.
func SandboxOf(sb executor.Sandbox) Sandbox {
	ns := sb.Namespaces
	if ns == nil {
		ns = []string{}
	}
	return Sandbox{Isolated: sb.Isolated, Name: sb.Name, Namespaces: ns, Network: sb.Network, Reason: sb.Reason}
}

// Executor returns the sandbox as the executor describes it.
func (s Sandbox) Executor() executor.Sandbox {
	return executor.Sandbox{Isolated: s.Isolated, Name: s.Name, Namespaces: s.Namespaces, Network: s.Network, Reason: s.Reason}
}

// File is one file of a part.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// maxManifestSize bounds part.json: it lists a few hundred files.
const maxManifestSize = 16 << 20

// Encode renders m as part.json: indented JSON ending in a newline.
func (m *Manifest) Encode() ([]byte, error) {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", dist.PartFile, err)
	}
	return append(data, '\n'), nil
}

// ParseManifest reads part.json strictly: an unknown field, a second JSON
// value, another schema or a malformed file entry is an error.
func ParseManifest(data []byte) (*Manifest, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value")
	}
	if m.Schema != Schema {
		return nil, fmt.Errorf("schema is %q, not %q", m.Schema, Schema)
	}
	if len(m.Targets) == 0 {
		return nil, errors.New("targets: none")
	}
	for _, t := range m.Targets {
		if !dist.IsTargetName(t) {
			return nil, fmt.Errorf("targets: %q is not a target name", t)
		}
		if err := dist.CheckTargetName(t); err != nil {
			return nil, fmt.Errorf("targets: %w", err)
		}
	}
	seen := map[string]bool{}
	for i, f := range m.Files {
		switch {
		case f.Path == "" || strings.HasPrefix(f.Path, "/") || slices.Contains(strings.Split(f.Path, "/"), "..") || strings.Contains(f.Path, `\`):
			return nil, fmt.Errorf("files[%d]: path %q is not a relative path inside the part", i, f.Path)
		case f.Size < 0 || len(f.SHA256) != 64:
			return nil, fmt.Errorf("files[%d] (%s): a sha256 of 64 hex digits and a size are required", i, f.Path)
		case seen[f.Path]:
			return nil, fmt.Errorf("files[%d]: %s is listed twice", i, f.Path)
		}
		seen[f.Path] = true
	}
	return &m, nil
}

// ReadManifest reads dir/part.json.
func ReadManifest(dir string) (*Manifest, []byte, error) {
	path := filepath.Join(dir, dist.PartFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxManifestSize+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxManifestSize {
		return nil, nil, fmt.Errorf("larger than %d bytes", maxManifestSize)
	}
	m, err := ParseManifest(data)
	if err != nil {
		return nil, nil, err
	}
	return m, data, nil
}
