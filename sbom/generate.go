package sbom

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
	"github.com/spdx/tools-golang/spdx/v2/v2_3"

	"github.com/mkrelease/mkrelease/internal/pin"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/spdxexpr"
	"github.com/mkrelease/mkrelease/wheel"
)

// NamespacePrefix starts every documentNamespace Generate writes.
const NamespacePrefix = "https://mkrelease.dev/spdx/"

const (
	documentID = common.ElementID("DOCUMENT")
	zeroDigest = "0000000000000000000000000000000000000000000000000000000000000000"
)

// Generate returns the SPDX 2.3 JSON document of r: deterministic (the order
// of r's slices does not matter), with a trailing newline, and with the
// content-derived namespace the package documentation defines. It refuses
// an incomplete or inconsistent r with every problem found, each an *Error.
// It is Build, then [BOM.SPDX].
func Generate(r Release) ([]byte, error) {
	m, err := Build(r)
	if err != nil {
		return nil, err
	}
	return m.SPDX()
}

// SPDX returns the SPDX 2.3 JSON document of m: deterministic, with a
// trailing newline, and with the content-derived namespace the package
// documentation defines.
func (m *BOM) SPDX() ([]byte, error) {
	prefix := NamespacePrefix + idPart(m.name) + "-"
	draft, err := render(m.spdxDocument(prefix + zeroDigest))
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(draft)
	return render(m.spdxDocument(prefix + hex.EncodeToString(sum[:])))
}

// documentName is NAME-VERSION for the release's document and
// NAME-VERSION-TARGET for one target's.
func documentName(r Release) string {
	if r.Target != "" {
		return r.Name + "-" + r.Version + "-" + r.Target
	}
	return r.Name + "-" + r.Version
}

// render writes doc with tools-golang's JSON writer: two-space indent, no
// HTML escaping, the encoder's trailing newline.
func render(doc *v2_3.Document) ([]byte, error) {
	var buf bytes.Buffer
	if err := spdxjson.Write(doc, &buf, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		return nil, fmt.Errorf("sbom: write SPDX JSON: %w", err)
	}
	return buf.Bytes(), nil
}

type relKey struct {
	a   common.ElementID
	typ string
	b   common.ElementID
}

type builder struct {
	m       *BOM
	release common.ElementID
	ids     map[common.ElementID]string // → the field that defined it
	rels    map[relKey]string           // → comment
	errs    []error
	// shared holds the own wheel files (name, file name and sha256) that
	// several targets hold: a pure-Python wheel, one package for all of
	// them; its id once made.
	shared map[string]common.ElementID
}

func (b *builder) fail(field, format string, args ...any) {
	b.errs = append(b.errs, &Error{Field: field, Msg: fmt.Sprintf(format, args...)})
}

// claim registers id for the element at field; false when another element
// already has it.
func (b *builder) claim(id common.ElementID, field string) bool {
	if other, ok := b.ids[id]; ok {
		b.fail(field, "SPDX identifier SPDXRef-%s is also that of %s (names coincide once sanitised to [A-Za-z0-9.-]); rename one", id, other)
		return false
	}
	b.ids[id] = field
	return true
}

func (b *builder) relate(a common.ElementID, typ string, c common.ElementID, comment string) {
	k := relKey{a, typ, c}
	if _, ok := b.rels[k]; !ok {
		b.rels[k] = comment
	}
}

func (b *builder) add(e element) { b.m.elements = append(b.m.elements, e) }

// label names the i-th element of a list in a field path: by name when it
// has one, else by index.
func label(list, name string, i int) string {
	if name != "" {
		return fmt.Sprintf("%s[%q]", list, name)
	}
	return fmt.Sprintf("%s[%d]", list, i)
}

// member names the member key of the element at field in a field path
// ("sources[0]" and "sha256" → "sources[0].sha256").
func member(field, key string) string { return field + "." + key }

