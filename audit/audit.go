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
// and tags, or either is py3-none-any); the SBOM
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
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/sbom"
	"github.com/mkrelease/mkrelease/wheel"
)

// Finding is one problem, naming the check, the file or member at fault
// and, where the check compares values, what was wanted and what was
// found: the findings every checker reports ([finding.Finding]).
type Finding = finding.Finding

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
			// Its subjects are the files beside it.
			var rel *dist.Release
			if rel, err = dist.Open(ctx, filepath.Dir(p)); err == nil {
				it := newItem(p, "provenance")
				pf := checkProvenance(rel, o)
				for _, c := range pf.Checks {
					it.check(c.Name, c.Findings...)
				}
				it.Warnings = append(it.Warnings, pf.Warnings()...)
				items = []Item{it.Item}
			}
		case c.Kind == dist.KindWheel || dist.ClaimsWheel(base):
			items = []Item{Wheel(p)}
		case c.Kind == dist.KindBundle:
			var it Item
			it, _, err = Bundle(ctx, p)
			items = []Item{it}
		case c.Kind == dist.KindSidecar:
			items = []Item{Sidecar(ctx, p)}
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
	for i := range findings {
		findings[i].Check = name
	}
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
	it, facts, err := bundleAudit(ctx, path, dist.Artifact{})
	return it, facts.Members, err
}

// bundleAudit extracts and checks the bundle at path once. known, when
// its digest is set, is the bundle as its folder was loaded: its sidecar
// is compared with that digest instead of hashing the bundle again.
func bundleAudit(ctx context.Context, path string, known dist.Artifact) (Item, BundleFacts, error) {
	it := newItem(path, "bundle")
	facts := BundleFacts{Members: map[string]string{}}
	o, r, err := bundle.OpenWith(ctx, path, bundle.OpenOptions{SHA256: known.SHA256, Size: known.Size})
	if err != nil {
		return it.Item, facts, err
	}
	defer o.Close()
	by := map[string][]Finding{}
	for _, f := range r.Findings {
		by[f.Check] = append(by[f.Check], f)
	}
	for _, c := range r.Checks {
		it.check(c, by[c]...)
	}
	it.Warnings = r.Warnings
	for p, sha := range o.Sums { // set when the bundle's SHA256SUMS verified
		facts.Members[p] = sha
	}
	facts.OK = r.OK()
	return it.Item, facts, nil
}

