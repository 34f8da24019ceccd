// Package audit checks release artifacts the way an auditor would, without
// installing anything: a wheel, an offline bundle, a .sha256 sidecar, a
// SHA256SUMS file, or a whole output folder. Every check runs and reports
// its findings, each naming the file (or member) at fault; nothing stops at
// the first problem.
//
// For an output folder the checks are: SHA256SUMS matches every file it
// lists and no file is missing from it (sidecars and SHA256SUMS itself
// aside); every top-level artifact has a sidecar and every sidecar
// matches; the signed provenance verifies with a trusted key, names exactly
// the folder's wheels, bundles and SBOM, and (given release.lock) records
// the locked sources and overlays; every wheel and every bundle passes its
// own checks (for a bundle, see bundle.Open: among them, manifest.json,
// requirements.txt, pylock.toml, install.sh and INSTALL.md exactly as
// mkrelease writes them for the bundle's wheels); each release
// pair is complete (a wheel's exact pin on another finds it, same version
// and tags); the SBOM
// parses and every package checksum in it equals the file it describes
// (the release's wheels in the folder, the dependencies inside the
// bundles); manifest.json records the digests the files have.
package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/sbom"
	"github.com/mkrelease/mkrelease/wheel"
)

// Finding is one problem, naming the file or member at fault.
type Finding struct {
	File string `json:"file,omitempty"`
	Msg  string `json:"message"`
}

// Message is the finding's text.
func (f Finding) Message() string { return f.Msg }

// Check is one check that ran and what it found.
type Check struct {
	Name     string    `json:"check"`
	OK       bool      `json:"ok"`
	Findings []Finding `json:"findings,omitempty"`
}

// Item is one path audited.
type Item struct {
	Path   string  `json:"path"`
	Kind   string  `json:"kind"` // wheel, bundle, sidecar, sha256sums, dist
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
	// Warnings refuse nothing but deserve a look (a bundle without its
	// .sha256 sidecar beside it).
	Warnings []string `json:"warnings,omitempty"`
}

// Report is the audit of every path named.
type Report struct {
	OK    bool   `json:"ok"`
	Items []Item `json:"items"`
}

// UsageError is a path that cannot be audited (missing, or of no known
// kind). It maps to exit status 2.
type UsageError struct{ Msg string }

// Error says what is wrong.
func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2.
func (e *UsageError) ExitCode() int { return 2 }

// Paths audits each path by its kind.
func Paths(ctx context.Context, paths []string, o Options) (*Report, error) {
	rep := &Report{OK: true}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &UsageError{Msg: p + ": no such file or folder"}
			}
			return nil, err
		}
		var items []Item
		base := filepath.Base(p)
		c, names := dist.Guess(base)
		switch {
		case st.IsDir() && IsChannel(p):
			items, err = Channel(ctx, p, o)
		case st.IsDir():
			items, err = Dist(ctx, p, o)
		case c.Kind == dist.KindEvidence || c.Kind == dist.KindEvidenceStatements:
			archive := p // the statements' archive lies beside them
			if c.Kind == dist.KindEvidenceStatements {
				archive = strings.TrimSuffix(p, base) + names.Evidence(c.Target)
			}
			var it Item
			it, err = Evidence(ctx, archive, o)
			items = []Item{it}
		case c.Kind == dist.KindVSA:
			items = []Item{VSA(p, o)}
		case c.Kind == dist.KindProvenance && base == names.Provenance():
			it := newItem(p, "provenance")
			provenanceChecks(it, filepath.Dir(p), o)
			items = []Item{it.Item}
		case c.Kind == dist.KindWheel || dist.ClaimsWheel(base):
			items = []Item{Wheel(p)}
		case c.Kind == dist.KindBundle:
			var it Item
			it, _, err = Bundle(ctx, p)
			items = []Item{it}
		case c.Kind == dist.KindSidecar:
			items = []Item{Sidecar(p)}
		case c.Kind == dist.KindChecksums:
			items = []Item{Sums(ctx, p)}
		default:
			return nil, &UsageError{Msg: p + ": verify reads wheels (.whl), bundles (.tar.gz), provenance and verification summaries (.intoto.jsonl), sidecars (.sha256), SHA256SUMS files and output folders"}
		}
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			rep.OK = rep.OK && it.OK
			rep.Items = append(rep.Items, it)
		}
	}
	return rep, nil
}

