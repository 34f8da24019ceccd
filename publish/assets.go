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

// put makes the file at path the asset a names, in place of the folder's
// file of that name if any.
func (s *selection) put(path string, a channel.Asset) {
	s.paths = slices.DeleteFunc(s.paths, func(p string) bool {
		if filepath.Base(p) == a.Name {
			delete(s.known, p)
			return true
		}
		return false
	})
	s.paths = append(s.paths, path)
	s.known[path] = a
	sort.Slice(s.paths, func(i, j int) bool { return filepath.Base(s.paths[i]) < filepath.Base(s.paths[j]) })
}

// relistSums makes the published SHA256SUMS list name with sha (a file
// publish wrote in place of the folder's), writing the new list into
// staging. A selection without SHA256SUMS is left so (the audit reports
// the folder's missing list).
func (s *selection) relistSums(staging, name, sha string) error {
	i := slices.IndexFunc(s.paths, func(p string) bool { return filepath.Base(p) == dist.ChecksumsFile })
	if i < 0 {
		return nil
	}
	list, err := checksum.ReadSums(s.paths[i])
	if err != nil {
		return nil // the audit reports a list that does not parse
	}
	list = slices.DeleteFunc(list, func(x checksum.Sum) bool { return x.Name == name })
	list = append(list, checksum.Sum{Name: name, SHA256: sha})
	data, err := list.Marshal()
	if err != nil {
		return fmt.Errorf("publish: %s: %w", s.paths[i], err)
	}
	path := filepath.Join(staging, dist.ChecksumsFile)
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("publish: writing %s: %w", path, err)
	}
	s.put(path, channel.Asset{Name: dist.ChecksumsFile, SHA256: checksum.Bytes(data), Size: int64(len(data))})
	return nil
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
// of each bundle, read when the audit extracted it.
func selectAssets(rel *dist.Release, folder *audit.Folder, names dist.Names, targets, skipped []string, staging string) (*selection, error) {
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
		sel.paths = append(sel.paths, rel.Path(a))
		sel.known[rel.Path(a)] = channel.Asset{Name: name, SHA256: a.SHA256, Size: a.Size}
	}
	// The folder's SHA256SUMS also lists files that are not published (the
	// build/ folder, the skipped targets'): publish its lines for the
	// assets only.
	if sums != nil {
		path := rel.Path(*sums)
		if list, err := checksum.ReadSums(path); err == nil {
			var kept checksum.Sums
			for _, s := range list {
				if sel.has(s.Name) {
					kept = append(kept, s)
				}
			}
			if len(kept) < len(list) {
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