// Sidecar audits a FILE.sha256 against FILE.
func Sidecar(ctx context.Context, path string) Item {
	it := newItem(path, "sidecar")
	r, err := dist.VerifySidecar(ctx, path)
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
		out = append(out, Finding{File: list, Member: f.File, Want: f.Want, Got: f.Got, Msg: checksum.Describe(f)})
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

// Folder is the audit of a loaded release folder: the items verify
// prints (the folder's own checks first, then each bundle, wheel and
// evidence archive), and the typed facts a policy gate builds its input
// from, so that nothing is checked twice.
type Folder struct {
	Items []Item
	// Bundles are the facts of each bundle, by file name.
	Bundles map[string]BundleFacts
	// Provenance is what checking the signed provenance established.
	Provenance ProvenanceFacts
	// Evidence are the checks of each evidence archive, by file name.
	Evidence map[string]*runner.Report
}

// BundleFacts is what checking one bundle established.
type BundleFacts struct {
	// OK says every check of the bundle held.
	OK bool
	// Members are the digests its SHA256SUMS records, by path inside the
	// bundle (set when that list verified).
	Members map[string]string
}

// Wheels returns the digest of every wheel of a bundle that checked out
// (the pair under wheels/ and the closure under dependencies/), by file
// name: exactly the wheels evidence for its target must have been run on.
// It is nil for a bundle that did not check out.
func (b BundleFacts) Wheels() map[string]string {
	if !b.OK {
		return nil
	}
	out := map[string]string{}
	for p, sha := range b.Members {
		dir, name := path.Split(p)
		if (dir == "wheels/" || dir == "dependencies/") && dist.ClaimsWheel(name) {
			out[name] = sha
		}
	}
	return out
}

// Dist audits an output folder: the folder's own checks first, then each
// wheel and bundle in it.
func Dist(ctx context.Context, dir string, o Options) ([]Item, error) {
	rel, err := dist.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	f, err := Release(ctx, rel, o)
	if err != nil {
		return nil, err
	}
	return f.Items, nil
}

// Release audits a release folder loaded with [dist.Open]. Every file was
// hashed once when it was loaded: the checks compare those digests with
// what SHA256SUMS, the sidecars, manifest.json, the SBOM and the provenance
// record. Each bundle is extracted once, and its wheels are what the
// evidence beside it is checked against.
func Release(ctx context.Context, rel *dist.Release, o Options) (*Folder, error) {
	dir := rel.Dir
	it := newItem(dir, "dist")
	folder := &Folder{Bundles: map[string]BundleFacts{}, Evidence: map[string]*runner.Report{}}
	var sub []Item
	known := map[string]string{}
	for _, a := range rel.Files(nil) {
		known[a.Path] = a.SHA256
	}

	sums, err := checksum.ReadSums(filepath.Join(dir, dist.ChecksumsFile))
	if err != nil {
		it.check("sha256sums", Finding{File: dist.ChecksumsFile, Msg: err.Error()})
	} else {
		r, err := checksum.Verify(ctx, dir, sums, checksum.VerifyOptions{Unlisted: true, Ignore: unlistedOK, Known: known})
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
		if art, ok := dist.SidecarOf(name); ok {
			if !files[art] {
				sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: "sidecar of " + art + ", which is missing"})
				continue
			}
			r, err := checkSidecar(ctx, rel, name, art)
			if err != nil {
				sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: err.Error()})
			} else {
				sidecarFindings = append(sidecarFindings, listFindings(name, r)...)
			}
			continue
		}
		if !files[dist.Sidecar(name)] {
			sidecarFindings = append(sidecarFindings, Finding{File: name, Msg: "has no " + dist.Sidecar(name) + " sidecar"})
		}
		switch c := rel.Classify(name); {
		case c.Kind == dist.KindEvidence:
			evidences = append(evidences, name)
		case c.Kind == dist.KindWheel || dist.ClaimsWheel(name):
			wheels = append(wheels, name)
		case c.Kind == dist.KindBundle:
			bundles = append(bundles, name)
		case c.Kind == dist.KindOther && rel.Names.Base == "":
			// Without the release's names, a bundle is known by its shape.
			if g, _ := dist.Guess(name); g.Kind == dist.KindBundle {
				bundles = append(bundles, name)
			}
		}
	}
	it.check("sidecars", sidecarFindings...)

	// Bundles once each: their own checks, and the digests inside them for
	// the SBOM check and the evidence.
	inside := map[string]string{} // file name → sha256, dependencies and wheels of every bundle
	for _, b := range bundles {
		a, _ := rel.File(b)
		bi, facts, err := bundleAudit(ctx, filepath.Join(dir, b), a)
		if err != nil {
			return nil, err
		}
		sub = append(sub, bi)
		folder.Bundles[b] = facts
		for p, sha := range facts.Members {
			if strings.HasPrefix(p, "dependencies/") || strings.HasPrefix(p, "wheels/") {
				inside[filepath.Base(p)] = sha
			}
		}
	}
	for _, w := range wheels {
		sub = append(sub, Wheel(filepath.Join(dir, w)))
	}
	it.check("pairs", pairFindings(dir, wheels)...)
	it.check("sbom", sbomFindings(rel, inside)...)
	it.check("manifest", manifestFindings(rel)...)
	folder.Provenance = checkProvenance(rel, o)
	for _, c := range folder.Provenance.Checks {
		it.check(c.Name, c.Findings...)
	}
	it.Warnings = append(it.Warnings, folder.Provenance.Warnings()...)
	for _, e := range evidences {
		c := rel.Classify(e)
		// The evidence must be for exactly the wheels of its target's
		// bundle. Without a bundle that checks out (its problems are its
		// own findings) nothing shows which wheels it is for: the
		// identity check says so.
		var ws map[string]string
		if facts, ok := folder.Bundles[rel.Names.Bundle(c.Target)]; ok {
			ws = facts.Wheels()
		}
		a, _ := rel.File(e)
		ei, rep, err := evidenceAudit(ctx, filepath.Join(dir, e), a, ws, o)
		if err != nil {
			return nil, err
		}
		sub = append(sub, ei)
		folder.Evidence[e] = rep
	}
	folder.Items = append([]Item{it.Item}, sub...)
	return folder, nil
}