// item collects checks in order.
type item struct{ Item }

func newItem(path, kind string) *item { return &item{Item{Path: path, Kind: kind, OK: true}} }

func (it *item) check(name string, findings ...Finding) {
	it.Checks = append(it.Checks, Check{Name: name, OK: len(findings) == 0, Findings: findings})
	it.OK = it.OK && len(findings) == 0
}

// Wheel audits one wheel with the wheel validator.
func Wheel(path string) Item {
	it := newItem(path, "wheel")
	r, err := wheel.Check(path)
	if err != nil {
		it.check("readable", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Check] = append(by[f.Check], Finding{File: f.Member, Msg: f.Msg})
	}
	seen := map[string]bool{}
	for _, c := range r.Checks {
		seen[c] = true
		it.check(c, by[c]...)
	}
	for _, f := range r.Findings { // a finding that stopped its check
		if !seen[f.Check] {
			seen[f.Check] = true
			it.check(f.Check, by[f.Check]...)
		}
	}
	return it.Item
}

// Bundle audits an offline bundle; it also returns the digests its
// SHA256SUMS records (by path inside the bundle) when they verified.
func Bundle(ctx context.Context, path string) (Item, map[string]string, error) {
	it := newItem(path, "bundle")
	o, r, err := bundle.Open(ctx, path)
	if err != nil {
		return it.Item, nil, err
	}
	defer o.Close()
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Check] = append(by[f.Check], Finding{File: f.File, Msg: f.Msg})
	}
	for _, c := range r.Checks {
		it.check(c, by[c]...)
	}
	it.Warnings = r.Warnings
	digests := map[string]string{}
	if o.Root != "" && len(by[bundle.CheckSums]) == 0 {
		if sums, err := checksum.ReadSums(filepath.Join(o.Root, dist.ChecksumsFile)); err == nil {
			for _, s := range sums {
				digests[s.Name] = s.SHA256
			}
		}
	}
	return it.Item, digests, nil
}

