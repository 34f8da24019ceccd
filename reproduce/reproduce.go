// Package reproduce rebuilds a release from the inputs it records and
// compares every reproducible artifact with the recorded one.
//
// The recorded inputs are the digests of release.toml and release.lock in
// the release's signed provenance (its statement's externalParameters), or,
// when there is none, in its manifest.json. The local files must have those
// digests, or the rebuild is refused, naming the file; everything else the
// build reads is pinned by release.lock, which the build itself verifies.
// The rebuild runs in a fresh temporary output folder with a fresh action
// cache (so nothing cached can hide a difference), for the targets the
// release was built for. The artifacts compared are those SHA256SUMS lists;
// for each that differs the first differing member is named (package
// artdiff), and diffoscope's report is added when it is installed.
package reproduce

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/artdiff"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
)

// Inputs are the digests a release records of its configuration.
type Inputs struct {
	ReleaseTOML string `json:"release_toml_sha256"`
	ReleaseLock string `json:"release_lock_sha256"`
	// From says where they were read: the provenance file or manifest.json.
	From    string   `json:"from"`
	Targets []string `json:"targets"`
	// Files are the digests of the other project files manifest.json
	// records (files_sha256), by project-relative path; CheckInputs
	// compares those the configuration is read from (its pyproject.toml
	// files) with the local ones.
	Files map[string]string `json:"-"`
}

// InputError is a local configuration that is not the one the release was
// built from. It maps to exit status 1.
type InputError struct {
	File, Recorded, Local, From string
}

// Error names the file and both digests.
func (e *InputError) Error() string {
	return fmt.Sprintf("%s differs from the one the release was built from: %s records sha256 %s, the local file has %s\n\thint: check out the commit the release was built from, then run reproduce again",
		e.File, e.From, e.Recorded, e.Local)
}

// ExitCode is 1.
func (e *InputError) ExitCode() int { return 1 }

// ReadInputs reads the recorded inputs of the release in the folder dir.
func ReadInputs(dir string) (*Inputs, error) {
	m, err := dist.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	in := &Inputs{ReleaseTOML: m.Config.ReleaseTOML, ReleaseLock: m.Config.ReleaseLock, From: dist.ManifestFile, Files: m.Config.Files}
	for _, t := range m.Targets {
		in.Targets = append(in.Targets, t.Name)
	}
	prov := provenance.Statements(dir)
	if len(prov) == 1 {
		if p, ok := provenanceInputs(prov[0]); ok {
			p.From = filepath.Base(prov[0])
			if len(p.Targets) == 0 {
				p.Targets = in.Targets
			}
			p.Files = in.Files
			return p, nil
		}
	}
	return in, nil
}

// provenanceInputs reads externalParameters from a DSSE envelope without
// checking its signature: reproduce rebuilds and compares bytes; whether the
// provenance is trustworthy is `mkrelease verify`'s question.
func provenanceInputs(path string) (*Inputs, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var env struct{ Payload string }
	if json.Unmarshal(bytes.TrimSpace(data), &env) != nil {
		return nil, false
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, false
	}
	var st struct {
		Predicate struct {
			BuildDefinition struct {
				ExternalParameters struct {
					ReleaseTOML string   `json:"release_toml_sha256"`
					ReleaseLock string   `json:"release_lock_sha256"`
					Targets     []string `json:"targets"`
				} `json:"externalParameters"`
			} `json:"buildDefinition"`
		} `json:"predicate"`
	}
	if json.Unmarshal(payload, &st) != nil {
		return nil, false
	}
	ep := st.Predicate.BuildDefinition.ExternalParameters
	if ep.ReleaseTOML == "" || ep.ReleaseLock == "" {
		return nil, false
	}
	return &Inputs{ReleaseTOML: ep.ReleaseTOML, ReleaseLock: ep.ReleaseLock, Targets: ep.Targets}, true
}

// CheckInputs refuses local configuration files that differ from the
// recorded ones: release.toml, release.lock, and the pyproject.toml files
// release.toml takes metadata from.
func CheckInputs(in *Inputs, cfg *config.Config, l *lock.Lock) error {
	if cfg.SHA256 != in.ReleaseTOML {
		return &InputError{File: cfg.File, Recorded: in.ReleaseTOML, Local: cfg.SHA256, From: in.From}
	}
	if l.SHA256 != in.ReleaseLock {
		return &InputError{File: lock.DefaultFile, Recorded: in.ReleaseLock, Local: l.SHA256, From: in.From}
	}
	for _, f := range cfg.MetadataFiles {
		if rec, ok := in.Files[f.Path]; ok && rec != f.SHA256 {
			return &InputError{File: f.Path, Recorded: rec, Local: f.SHA256, From: dist.ManifestFile}
		}
	}
	return nil
}

// Artifact is the comparison of one artifact.
type Artifact struct {
	Name       string              `json:"name"`
	Recorded   string              `json:"recorded_sha256,omitempty"`
	Rebuilt    string              `json:"rebuilt_sha256,omitempty"`
	Identical  bool                `json:"identical"`
	Difference *artdiff.Difference `json:"difference,omitempty"`
	// Diffoscope is diffoscope's report on the first differing artifact,
	// when it is installed.
	Diffoscope string `json:"diffoscope,omitempty"`
}

// Report is the outcome of a reproduction.
type Report struct {
	Inputs    *Inputs    `json:"inputs"`
	Identical bool       `json:"identical"`
	Artifacts []Artifact `json:"artifacts"`
}

// Compare compares the artifacts SHA256SUMS lists in the recorded and the
// rebuilt folders.
func Compare(ctx context.Context, recorded, rebuilt string) ([]Artifact, error) {
	want, err := checksum.ReadSums(filepath.Join(recorded, dist.ChecksumsFile))
	if err != nil {
		return nil, err
	}
	got, err := checksum.ReadSums(filepath.Join(rebuilt, dist.ChecksumsFile))
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, s := range want {
		names[s.Name] = true
	}
	for _, s := range got {
		names[s.Name] = true
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out []Artifact
	diffoscoped := false
	for _, n := range sorted {
		a := Artifact{Name: n}
		a.Recorded, _ = want.Lookup(n)
		a.Rebuilt, _ = got.Lookup(n)
		switch {
		case a.Recorded == "":
			a.Difference = &artdiff.Difference{Artifact: n, What: "extra in rebuilt", Detail: "the rebuild writes an artifact the release does not have"}
		case a.Rebuilt == "":
			a.Difference = &artdiff.Difference{Artifact: n, What: "missing in rebuilt", Detail: "the rebuild does not write this artifact"}
		case a.Recorded == a.Rebuilt:
			a.Identical = true
		default:
			d, err := artdiff.CompareContext(ctx, n, filepath.Join(recorded, filepath.FromSlash(n)), filepath.Join(rebuilt, filepath.FromSlash(n)))
			if err != nil {
				return nil, err
			}
			if d == nil {
				// The recorded SHA256SUMS is not true to its folder.
				d = &artdiff.Difference{Artifact: n, What: "content", Detail: "the files are identical but the recorded SHA256SUMS says otherwise: the release folder was altered; run mkrelease verify on it"}
			}
			a.Difference = d
			if !diffoscoped {
				diffoscoped = true
				if rep, ok, _ := artdiff.Diffoscope(ctx, filepath.Join(recorded, filepath.FromSlash(n)), filepath.Join(rebuilt, filepath.FromSlash(n)), 64<<10); ok {
					a.Diffoscope = rep
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

// Summary renders a diffoscope report shortly, for terminals.
func Summary(report string) string { return firstLines(report, 40) }