// checkSidecar checks the sidecar name of the folder's file art against
// the digest art was loaded with (hashing it when the folder holds it as
// something other than a regular file).
func checkSidecar(ctx context.Context, rel *dist.Release, name, art string) (checksum.Report, error) {
	a, _ := rel.File(art) // no digest when the folder holds art as no regular file
	return dist.CheckSidecar(ctx, filepath.Join(rel.Dir, name), a.SHA256)
}

// pairFindings checks the release pairs among the folder's wheels: a wheel
// that pins another wheel of the folder exactly (NAME==VERSION) must find it
// at that version with the same python, abi and platform tags, or find it
// pure when either is (py3-none-any pairs with the wheel of any platform).
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
				sameTags := b.fn.Python == a.fn.Python && b.fn.ABI == a.fn.ABI && b.fn.Platform == a.fn.Platform
				if pyname.Normalize(b.md.Name) == req.NormalizedName() && b.md.Version == want &&
					(sameTags || a.fn.Pure() || b.fn.Pure()) {
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

// sbomFindings checks every wheel checksum of the SBOMs (SPDX and
// CycloneDX) against the file it names: a wheel of the folder, or a file
// inside a bundle.
func sbomFindings(rel *dist.Release, inside map[string]string) []Finding {
	dir := rel.Dir
	var out []Finding
	// check compares one wheel an SBOM names with the file.
	check := func(what, doc, name, file, sha string) {
		got := ""
		if a, ok := rel.File(file); ok {
			got = a.SHA256
		} else if s, ok := inside[file]; ok {
			got = s
		} else {
			out = append(out, Finding{File: doc, Msg: fmt.Sprintf("package %s names %s, which is neither in the folder nor in a bundle", name, file)})
			return
		}
		if got != sha {
			out = append(out, Finding{File: file, Msg: fmt.Sprintf("%s records sha256 %s, the file has %s", what, sha, got)})
		}
	}
	read := func(kind dist.Kind, missing string) map[string][]byte {
		docs := map[string][]byte{}
		files := rel.Files(dist.And(dist.ByKind(kind), dist.TopLevel()))
		if len(files) == 0 {
			out = append(out, Finding{Msg: missing})
		}
		for _, a := range files {
			data, err := os.ReadFile(filepath.Join(dir, a.Path))
			if err != nil {
				out = append(out, Finding{File: a.Path, Msg: err.Error()})
				continue
			}
			docs[a.Path] = data
		}
		return docs
	}
	spdx := read(dist.KindSBOM, "no SBOM (NAME-VERSION.spdx.json) in the folder")
	for _, d := range slices.Sorted(maps.Keys(spdx)) {
		data := spdx[d]
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
			if isWheel && p.FileName != "" && p.SHA256 != "" {
				check("the SBOM", d, p.Name, p.FileName, p.SHA256)
			}
		}
	}
	cdx := read(dist.KindCycloneDX, "no CycloneDX SBOM (NAME-VERSION.cdx.json) in the folder")
	for _, d := range slices.Sorted(maps.Keys(cdx)) {
		data := cdx[d]
		s, err := sbom.ParseCycloneDX(data)
		if err != nil {
			out = append(out, Finding{File: d, Msg: err.Error()})
			continue
		}
		if err := sbom.CheckSerialNumber(data); err != nil {
			out = append(out, Finding{File: d, Msg: err.Error()})
		}
		for _, c := range s.Components {
			if c.FileName == "" {
				continue
			}
			if c.SHA256 == "" {
				out = append(out, Finding{File: d, Msg: fmt.Sprintf("component %s (%s) has no SHA-256 hash", c.Ref, c.FileName)})
				continue
			}
			check("the CycloneDX SBOM", d, c.Name, c.FileName, c.SHA256)
		}
	}
	return out
}

// manifestFindings checks the digests manifest.json records against the
// files of the folder.
func manifestFindings(rel *dist.Release) []Finding {
	dir := rel.Dir
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
		got, err := "", error(nil)
		if f, ok := rel.File(a.Path); ok {
			got = f.SHA256
		} else {
			// Not a file of the folder: say why, as reading it does.
			got, _, err = checksum.File(filepath.Join(dir, filepath.FromSlash(a.Path)))
		}
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