// Sidecar audits a FILE.sha256 against FILE.
func Sidecar(path string) Item {
	it := newItem(path, "sidecar")
	r, err := dist.VerifySidecar(path)
	if err != nil {
		it.check("sidecar", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	it.check("sidecar", listFindings(filepath.Base(path), r)...)
	return it.Item
}

// Sums audits a SHA256SUMS file against the files of its folder.
func Sums(ctx context.Context, path string) Item {
	it := newItem(path, "sha256sums")
	s, err := checksum.ReadSums(path)
	if err != nil {
		it.check("sha256sums", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	r, err := checksum.Verify(ctx, filepath.Dir(path), s, checksum.VerifyOptions{})
	if err != nil {
		it.check("sha256sums", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	it.check("sha256sums", listFindings(filepath.Base(path), r)...)
	return it.Item
}

// listFindings reports what a checksum list and the files disagree on,
// naming the list file: a mismatch means either may have been altered.
func listFindings(list string, r checksum.Report) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		out = append(out, Finding{File: list, Msg: f.String()})
	}
	return out
}

// unlistedOK are the files of an output folder SHA256SUMS does not list:
// the sidecars and itself (signed statements join them in a later stage).
// Evidence (never reproducible) is not listed either; it carries its own
// SHA256SUMS and sidecar. The patterns are dist's names of a release "*"
// (and of a target "*"): *.intoto.jsonl, *.sigstore.json and
// *-verifier-evidence-*.
var unlistedOK = []string{dist.ChecksumsFile, dist.Sidecar("*"), anyRelease.Provenance(), anyRelease.ProvenanceBundle(), anyRelease.EvidenceRoot("*")}

// anyRelease spells the names of every release as path.Match patterns.
var anyRelease = dist.Names{Base: "*"}

// Dist audits an output folder: the folder's own checks first, then each
// wheel and bundle in it.
func Dist(ctx context.Context, dir string, o Options) ([]Item, error) {
	it := newItem(dir, "dist")
	var sub []Item

	sumsPath := filepath.Join(dir, dist.ChecksumsFile)
	sums, err := checksum.ReadSums(sumsPath)
	if err != nil {
		it.check("sha256sums", Finding{File: dist.ChecksumsFile, Msg: err.Error()})
	} else {
		r, err := checksum.Verify(ctx, dir, sums, checksum.VerifyOptions{Unlisted: true, Ignore: unlistedOK})
		if err != nil {
			return nil, err
		}
		it.check("sha256sums", listFindings(dist.ChecksumsFile, r)...)
	}

	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var sidecarFindings []Finding
	files := map[string]bool{}
	for _, e := range entries {
		files[e.Name()] = true
	}
	var wheels, bundles, evidences []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == dist.ChecksumsFile {
			continue
		}
		if art, ok := strings.CutSuffix(name, dist.SidecarSuffix); ok {
			if !files[art] {
				sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: "sidecar of " + art + ", which is missing"})
				continue
			}
			r, err := dist.VerifySidecar(filepath.Join(dir, name))
			if err != nil {
				sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: err.Error()})
			} else {
				sidecarFindings = append(sidecarFindings, listFindings(name, r)...)
			}
			continue
		}
		if !files[name+dist.SidecarSuffix] {
			sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: "has no " + name + dist.SidecarSuffix + " sidecar"})
		}
		switch c, _ := dist.Guess(name); {
		case c.Kind == dist.KindEvidence:
			evidences = append(evidences, name)
		case c.Kind == dist.KindWheel || dist.ClaimsWheel(name):
			wheels = append(wheels, name)
		case c.Kind == dist.KindBundle:
			bundles = append(bundles, name)
		}
	}
	it.check("sidecars", sidecarFindings...)

	// Bundles once each: their own checks, and the digests inside them for
	// the SBOM check.
	inside := map[string]string{} // file name → sha256, dependencies and wheels of every bundle
	for _, b := range bundles {
		bi, digests, err := Bundle(ctx, filepath.Join(dir, b))
		if err != nil {
			return nil, err
		}
		sub = append(sub, bi)
		for p, sha := range digests {
			if strings.HasPrefix(p, "dependencies/") || strings.HasPrefix(p, "wheels/") {
				inside[filepath.Base(p)] = sha
			}
		}
	}
	for _, w := range wheels {
		sub = append(sub, Wheel(filepath.Join(dir, w)))
	}
	it.check("pairs", pairFindings(dir, wheels)...)
	it.check("sbom", sbomFindings(dir, entries, inside)...)
	it.check("manifest", manifestFindings(dir)...)
	provenanceChecks(it, dir, o)
	for _, e := range evidences {
		ei, err := Evidence(ctx, filepath.Join(dir, e), o)
		if err != nil {
			return nil, err
		}
		sub = append(sub, ei)
	}
	return append([]Item{it.Item}, sub...), nil
}

// pairFindings checks the release pairs among the folder's wheels: a wheel
// that pins another wheel of the folder exactly (NAME==VERSION) must find it
// at that version with the same python, abi and platform tags.
func pairFindings(dir string, wheels []string) []Finding {
	type info struct {
		fn wheel.Filename
		md *wheel.Metadata
	}
	var all []info
	names := map[string]bool{}
	for _, w := range wheels {
		fn, md, err := wheel.ReadMetadata(filepath.Join(dir, w))
		if err != nil {
			continue // the wheel's own checks report it
		}
		all = append(all, info{fn, md})
		names[pyname.Normalize(md.Name)] = true
	}
	var out []Finding
	for _, a := range all {
		for _, rd := range a.md.RequiresDist {
			req, err := pep508.ParseRequirement(rd)
			if err != nil || !names[req.NormalizedName()] || req.Marker != nil {
				continue
			}
			spec := req.Specifier.String()
			want, exact := strings.CutPrefix(spec, "==")
			if !exact || strings.ContainsAny(want, ",*") {
				continue
			}
			found := false
			for _, b := range all {
				if pyname.Normalize(b.md.Name) == req.NormalizedName() && b.md.Version == want &&
					b.fn.Python == a.fn.Python && b.fn.ABI == a.fn.ABI && b.fn.Platform == a.fn.Platform {
					found = true
				}
			}
			if !found {
				out = append(out, Finding{File: a.fn.String(), Msg: fmt.Sprintf("requires %s, but no %s %s wheel with the tags %s-%s-%s is in the folder",
					rd, req.NormalizedName(), want, a.fn.Python, a.fn.ABI, a.fn.Platform)})
			}
		}
	}
	return out
}