// Build checks r and makes the model both documents are written from. It
// refuses an incomplete or inconsistent r with every problem found, each an
// *Error.
func Build(r Release) (*BOM, error) {
	b := &builder{
		ids:  map[common.ElementID]string{documentID: "the document"},
		rels: map[relKey]string{},
	}
	if !singleLine(r.Name) || !singleLine(r.Version) {
		b.fail("name/version", "the release's name and version are required (got %q %q)", r.Name, r.Version)
	}
	if !singleLine(r.Tool) {
		b.fail("tool", "the generating tool and its version are required, e.g. \"mkrelease-0.1.0-dev\" (the SBOM's author, an NTIA minimum element)")
	}
	if r.Created <= 0 {
		b.fail("created", "%d is not a SOURCE_DATE_EPOCH: pass the release's epoch in seconds (never the wall clock)", r.Created)
	}
	scope := "the release " + r.Name + " " + r.Version
	releaseComment := "The release: it CONTAINS its wheels for every target and is GENERATED_FROM its pinned sources and overlays."
	if r.Target != "" {
		b.scope(r)
		scope = "target " + r.Target + " of the release " + r.Name + " " + r.Version +
			" (its wheels, their dependency closure, and the sources, overlays and toolchains that built them)"
		releaseComment = "The release as target " + r.Target + " ships it: it CONTAINS its wheels for that target and is GENERATED_FROM the pinned sources and overlays they were built from."
	}
	license := b.license("license", r.License, noAssertion)
	supplier := b.supplier("supplier", r.Supplier)

	ownSupplier := "" // what the release's own wheels inherit
	if supplier.typ != "" {
		ownSupplier = supplier.typ + ": " + supplier.who
	}
	b.release = common.ElementID(joinID("Package", "release", r.Name, r.Version))
	b.m = &BOM{
		name:     documentName(r),
		scope:    scope,
		tool:     strings.TrimSpace(r.Tool),
		created:  r.Created,
		supplier: supplier,
		release:  b.release,
	}
	b.claim(b.release, "the release")
	b.add(element{
		id:       b.release,
		kind:     kindRelease,
		name:     r.Name,
		version:  r.Version,
		supplier: supplier,
		license:  license,
		comment:  releaseComment,
	})
	b.relate(documentID, common.TypeRelationshipDescribe, b.release, "")

	b.shared = sharedWheels(r.Targets)
	targets := map[string][]common.ElementID{} // target → its own wheels
	for i, t := range r.Targets {
		field := label("targets", t.Name, i)
		if !singleLine(t.Name) {
			b.fail(field, "a target needs a name")
			continue
		}
		if _, dup := targets[t.Name]; dup {
			b.fail(field, "target %q appears twice", t.Name)
			continue
		}
		targets[t.Name] = b.target(field, t, license, ownSupplier)
	}

	sources := map[string]common.ElementID{} // "" for a source refused
	for i, s := range r.Sources {
		field := label("sources", s.Name, i)
		if _, dup := sources[s.Name]; dup {
			b.fail(field, "source %q appears twice", s.Name)
			continue
		}
		id, _ := b.source(field, s)
		sources[s.Name] = id
		if id != "" {
			b.relate(b.release, common.TypeRelationshipGeneratedFrom, id, "")
		}
	}
	for i, o := range r.Overlays {
		b.overlay(label("overlays", o.Name, i), o, sources)
	}
	for i, tc := range r.Toolchains {
		b.toolchain(label("toolchains", tc.Name, i), tc, targets)
	}

	if len(b.errs) > 0 {
		return nil, errors.Join(b.errs...)
	}
	b.finish()
	return b.m, nil
}

// scope checks the target of a one-target document: a name, and the
// document's one target.
func (b *builder) scope(r Release) {
	if !singleLine(r.Target) {
		b.fail("target", "%q: the target a one-target document describes needs a name", r.Target)
		return
	}
	names := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		names[i] = t.Name
	}
	if len(names) != 1 || names[0] != r.Target {
		b.fail("target", "the document of target %q describes that target alone, got targets [%s]: pass only its Target", r.Target, strings.Join(names, ", "))
	}
}

