package publish

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
)

// selection is the files of a release folder a publish takes.
type selection struct {
	// release spells the release's file names and classifies them.
	release dist.Names
	// paths are the assets, by path (SHA256SUMS may be a filtered copy in
	// the staging folder), sorted by base name.
	paths []string
	// wheelsOf maps each released target to the wheels of its bundle
	// (file name → sha256); nil when the bundle is missing or does not
	// check out (its audit says why).
	wheelsOf map[string]map[string]string
	// missing maps a released target whose bundle is missing to the
	// bundle's file name.
	missing map[string]string
	// excluded are the folder's files left out with the skipped targets.
	excluded map[string]bool
	// known are the digests the folder was loaded with, by asset path:
	// the channel plans with them instead of hashing the assets again.
	known map[string]channel.Asset
}

func (s *selection) names() []string {
	out := make([]string, len(s.paths))
	for i, p := range s.paths {
		out[i] = filepath.Base(p)
	}
	return out
}

func (s *selection) has(name string) bool {
	return slices.ContainsFunc(s.paths, func(p string) bool { return filepath.Base(p) == name })
}

// staged is a file publish wrote into the staging folder, to publish in
// place of the release folder's file of that name (or beside the folder's
// files when it has none).
type staged struct {
	path  string
	asset channel.Asset
}

