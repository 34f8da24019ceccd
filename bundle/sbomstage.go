package bundle

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/spdxexpr"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/sbom"
)

// SBOMStage writes the release's SBOM, as SPDX 2.3
// (NAME-VERSION.spdx.json) and as CycloneDX 1.6 (NAME-VERSION.cdx.json),
// both encoded from one model of the same facts: the release, each
// target's wheels and closure, the pinned sources, the overlays and the
// toolchains. Each bundle carries the documents of its own target instead
// ([TargetSBOM]).
type SBOMStage struct {
	// Closures are the targets' closures (the closure stage fills them).
	Closures Closures
}

// String names the stage.
func (SBOMStage) String() string { return "sbom" }

// Skip skips the stage when there are no wheels.
func (SBOMStage) Skip(r *release.Release) (string, bool) { return skipWithoutWheels(r) }

// Run builds and writes the document.
func (s SBOMStage) Run(_ context.Context, r *release.Release) error {
	doc, err := SBOM(r, s.Closures)
	if err != nil {
		return err
	}
	return WriteSBOM(r, doc)
}

// WriteSBOM writes the release's SPDX and CycloneDX documents of doc into
// the staging folder and records them. The build describes its own
// targets ([SBOM]); merge joins the descriptions its parts carry.
func WriteSBOM(r *release.Release, doc sbom.Release) error {
	spdx, cdx, err := documents(doc)
	if err != nil {
		return fmt.Errorf("SBOM: %w", err)
	}
	names := dist.NamesOf(r.Config.Project.NormalizedName, r.Config.Project.Version)
	for _, f := range []struct {
		kind dist.Kind
		name string
		data []byte
	}{{dist.KindSBOM, names.SBOM(), spdx}, {dist.KindCycloneDX, names.CycloneDX(), cdx}} {
		if err := atomicfile.WriteFile(filepath.Join(r.Stage, f.name), f.data, 0o644); err != nil {
			return err
		}
		r.Artifacts.Add(dist.Artifact{Kind: f.kind, Path: f.name, SHA256: checksum.Bytes(f.data), Size: int64(len(f.data))})
	}
	return nil
}

// documents are the SPDX and CycloneDX documents of doc, encoded from one
// model.
func documents(doc sbom.Release) (spdx, cdx []byte, err error) {
	m, err := sbom.Build(doc)
	if err != nil {
		return nil, nil, err
	}
	if spdx, err = m.SPDX(); err != nil {
		return nil, nil, err
	}
	if cdx, err = m.CycloneDX(); err != nil {
		return nil, nil, err
	}
	return spdx, cdx, nil
}

// SBOM assembles the SBOM's description of the release: every target r
// builds (with its closure in cs), every source and overlay.
func SBOM(r *release.Release, cs Closures) (sbom.Release, error) {
	return describe(r, cs, "", func(string) bool { return true })
}

// TargetSBOM assembles the description of one target, for the SBOM inside
// its bundle: its wheels and dependency closure, the sources its build
// reads ([config.Config.SourcesOf]) with their overlays, and the
// toolchains of every target and of this one. Nothing in it depends on
// the other targets, so it is the same whether the release builds the
// target alone or with others.
func TargetSBOM(r *release.Release, cs Closures, target string) (sbom.Release, error) {
	reads := r.Config.SourcesOf(target)
	return describe(r, cs, target, func(source string) bool { return reads[source] })
}

// targetSBOM is the SPDX and CycloneDX documents of target, as its bundle
// carries them.
func targetSBOM(r *release.Release, cs Closures, target string) (spdx, cdx []byte, err error) {
	doc, err := TargetSBOM(r, cs, target)
	if err != nil {
		return nil, nil, err
	}
	if spdx, cdx, err = documents(doc); err != nil {
		return nil, nil, fmt.Errorf("SBOM of target %s: %w", target, err)
	}
	return spdx, cdx, nil
}

// describe assembles the document of target ("" for the release: every
// target r builds), with the sources (and their overlays) keep accepts and
// the closures in cs.
func describe(r *release.Release, cs Closures, target string, keep func(source string) bool) (sbom.Release, error) {
	c := r.Config
	doc := sbom.Release{
		Name: c.Project.NormalizedName, Version: c.Project.Version, License: c.Project.License,
		Supplier: supplier(c), Created: r.Epoch, Tool: "mkrelease-" + release.ToolVersion, Target: target,
	}
	if r.Found == nil {
		return doc, errors.New("SBOM: no sources, overlays or toolchains were found (the sources stage has not run)")
	}
	sourceSupplier := map[string]string{}
	for _, s := range c.Sources {
		sourceSupplier[s.Name] = s.Supplier
	}
	for _, s := range r.Found.Sources {
		if !keep(s.Name) {
			continue
		}
		doc.Sources = append(doc.Sources, sbom.Source{Source: s, Supplier: sourceSupplier[s.Name]})
	}
	for _, o := range r.Found.Overlays {
		if !keep(o.Source) {
			continue
		}
		so := sbom.Overlay{Name: o.Name, Source: o.Source, Path: o.Path, Result: o.Result}
		if sha, ok := strings.CutPrefix(o.Digest, "sha256:"); ok {
			data, err := projectfile.ReadFile(c.Dir, o.Path, projectfile.MaxText)
			if err != nil {
				return doc, fmt.Errorf("SBOM: overlay %s: %w", o.Name, err)
			}
			if got := checksum.Bytes(data); got != sha {
				return doc, fmt.Errorf("SBOM: overlay %s: %s changed during the build (sha256 %s, %s when the sources stage read it)", o.Name, o.Path, got, sha)
			}
			s1 := sha1.Sum(data)
			so.SHA256, so.SHA1 = sha, hex.EncodeToString(s1[:])
		} else {
			so.Tree = o.Digest
		}
		doc.Overlays = append(doc.Overlays, so)
	}
	toolSupplier := map[string]string{}
	for _, t := range c.Toolchains {
		toolSupplier[t.Name] = t.Supplier
	}
	for _, t := range r.Found.Toolchains {
		if target != "" && t.Target != "" && t.Target != target {
			continue
		}
		doc.Toolchains = append(doc.Toolchains, sbom.Toolchain{Name: t.Name, Target: t.Target, Version: t.Version, Supplier: toolSupplier[t.Name]})
	}
	for _, t := range r.Targets {
		if target != "" && t.Name != target {
			continue
		}
		st := sbom.Target{Name: t.Name}
		cl := cs[t.Name]
		if cl == nil {
			if target != "" {
				doc.Targets = append(doc.Targets, st) // a target with no wheels: its toolchains and sources
			}
			continue
		}
		for _, p := range cl.Own {
			st.Wheels = append(st.Wheels, packages(p, c.Project.License, supplier(c))...)
		}
		for _, p := range cl.Packages {
			st.Dependencies = append(st.Dependencies, packages(p, "", "")...)
		}
		doc.Targets = append(doc.Targets, st)
	}
	return doc, nil
}