// target adds the wheels, dependencies and bundle of t and returns the ids
// of its own wheels.
func (b *builder) target(field string, t Target, releaseLicense, releaseSupplier string) []common.ElementID {
	// A name may stand for several wheel files (one per Python version of
	// the target); each file is its own package, and a requirement on the
	// name points at all of them.
	files := map[string]int{}
	for _, p := range append(append([]Package(nil), t.Wheels...), t.Dependencies...) {
		files[pyname.Normalize(p.Name)]++
	}
	byName := map[string][]common.ElementID{}
	seenFile := map[string]bool{}
	var own, all []common.ElementID
	type edge struct {
		field string
		from  common.ElementID
		names []string
	}
	var edges []edge
	deps := map[common.ElementID]bool{} // dependency → has a requirer
	add := func(kind, list string, i int, p Package, defLicense, defSupplier string) {
		pf := member(field, label(list, p.Name, i))
		name := pyname.Normalize(p.Name)
		if seenFile[name+"\x00"+p.FileName] && name != "" {
			b.fail(pf, "%s (%s) is listed twice among the target's wheels and dependencies", name, p.FileName)
			return
		}
		seenFile[name+"\x00"+p.FileName] = true
		id, ok := b.wheel(pf, kind, t.Name, p, defLicense, defSupplier, files[name] > 1)
		byName[name] = append(byName[name], id) // "" for a package refused: requiring it is no further error
		if !ok {
			return
		}
		all = append(all, id)
		edges = append(edges, edge{pf, id, p.DependsOn})
		if kind == "wheel" {
			own = append(own, id)
			b.relate(b.release, common.TypeRelationshipContains, id, "")
		} else {
			deps[id] = false
		}
	}
	for i, p := range t.Wheels {
		add("wheel", "wheels", i, p, releaseLicense, releaseSupplier)
	}
	for i, p := range t.Dependencies {
		add("dependency", "dependencies", i, p, noAssertion, "")
	}
	for _, e := range edges {
		for _, n := range e.names {
			tos, ok := byName[pyname.Normalize(n)]
			if !ok {
				b.fail(member(e.field, "dependsOn"), "%q is not among the wheels and dependencies of target %q: add it to the closure or drop the requirement", n, t.Name)
				continue
			}
			for _, to := range tos {
				switch to {
				case "":
					// refused; its own error says why
				case e.from:
					b.fail(member(e.field, "dependsOn"), "a package cannot depend on itself")
				default:
					b.relate(e.from, common.TypeRelationshipDependsOn, to, "")
					if _, isDep := deps[to]; isDep {
						deps[to] = true
					}
				}
			}
		}
	}
	for id, required := range deps {
		if !required {
			b.relate(b.release, common.TypeRelationshipDependsOn, id,
				"in the dependency closure of target "+t.Name+"; no package of this document records requiring it")
		}
	}
	if t.Bundle != nil {
		bf := member(field, "bundle")
		id := common.ElementID(joinID("File", "bundle", t.Name))
		if b.file(bf, "name", t.Bundle.Name, t.Bundle.SHA1, t.Bundle.SHA256) && b.claim(id, bf) {
			b.add(element{id: id, kind: kindBundle, name: t.Bundle.Name, sha1: t.Bundle.SHA1, sha256: t.Bundle.SHA256,
				comment: "Offline install bundle of target " + t.Name + "."})
			b.relate(documentID, common.TypeRelationshipDescribe, id, "")
			for _, w := range all {
				b.relate(id, common.TypeRelationshipContains, w, "")
			}
		}
	}
	return own
}

