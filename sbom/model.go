package sbom

import (
	"cmp"
	"slices"
	"time"

	"github.com/spdx/tools-golang/spdx/v2/common"
	"github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// elementKind is what an element of a [BOM] is.
type elementKind int

const (
	kindRelease      elementKind = iota // the release itself
	kindWheel                           // a wheel of the release
	kindDependency                      // a wheel of a target's dependency closure
	kindSource                          // a pinned source
	kindTreeOverlay                     // an overlay folder
	kindPatchOverlay                    // a patch file
	kindToolchain                       // a locked toolchain
	kindBundle                          // a target's offline bundle
)

// isFile reports whether elements of kind k are single files of the
// project or the release folder (SPDX Files, CycloneDX "file" components)
// rather than packages.
func (k elementKind) isFile() bool { return k == kindPatchOverlay || k == kindBundle }

// party is a supplier: typ "Person" or "Organization" and who ("NAME" or
// "NAME (EMAIL)"); typ "" is unknown (NOASSERTION).
type party struct{ typ, who string }

// element is one checked fact of a [BOM]: everything both encoders write
// about one package or file. Generate's checks have run on every field.
type element struct {
	id       common.ElementID // the SPDX identifier, without "SPDXRef-"; the CycloneDX bom-ref
	kind     elementKind
	name     string // the package name; a file's project- or folder-relative path
	version  string // "" when unknown (a toolchain whose version no rule reads)
	fileName string // the wheel's file name
	supplier party
	license  string // declared SPDX license expression, NOASSERTION or NONE
	// location is the SPDX download location: "git+URL@COMMIT", an
	// http(s) URL, or NOASSERTION.
	location   string
	sourceInfo string
	sourceKind string // a source's pin kind (SourceGit, …)
	commit     string // a git source's commit
	sha256     string
	sha1       string
	purl       string
	tree       string // the "h1:" tree hash of a source or overlay folder
	treeNote   string // what the tree hash is of
	comment    string
}

// rel is one relationship "a TYPE b" in SPDX 2.3 §11.1's terms.
type rel struct {
	relKey
	comment string
}

// BOM is the checked model of one release's (or one target's) bill of
// materials: every element and relationship the documents describe. [Build]
// makes it once; [BOM.SPDX] and [BOM.CycloneDX] encode the same facts.
type BOM struct {
	name     string // NAME-VERSION[-TARGET]
	scope    string // what the document describes, in words
	tool     string
	created  int64
	supplier party // the release's
	release  common.ElementID
	elements []element // sorted by id
	rels     []rel     // sorted by (a, type, b), deduplicated
}

// createdTime is the document's timestamp, the SOURCE_DATE_EPOCH in
// RFC 3339 UTC.
func (m *BOM) createdTime() string { return time.Unix(m.created, 0).UTC().Format(time.RFC3339) }

// spdxSupplier is p as SPDX writes a supplier or creator.
func (p party) spdxSupplier() *common.Supplier {
	if p.typ == "" {
		return &common.Supplier{Supplier: noAssertion}
	}
	return &common.Supplier{SupplierType: p.typ, Supplier: p.who}
}

func orNoAssertion(s string) string {
	if s == "" {
		return noAssertion
	}
	return s
}

// spdxDocument encodes m as an SPDX 2.3 document with the namespace ns.
func (m *BOM) spdxDocument(ns string) *v2_3.Document {
	creators := []common.Creator{{CreatorType: "Tool", Creator: m.tool}}
	if m.supplier.typ != "" {
		creators = append(creators, common.Creator{CreatorType: m.supplier.typ, Creator: m.supplier.who})
	}
	doc := &v2_3.Document{
		SPDXVersion:    v2_3.Version,
		DataLicense:    v2_3.DataLicense,
		SPDXIdentifier: documentID,
		DocumentName:   m.name,
		DocumentComment: "SBOM of " + m.scope + ", written by " + m.tool +
			". The documentNamespace ends with the SHA-256 of this file as written, with those 64 hex digits replaced by 64 '0' characters.",
		DocumentNamespace: ns,
		CreationInfo: &v2_3.CreationInfo{
			Creators: creators,
			Created:  m.createdTime(),
		},
	}
	for _, e := range m.elements {
		if e.kind.isFile() {
			doc.Files = append(doc.Files, spdxFile(e))
		} else {
			doc.Packages = append(doc.Packages, spdxPackage(e))
		}
	}
	doc.Relationships = make([]*v2_3.Relationship, len(m.rels))
	for i, r := range m.rels {
		doc.Relationships[i] = &v2_3.Relationship{
			RefA:                common.MakeDocElementID("", string(r.a)),
			RefB:                common.MakeDocElementID("", string(r.b)),
			Relationship:        r.typ,
			RelationshipComment: r.comment,
		}
	}
	return doc
}

func spdxPackage(e element) *v2_3.Package {
	p := &v2_3.Package{
		PackageName:             e.name,
		PackageSPDXIdentifier:   e.id,
		PackageVersion:          e.version,
		PackageFileName:         e.fileName,
		PackageSupplier:         e.supplier.spdxSupplier(),
		PackageDownloadLocation: orNoAssertion(e.location),
		FilesAnalyzed:           false,
		PackageSourceInfo:       e.sourceInfo,
		PackageLicenseConcluded: noAssertion,
		PackageLicenseDeclared:  orNoAssertion(e.license),
		PackageCopyrightText:    noAssertion,
		PackageComment:          e.comment,
	}
	if e.sha256 != "" {
		p.PackageChecksums = []common.Checksum{{Algorithm: common.SHA256, Value: e.sha256}}
	}
	if e.purl != "" {
		p.PackageExternalReferences = append(p.PackageExternalReferences, &v2_3.PackageExternalReference{
			Category: common.CategoryPackageManager,
			RefType:  common.TypePackageManagerPURL,
			Locator:  e.purl,
		})
	}
	if e.tree != "" {
		p.PackageExternalReferences = append(p.PackageExternalReferences, &v2_3.PackageExternalReference{
			Category:           common.CategoryOther,
			RefType:            "dirhash-h1",
			Locator:            e.tree,
			ExternalRefComment: "golang.org/x/mod/sumdb/dirhash Hash1 of " + e.treeNote,
		})
	}
	switch e.kind {
	case kindSource, kindTreeOverlay:
		p.PrimaryPackagePurpose = "SOURCE"
	case kindToolchain:
		p.PrimaryPackagePurpose = "APPLICATION"
	}
	return p
}

func spdxFile(e element) *v2_3.File {
	f := &v2_3.File{
		FileName:           "./" + e.name,
		FileSPDXIdentifier: e.id,
		Checksums: []common.Checksum{
			{Algorithm: common.SHA1, Value: e.sha1},
			{Algorithm: common.SHA256, Value: e.sha256},
		},
		LicenseConcluded:   noAssertion,
		LicenseInfoInFiles: []string{noAssertion},
		FileCopyrightText:  noAssertion,
		FileComment:        e.comment,
	}
	if e.kind == kindBundle {
		f.FileTypes = []string{"ARCHIVE"}
	} else {
		f.FileTypes = []string{"SOURCE"}
	}
	return f
}

// sortElements puts m's elements in identifier order.
func (m *BOM) sortElements() {
	slices.SortFunc(m.elements, func(x, y element) int { return cmp.Compare(x.id, y.id) })
}