// sbomFindings checks every package checksum of the SBOM against the file
// it names: a wheel of the folder, or a file inside a bundle.
func sbomFindings(dir string, entries []os.DirEntry, inside map[string]string) []Finding {
	var docs []string
	for _, e := range entries {
		if c, _ := dist.Guess(e.Name()); c.Kind == dist.KindSBOM {
			docs = append(docs, e.Name())
		}
	}
	if len(docs) == 0 {
		return []Finding{{Msg: "no SBOM (NAME-VERSION.spdx.json) in the folder"}}
	}
	var out []Finding
	for _, d := range docs {
		data, err := os.ReadFile(filepath.Join(dir, d))
		if err != nil {
			out = append(out, Finding{File: d, Msg: err.Error()})
			continue
		}
		s, err := sbom.Parse(data)
		if err != nil {
			out = append(out, Finding{File: d, Msg: err.Error()})
			continue
		}
		if err := sbom.CheckNamespace(data); err != nil {
			out = append(out, Finding{File: d, Msg: err.Error()})
		}
		for _, p := range s.Packages {
			isWheel := strings.HasPrefix(p.ID, "SPDXRef-Package-wheel-") || strings.HasPrefix(p.ID, "SPDXRef-Package-dependency-")
			if !isWheel || p.FileName == "" || p.SHA256 == "" {
				continue
			}
			got := ""
			if _, err := os.Stat(filepath.Join(dir, p.FileName)); err == nil {
				got, _, _ = checksum.File(filepath.Join(dir, p.FileName))
			} else if sha, ok := inside[p.FileName]; ok {
				got = sha
			} else {
				out = append(out, Finding{File: d, Msg: fmt.Sprintf("package %s names %s, which is neither in the folder nor in a bundle", p.Name, p.FileName)})
				continue
			}
			if got != p.SHA256 {
				out = append(out, Finding{File: p.FileName, Msg: fmt.Sprintf("the SBOM records sha256 %s, the file has %s", p.SHA256, got)})
			}
		}
	}
	return out
}

// manifestFindings checks the digests manifest.json records against the
// files of the folder.
func manifestFindings(dir string) []Finding {
	data, err := os.ReadFile(filepath.Join(dir, dist.ManifestFile))
	if err != nil {
		return []Finding{{File: dist.ManifestFile, Msg: err.Error()}}
	}
	var m dist.Manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Schema != dist.ManifestSchema {
		return []Finding{{File: dist.ManifestFile, Msg: "not an mkrelease manifest"}}
	}
	var out []Finding
	check := func(a dist.ManifestArtifact) {
		got, _, err := checksum.File(filepath.Join(dir, filepath.FromSlash(a.Path)))
		switch {
		case err != nil:
			out = append(out, Finding{File: a.Path, Msg: "recorded in manifest.json but unreadable: " + err.Error()})
		case got != a.SHA256:
			out = append(out, Finding{File: a.Path, Msg: fmt.Sprintf("manifest.json records sha256 %s, the file has %s", a.SHA256, got)})
		}
	}
	for _, t := range m.Targets {
		for _, a := range append(append([]dist.ManifestArtifact(nil), t.Outputs...), t.Wheels...) {
			check(a)
		}
		if t.Bundle != nil {
			check(*t.Bundle)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