// wheel adds one wheel package (kind "wheel" or "dependency").
// perFile adds the wheel's tags to its id, for a name with several files.
func (b *builder) wheel(field, kind, target string, p Package, defLicense, defSupplier string, perFile bool) (common.ElementID, bool) {
	ok := true
	if err := pyname.Valid(p.Name); err != nil {
		b.fail(member(field, "name"), "%v", err)
		return "", false
	}
	name := pyname.Normalize(p.Name)
	if !singleLine(p.Version) || strings.ContainsAny(p.Version, " \t") {
		b.fail(member(field, "version"), "version %q: a wheel's version is required", p.Version)
		ok = false
	}
	if !singleLine(p.FileName) || strings.ContainsAny(p.FileName, "/\\") {
		b.fail(member(field, "fileName"), "file name %q: the wheel's base name is required", p.FileName)
		ok = false
	}
	if !isHex(p.SHA256, 64) {
		b.fail(member(field, "sha256"), "%q is not a SHA-256 in lower-case hex: every wheel needs its checksum (an NTIA minimum element)", p.SHA256)
		ok = false
	}
	lic := defLicense
	if p.License != "" {
		lic = b.license(member(field, "license"), p.License, noAssertion)
	}
	supplierText := p.Supplier
	if supplierText == "" {
		supplierText = defSupplier
	}
	supplier := b.supplier(member(field, "supplier"), supplierText)
	loc, msg := wheelLocation(p.DownloadLocation)
	if msg != "" {
		b.fail(member(field, "downloadLocation"), "%s", msg)
		ok = false
	}
	key := sharedKey(p)
	sharedID, shared := b.shared[key]
	shared = shared && kind == "wheel"
	if shared && sharedID != "" {
		return sharedID, true // the package of a target before this one
	}
	id := common.ElementID(joinID("Package", kind, target, name, p.Version))
	switch {
	case shared:
		id = common.ElementID(joinID("Package", kind, name, p.Version, "any"))
	case perFile:
		tags := strings.TrimSuffix(p.FileName, wheel.Ext)
		if parts := strings.SplitN(tags, "-", 3); len(parts) == 3 {
			tags = parts[2]
		}
		id = common.ElementID(joinID("Package", kind, target, name, p.Version, tags))
	}
	if !ok || !b.claim(id, field) {
		return "", false
	}
	comment := "Wheel of the release for target " + target + "."
	switch {
	case kind == "dependency":
		comment = "Dependency wheel in the closure of target " + target + "."
	case shared:
		comment = "Wheel of the release, pure Python: the same file for every target."
		b.shared[key] = id
	}
	ek := kindWheel
	if kind == "dependency" {
		ek = kindDependency
	}
	b.add(element{
		id:       id,
		kind:     ek,
		name:     name,
		version:  p.Version,
		fileName: p.FileName,
		supplier: supplier,
		location: loc,
		sha256:   p.SHA256,
		license:  lic,
		comment:  comment,
		purl:     WheelPURL(name, p.Version, p.FileName),
	})
	return id, true
}

// sharedWheels returns the keys ([sharedKey]) of the own wheel files that
// more than one target holds, each with no id yet.
func sharedWheels(targets []Target) map[string]common.ElementID {
	n := map[string]int{}
	for _, t := range targets {
		seen := map[string]bool{}
		for _, p := range t.Wheels {
			if k := sharedKey(p); !seen[k] {
				seen[k] = true
				n[k]++
			}
		}
	}
	out := map[string]common.ElementID{}
	for k, c := range n {
		if c > 1 {
			out[k] = ""
		}
	}
	return out
}

// sharedKey identifies a wheel file: its name, file name and sha256.
func sharedKey(p Package) string {
	return pyname.Normalize(p.Name) + "\x00" + p.FileName + "\x00" + p.SHA256
}

