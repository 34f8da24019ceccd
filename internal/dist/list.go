package dist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// ArtifactsSchema identifies the artifact list's format.
const ArtifactsSchema = "https://mkrelease.dev/schemas/artifacts/v1"

// ArtifactList is artifacts.json: every reproducible artifact of a release
// folder, sorted by path. SHA256SUMS lists the same files and the list
// itself.
type ArtifactList struct {
	Schema    string     `json:"schema"`
	Project   string     `json:"project"`
	Version   string     `json:"version"`
	Artifacts []Artifact `json:"artifacts"`
}

// Names returns the names of the list's release.
func (l *ArtifactList) Names() Names { return NamesOf(l.Project, l.Version) }

// Encode returns the list's bytes: stable key order, two-space indent, a
// trailing newline. It refuses a list [Check] refuses.
func (l *ArtifactList) Encode() ([]byte, error) {
	if err := l.Check(); err != nil {
		return nil, err
	}
	data, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", ArtifactsFile, err)
	}
	return append(data, '\n'), nil
}

// Check reports the first entry that cannot be in an artifact list: a
// path that is not clean, relative and slash-separated, a kind that is not
// reproducible, a digest that is not lower-case hex, a negative size, a
// path listed twice, or entries out of order.
func (l *ArtifactList) Check() error {
	if l.Schema != ArtifactsSchema {
		return fmt.Errorf("%s: schema %q, want %q", ArtifactsFile, l.Schema, ArtifactsSchema)
	}
	if l.Project == "" || l.Version == "" {
		return fmt.Errorf("%s: names no project or version", ArtifactsFile)
	}
	for i, a := range l.Artifacts {
		where := fmt.Sprintf("%s: artifacts[%d] %q", ArtifactsFile, i, a.Path)
		if err := checksum.CheckName(a.Path); err != nil || path.Clean(a.Path) != a.Path || a.Path == ArtifactsFile || a.Path == ChecksumsFile {
			return fmt.Errorf("%s: not the relative, clean path of an artifact", where)
		}
		if !a.Kind.Reproducible() {
			return fmt.Errorf("%s: kind %s is not a reproducible artifact", where, a.Kind)
		}
		if !checksum.IsSHA256(a.SHA256) {
			return fmt.Errorf("%s: sha256 %q is not 64 lower-case hex digits", where, a.SHA256)
		}
		if a.Size < 0 {
			return fmt.Errorf("%s: negative size %d", where, a.Size)
		}
		if i > 0 && l.Artifacts[i-1].Path >= a.Path {
			return fmt.Errorf("%s: listed twice or out of order (after %q)", where, l.Artifacts[i-1].Path)
		}
	}
	return nil
}

// NewArtifactList returns the list of the reproducible artifacts among as,
// sorted by path.
func NewArtifactList(project, version string, as []Artifact) *ArtifactList {
	l := &ArtifactList{Schema: ArtifactsSchema, Project: project, Version: version, Artifacts: []Artifact{}}
	for _, a := range as {
		if a.Kind.Reproducible() {
			l.Artifacts = append(l.Artifacts, a)
		}
	}
	slices.SortFunc(l.Artifacts, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	return l
}

// Sums returns SHA256SUMS's lines for the list: each artifact, and the
// list itself with digest self (the sha256 of the list's bytes).
func (l *ArtifactList) Sums(self string) checksum.Sums {
	sums := checksum.Sums{{Name: ArtifactsFile, SHA256: self}}
	for _, a := range l.Artifacts {
		sums = append(sums, checksum.Sum{Name: a.Path, SHA256: a.SHA256})
	}
	slices.SortFunc(sums, func(a, b checksum.Sum) int { return strings.Compare(a.Name, b.Name) })
	return sums
}

// WriteArtifactList writes l as dir/artifacts.json, then SHA256SUMS
// derived from it, and a sidecar beside every top-level artifact and the
// list: the records every later verb loads the release from. It returns
// the list's own artifact.
func WriteArtifactList(dir string, l *ArtifactList) (Artifact, error) {
	data, err := l.Encode()
	if err != nil {
		return Artifact{}, err
	}
	self := Artifact{Kind: KindArtifacts, Path: ArtifactsFile, SHA256: checksum.Bytes(data), Size: int64(len(data))}
	if err := atomicfile.WriteFile(filepath.Join(dir, ArtifactsFile), data, 0o644); err != nil {
		return Artifact{}, err
	}
	for _, a := range append(slices.Clone(l.Artifacts), self) {
		if strings.Contains(a.Path, "/") {
			continue
		}
		if err := WriteSidecar(filepath.Join(dir, a.Path), a.SHA256); err != nil {
			return Artifact{}, err
		}
	}
	if err := checksum.WriteSums(filepath.Join(dir, ChecksumsFile), l.Sums(self.SHA256)); err != nil {
		return Artifact{}, err
	}
	return self, nil
}

// maxListSize bounds the artifact list read back: a release lists a few
// hundred files at most.
const maxListSize = 16 << 20

// ParseArtifactList reads an artifact list strictly: an unknown field, a
// second JSON value or an entry [ArtifactList.Check] refuses is an error.
func ParseArtifactList(data []byte) (*ArtifactList, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l ArtifactList
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", ArtifactsFile, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one JSON value", ArtifactsFile)
	}
	if l.Artifacts == nil {
		return nil, fmt.Errorf("%s: no artifacts array", ArtifactsFile)
	}
	if err := l.Check(); err != nil {
		return nil, err
	}
	return &l, nil
}

// ReadArtifactList reads dir/artifacts.json.
func ReadArtifactList(dir string) (*ArtifactList, error) {
	f, err := os.Open(filepath.Join(dir, ArtifactsFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxListSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, ArtifactsFile), err)
	}
	if len(data) > maxListSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", filepath.Join(dir, ArtifactsFile), maxListSize)
	}
	return ParseArtifactList(data)
}

// ReadManifest reads dir/manifest.json and checks it is an mkrelease
// manifest.
func ReadManifest(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("%s is not an mkrelease release folder: %w", dir, err)
	}
	return ParseManifest(data, filepath.Join(dir, ManifestFile))
}

// ParseManifest decodes a manifest's bytes (read from where, for the
// message).
func ParseManifest(data []byte, where string) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: not an mkrelease manifest (schema %q)", where, m.Schema)
	}
	return &m, nil
}