// targetOfWheel returns the released target whose bundle holds the wheel.
func (s *selection) targetOfWheel(name string) string {
	var ts []string
	for t, ws := range s.wheelsOf {
		if _, ok := ws[name]; ok {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	return strings.Join(ts, ",")
}

// selectAssets chooses the files of the loaded release folder rel to
// publish (see the package doc), from the facts of its audit: the wheels
// of each bundle, read when the audit extracted it. The files of replace
// are published in place of the folder's files of their names, and the
// published SHA256SUMS (written once, into staging, when it is not the
// folder's) lists their digests.
func selectAssets(rel *dist.Release, folder *audit.Folder, names dist.Names, targets, skipped []string, staging string, replace []staged) (*selection, error) {
	sel := &selection{release: names, wheelsOf: map[string]map[string]string{}, missing: map[string]string{}, excluded: map[string]bool{}, known: map[string]channel.Asset{}}
	keep := map[string]bool{} // wheels a released bundle holds
	for _, t := range targets {
		b := names.Bundle(t)
		if _, ok := rel.File(b); !ok {
			sel.wheelsOf[t] = nil
			sel.missing[t] = b
			continue
		}
		ws := folder.Bundles[b].Wheels()
		sel.wheelsOf[t] = ws
		for w := range ws {
			keep[w] = true
		}
	}
	for _, t := range skipped {
		b := names.Bundle(t)
		sel.excluded[b] = true
		for w := range folder.Bundles[b].Wheels() {
			if !keep[w] {
				sel.excluded[w] = true
			}
		}
	}
	byName, digests := map[string]staged{}, map[string]string{}
	for _, r := range replace {
		byName[r.asset.Name], digests[r.asset.Name] = r, r.asset.SHA256
	}
	add := func(path string, a channel.Asset) {
		if r, ok := byName[a.Name]; ok {
			path, a = r.path, r.asset
			delete(byName, a.Name)
		}
		sel.paths = append(sel.paths, path)
		sel.known[path] = a
	}
	var sums *dist.Artifact
	for _, a := range rel.Files(dist.TopLevel()) {
		name := a.Path
		// A verification summary (any release's) and its sidecar are
		// publish's to write, SHA256SUMS is filtered below.
		if name == dist.ChecksumsFile {
			sums = &a
			continue
		}
		if g, _ := dist.Guess(name); g.Kind == dist.KindVSA || g.Kind == dist.KindSidecar && g.Of == dist.KindVSA {
			continue
		}
		art, _ := dist.SidecarOf(name)
		if c := names.Classify(name); isEvidence(c) && slices.Contains(skipped, c.Target) {
			sel.excluded[name] = true
		}
		if sel.excluded[art] {
			sel.excluded[name] = true
			continue
		}
		if sel.excluded[name] {
			continue
		}
		add(rel.Path(a), channel.Asset{Name: name, SHA256: a.SHA256, Size: a.Size})
	}
	var extra checksum.Sums // replacements the folder has no file of, and its SHA256SUMS no line for
	for _, r := range replace {
		if _, ok := byName[r.asset.Name]; ok {
			add(r.path, r.asset)
			if c, _ := dist.Guess(r.asset.Name); c.Kind.Reproducible() {
				extra = append(extra, checksum.Sum{Name: r.asset.Name, SHA256: r.asset.SHA256})
			}
		}
	}
	// The folder's SHA256SUMS also lists files that are not published (the
	// build/ folder, the skipped targets'): publish its lines for the
	// assets only, with the replacements' digests.
	if sums != nil {
		path := rel.Path(*sums)
		if list, err := checksum.ReadSums(path); err == nil {
			var kept checksum.Sums
			changed := len(extra) > 0
			for _, s := range list {
				if !sel.has(s.Name) {
					changed = true
					continue
				}
				if sha, ok := digests[s.Name]; ok && sha != s.SHA256 {
					s.SHA256, changed = sha, true
				}
				kept = append(kept, s)
			}
			kept = append(kept, extra...)
			if changed {
				path = filepath.Join(staging, dist.ChecksumsFile)
				data, err := kept.Marshal()
				if err != nil {
					return nil, fmt.Errorf("write %s: %w", path, err)
				}
				if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
					return nil, err
				}
				sums.SHA256, sums.Size = checksum.Bytes(data), int64(len(data))
			}
		}
		sel.paths = append(sel.paths, path)
		sel.known[path] = channel.Asset{Name: dist.ChecksumsFile, SHA256: sums.SHA256, Size: sums.Size}
	}
	sort.Slice(sel.paths, func(i, j int) bool { return filepath.Base(sel.paths[i]) < filepath.Base(sel.paths[j]) })
	return sel, nil
}

// kind classifies an asset of release for the policy input, as dist
// spells its kind (wheel, bundle, sbom, provenance, manifest, artifacts,
// notes, sidecar, checksums, other); "" for evidence and its sidecars,
// which have facts of their own.
func kind(release dist.Names, name string) string {
	c := release.Classify(name)
	if isEvidence(c) {
		return ""
	}
	return c.Kind.String()
}

// isEvidence reports whether c is a target's evidence: the archive, its
// signed statements, or the sidecar of either.
func isEvidence(c dist.Class) bool {
	k := c.Kind
	if k == dist.KindSidecar {
		k = c.Of
	}
	return k == dist.KindEvidence || k == dist.KindEvidenceStatements
}

// artifacts turns the audit of dist into the artifacts of the policy
// input: one per asset (evidence aside), each with the findings that name
// it, and its digest from digests (by name). A finding about a file left
// out with a skipped target is dropped; one that names no asset is reported
// on the folder itself.
func artifacts(dir string, audited *audit.Folder, sel *selection, digests map[string]string) []policies.Artifact {
	// The provenance's own checks: the provenance rules report the
	// statement's; the others are reported on the provenance file.
	provenanceCheck := map[string]bool{}
	for _, c := range audited.Provenance.Checks {
		provenanceCheck[c.Name] = true
	}
	by := map[string][]string{}
	var folder []string
	attribute := func(file, text string) {
		switch {
		case file != "" && sel.has(file):
			by[file] = append(by[file], text)
		case file != "" && sel.excluded[file]:
		default:
			folder = append(folder, text)
		}
	}
	for _, it := range audited.Items {
		base := filepath.Base(it.Path)
		for _, c := range it.Checks {
			for _, f := range c.Findings {
				switch it.Kind {
				case "wheel", "bundle":
					text := c.Name + ": " + f.Msg
					if f.File != "" && f.File != base {
						text = c.Name + ": " + f.File + ": " + f.Msg
					}
					attribute(base, text)
				case "dist":
					switch {
					case c.Name == "provenance":
						// the provenance rules report these
					case c.Name == "sha256sums":
						if sel.excluded[f.Member] {
							continue
						}
						attribute(f.File, c.Name+": "+f.Msg)
					default:
						file := f.File
						if provenanceCheck[c.Name] && !sel.has(file) {
							file = provenanceFile(sel)
						}
						attribute(file, c.Name+": "+f.Msg)
					}
				}
			}
		}
	}
	var out []policies.Artifact
	for _, p := range sel.paths {
		name := filepath.Base(p)
		c := sel.release.Classify(name)
		if isEvidence(c) {
			continue
		}
		a := policies.Artifact{Name: name, Kind: c.Kind.String(), Findings: by[name]}
		switch c.Kind {
		case dist.KindWheel:
			a.Target = sel.targetOfWheel(name)
		case dist.KindBundle:
			if _, released := sel.wheelsOf[c.Target]; released {
				a.Target = c.Target
			}
		}
		a.SHA256 = digests[name]
		a.Verified = len(a.Findings) == 0
		out = append(out, a)
	}
	for t, name := range sel.missing {
		out = append(out, policies.Artifact{Name: name, Kind: dist.KindBundle.String(), Target: t, Findings: []string{"missing from " + dir}})
	}
	if len(folder) > 0 {
		out = append(out, policies.Artifact{Name: filepath.Base(dir) + "/", Kind: "folder", Findings: folder})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// provenanceFile is the asset a provenance finding without a file of its
// own is reported on.
func provenanceFile(sel *selection) string {
	if n := sel.release.Provenance(); sel.has(n) {
		return n
	}
	return ""
}

func findingTexts(fs []audit.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		if f.File != "" {
			out = append(out, f.File+": "+f.Msg)
		} else {
			out = append(out, f.Msg)
		}
	}
	return out
}