// file checks the facts of a document-level File: a project-relative
// name, its SHA256 and the SHA1 SPDX 2.3 §8.4 requires.
func (b *builder) file(field, nameField, name, sha1, sha256 string) bool {
	ok := true
	if m := pin.CheckProjectPath(name); m != "" {
		b.fail(member(field, nameField), "%s", m)
		ok = false
	}
	if !isHex(sha256, 64) {
		b.fail(member(field, "sha256"), "%q is not a SHA-256 in lower-case hex", sha256)
		ok = false
	}
	if !isHex(sha1, 40) {
		b.fail(member(field, "sha1"), "%q is not a SHA-1 in lower-case hex: SPDX 2.3 §8.4 requires a SHA1 checksum on every File; hash the file with SHA-1 too", sha1)
		ok = false
	}
	return ok
}

func (b *builder) source(field string, s Source) (common.ElementID, bool) {
	ok := true
	if !singleLine(s.Name) {
		b.fail(member(field, "name"), "a source needs a name")
		return "", false
	}
	kind, known := pin.Lookup(s.Kind)
	if !known {
		b.fail(member(field, "kind"), "%q: want %s", s.Kind, pin.Want())
		return "", false
	}
	if f, msg := kind.Check(s.Source); msg != "" {
		b.fail(member(field, f), "%s", msg)
		ok = false
	}
	version := kind.Version(s.Source)
	if !isH1(s.Tree) {
		b.fail(member(field, "tree"), "%q is not an h1: tree hash: pass the tree hash release.lock records", s.Tree)
		ok = false
	}
	loc, info, msg := sourceLocation(s)
	if msg != "" {
		b.fail(member(field, "location"), "%s", msg)
		ok = false
	}
	supplier := b.supplier(member(field, "supplier"), s.Supplier)
	id := common.ElementID(joinID("Package", "source", s.Name))
	if !ok || !b.claim(id, field) {
		return "", false
	}
	e := element{
		id:         id,
		kind:       kindSource,
		name:       s.Name,
		version:    version,
		supplier:   supplier,
		location:   loc,
		sourceInfo: info,
		sourceKind: s.Kind,
		comment:    "Pinned " + s.Kind + " source " + s.Name + ", before overlays.",
		tree:       s.Tree,
		treeNote:   "the pinned tree",
	}
	if s.Kind == SourceGit {
		e.commit = s.Commit
	}
	if _, digest := kind.Resolved(s.Source, pin.Project{}); digest["sha256"] != "" {
		e.sha256 = digest["sha256"]
	}
	b.add(e)
	return id, true
}

func (b *builder) overlay(field string, o Overlay, sources map[string]common.ElementID) {
	if !singleLine(o.Name) {
		b.fail(member(field, "name"), "an overlay needs a name")
		return
	}
	src, ok := sources[o.Source]
	if !ok {
		b.fail(member(field, "source"), "%q names no source of this release", o.Source)
		return
	}
	// src is "" when the source was refused: its own error says why, and
	// no document is written, so the overlay is still checked.
	if o.Tree != "" {
		if m := pin.CheckProjectPath(o.Path); m != "" {
			b.fail(member(field, "path"), "%s", m)
			return
		}
	}
	if o.Result != "" && !isH1(o.Result) {
		b.fail(member(field, "result"), "%q is not an h1: tree hash", o.Result)
		return
	}
	comment := "Overlay " + o.Name + " of source " + o.Source + "."
	if o.Result != "" {
		comment += " Source tree after it: " + o.Result + "."
	}
	var id common.ElementID
	switch {
	case o.Tree != "" && o.SHA256 == "" && o.SHA1 == "":
		if !isH1(o.Tree) {
			b.fail(member(field, "tree"), "%q is not an h1: tree hash", o.Tree)
			return
		}
		id = common.ElementID(joinID("Package", "overlay", o.Source, o.Name))
		if !b.claim(id, field) {
			return
		}
		b.add(element{
			id:         id,
			kind:       kindTreeOverlay,
			name:       o.Name,
			version:    o.Tree,
			sourceInfo: "overlay folder " + o.Path + " of the project",
			comment:    comment,
			tree:       o.Tree,
			treeNote:   "the overlay folder",
		})
	case o.Tree == "":
		id = common.ElementID(joinID("File", "overlay", o.Source, o.Name))
		if !b.file(field, "path", o.Path, o.SHA1, o.SHA256) || !b.claim(id, field) {
			return
		}
		b.add(element{id: id, kind: kindPatchOverlay, name: o.Path, sha1: o.SHA1, sha256: o.SHA256, comment: comment})
	default:
		b.fail(field, "give the patch file's sha256 and sha1, or the overlay folder's tree hash, not both")
		return
	}
	b.relate(id, common.TypeRelationshipPatchFor, src, "")
	b.relate(b.release, common.TypeRelationshipGeneratedFrom, id, "")
}