// packages describes each wheel file of a resolved package.
func packages(p deps.Resolved, license, sup string) []sbom.Package {
	if l := declaredLicense(p.License); l != "" {
		license = l
	}
	if s := people(p.People); s != "" {
		sup = s
	}
	var out []sbom.Package
	for _, f := range p.Files {
		loc := "NOASSERTION"
		if u := downloadURL(f); u != "" {
			loc = u
		}
		out = append(out, sbom.Package{Name: p.Name, Version: p.Version, FileName: f.Name, SHA256: f.SHA256,
			License: license, Supplier: sup, DownloadLocation: loc, DependsOn: p.Requires})
	}
	return out
}

// declaredLicense is the SPDX expression a wheel declares: its
// License-Expression, else a License field that is itself a valid
// expression, else the one its license classifiers name; "" when unknown.
func declaredLicense(l deps.License) string {
	if l.Expression != "" && spdxexpr.Check(l.Expression) == nil {
		return l.Expression
	}
	if t := strings.TrimSpace(l.Text); t != "" && !strings.ContainsAny(t, "\n") && spdxexpr.Check(t) == nil && len(t) < 64 {
		return t
	}
	var ids []string
	for _, cl := range l.Classifiers {
		if id, ok := classifierLicense[cl]; ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 1 {
		return ids[0]
	}
	if len(ids) > 1 {
		return "(" + strings.Join(ids, " OR ") + ")"
	}
	return ""
}

// classifierLicense maps the common trove license classifiers to SPDX ids.
var classifierLicense = map[string]string{
	"License :: OSI Approved :: MIT License":                                   "MIT",
	"License :: OSI Approved :: Apache Software License":                       "Apache-2.0",
	"License :: OSI Approved :: BSD License":                                   "BSD-3-Clause",
	"License :: OSI Approved :: ISC License (ISCL)":                            "ISC",
	"License :: OSI Approved :: Python Software Foundation License":            "PSF-2.0",
	"License :: OSI Approved :: Mozilla Public License 2.0 (MPL 2.0)":          "MPL-2.0",
	"License :: OSI Approved :: GNU General Public License v3 (GPLv3)":         "GPL-3.0-only",
	"License :: OSI Approved :: GNU General Public License v2 (GPLv2)":         "GPL-2.0-only",
	"License :: OSI Approved :: GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
	"License :: OSI Approved :: The Unlicense (Unlicense)":                     "Unlicense",
	"License :: OSI Approved :: zlib/libpng License":                           "Zlib",
}

// people renders a wheel's author as an SPDX supplier.
func people(p deps.People) string {
	name, email := p.Author, p.AuthorEmail
	if name == "" && email == "" {
		name, email = p.Maintainer, p.MaintainerEmail
	}
	// "Name <email>, Other <email>": keep the first.
	if n, e, ok := strings.Cut(email, "<"); ok {
		if name == "" {
			name = strings.TrimSpace(n)
		}
		email, _, _ = strings.Cut(e, ">")
	}
	email, _, _ = strings.Cut(email, ",")
	name, _, _ = strings.Cut(name, ",")
	name, email = clean(name), clean(email)
	switch {
	case name == "" && email == "":
		return ""
	case name == "":
		return "Person: " + email
	case email == "":
		return "Person: " + name
	}
	return "Person: " + name + " (" + email + ")"
}

func clean(s string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '(' || r == ')' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s))
}

// supplier is the release's SBOM supplier: [project] supplier, else the
// first author as a Person, else "" (NOASSERTION). Core metadata does not
// say whether an author is a person or an organisation; a team or company
// says so with [project] supplier = "Organization: …" (nothing is guessed
// from the name).
func supplier(c *config.Config) string {
	if c.Project.Supplier != "" {
		return c.Project.Supplier
	}
	if len(c.Project.Authors) == 0 {
		return ""
	}
	a := c.Project.Authors[0]
	switch {
	case a.Name != "" && a.Email != "":
		return "Person: " + a.Name + " (" + a.Email + ")"
	case a.Name != "":
		return "Person: " + a.Name
	}
	return "Person: " + a.Email
}