func (b *builder) toolchain(field string, tc Toolchain, targets map[string][]common.ElementID) {
	if !singleLine(tc.Name) || !singleLine(tc.Version) {
		b.fail(field, "a toolchain needs a name and a version (got %q %q)", tc.Name, tc.Version)
		return
	}
	users := []common.ElementID{b.release}
	id := common.ElementID(joinID("Package", "toolchain", tc.Name))
	comment := "Toolchain for every target."
	if tc.Target != "" {
		wheels, described := targets[tc.Target]
		if !described {
			return // it built nothing this document describes
		}
		if len(wheels) > 0 {
			users = wheels
		}
		id = common.ElementID(joinID("Package", "toolchain", tc.Target, tc.Name))
		comment = "Toolchain for target " + tc.Target + "."
	}
	if !b.claim(id, field) {
		return
	}
	line := strings.TrimSpace(tc.Version)
	version, parsed := toolchainVersion(line)
	if parsed {
		comment += " versionInfo is read from its identity line, as release.lock locks it: '" + line + "'."
	} else {
		comment += " Its identity line, as release.lock locks it, is '" + line + "'; no version could be read from it, so versionInfo is left out."
	}
	b.add(element{
		id:       id,
		kind:     kindToolchain,
		name:     tc.Name,
		version:  version,
		supplier: b.supplier(member(field, "supplier"), tc.Supplier),
		comment:  comment,
	})
	for _, u := range users {
		b.relate(id, common.TypeRelationshipBuildToolOf, u, "")
	}
}

// license returns expr checked as an SPDX license expression, or def when
// expr is empty.
func (b *builder) license(field, expr, def string) string {
	switch expr {
	case "":
		return def
	case noAssertion, "NONE":
		return expr
	}
	if err := spdxexpr.Check(expr); err != nil {
		b.fail(field, "%v", err)
		return def
	}
	return expr
}

// supplier parses "Person: NAME (EMAIL)" or "Organization: NAME (EMAIL)";
// "" and NOASSERTION give NOASSERTION.
func (b *builder) supplier(field, s string) party {
	s = strings.TrimSpace(s)
	if s == "" || s == noAssertion {
		return party{}
	}
	typ, who, ok := strings.Cut(s, ":")
	who = strings.TrimSpace(who)
	if !ok || (typ != "Person" && typ != "Organization") || !singleLine(who) {
		b.fail(field, "%q: write \"Person: NAME (EMAIL)\" or \"Organization: NAME (EMAIL)\" (SPDX 2.3 §7.5), or leave it empty for NOASSERTION", s)
		return party{}
	}
	return party{typ: typ, who: who}
}

// finish sorts the elements by identifier and writes the relationships in
// (element, type, related element) order.
func (b *builder) finish() {
	b.m.sortElements()
	keys := make([]relKey, 0, len(b.rels))
	for k := range b.rels {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y relKey) int {
		return cmp.Or(cmp.Compare(x.a, y.a), cmp.Compare(x.typ, y.typ), cmp.Compare(x.b, y.b))
	})
	b.m.rels = make([]rel, len(keys))
	for i, k := range keys {
		b.m.rels[i] = rel{relKey: k, comment: b.rels[k]}
	}
}
