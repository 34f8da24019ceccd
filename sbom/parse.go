package sbom

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spdx/tools-golang/spdx/v2/common"
	"github.com/spdx/tools-golang/spdx/v2/v2_3"
)

// Summary is what a verifier needs from an SPDX 2.3 JSON document: the
// elements with their file names and checksums, and the relationships.
// Identifiers keep their "SPDXRef-" prefix.
type Summary struct {
	// Name and Namespace are the document's name and documentNamespace.
	Name, Namespace string
	// Created is creationInfo.created, as written (RFC 3339).
	Created string
	// Creators are the creators as written, e.g. "Tool: mkrelease-0.1.0".
	Creators []string
	// Describes lists the identifiers SPDXRef-DOCUMENT DESCRIBES.
	Describes []string
	// Packages are the packages in document order.
	Packages []PackageInfo
	// Files are the document-level files in document order.
	Files []FileInfo
	// Relationships are the relationships in document order.
	Relationships []Relationship
}

// PackageInfo is one package of a Summary.
type PackageInfo struct {
	// ID is the SPDX identifier, e.g. "SPDXRef-Package-wheel-…".
	ID string
	// Name and Version are the package's name and versionInfo.
	Name, Version string
	// FileName is packageFileName ("" for packages that are not one file,
	// such as the release, a git source or a toolchain).
	FileName string
	// SHA256 is the package's SHA256 checksum in hex, "" when it has none.
	SHA256 string
	// PURL is the purl external reference, "" when there is none.
	PURL string
	// Supplier is the supplier as written ("Organization: …", "Person: …"
	// or "NOASSERTION"; "" when absent).
	Supplier string
	// DownloadLocation and LicenseDeclared are as written.
	DownloadLocation, LicenseDeclared string
}

// FileInfo is one document-level file of a Summary.
type FileInfo struct {
	// ID is the SPDX identifier, e.g. "SPDXRef-File-bundle-linux-x86-64".
	ID string
	// Name is the fileName as written, e.g. "./vexl-0.3.0-linux-x86_64.tar.gz".
	Name string
	// SHA1 and SHA256 are the file's checksums in hex ("" when absent).
	SHA1, SHA256 string
}

// Relationship is "From Type To", e.g. "SPDXRef-A DEPENDS_ON SPDXRef-B";
// To may be NONE or NOASSERTION.
type Relationship struct {
	From, Type, To string
}

// Parse reads an SPDX 2.3 JSON document with tools-golang's model and
// summarises it. It refuses a document that is not SPDX 2.3 JSON, that
// defines an identifier twice, that relates an identifier it does not
// define (references to other documents excepted), or whose checksums are
// not lower-case hex of the algorithm's length or repeat an algorithm. It
// does not check the namespace; see [CheckNamespace].
func Parse(data []byte) (*Summary, error) {
	var head struct {
		Version string `json:"spdxVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("sbom: not SPDX JSON: %w", err)
	}
	if head.Version != v2_3.Version {
		return nil, fmt.Errorf("sbom: spdxVersion %q: want %q", head.Version, v2_3.Version)
	}
	var doc v2_3.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("sbom: read SPDX 2.3 JSON: %w", err)
	}
	if doc.CreationInfo == nil {
		return nil, fmt.Errorf("sbom: no creationInfo")
	}
	s := &Summary{
		Name:      doc.DocumentName,
		Namespace: doc.DocumentNamespace,
		Created:   doc.CreationInfo.Created,
	}
	for _, c := range doc.CreationInfo.Creators {
		s.Creators = append(s.Creators, c.CreatorType+": "+c.Creator)
	}
	defined := map[string]bool{common.RenderElementID(doc.SPDXIdentifier): true}
	define := func(id common.ElementID) error {
		r := common.RenderElementID(id)
		if defined[r] {
			return fmt.Errorf("sbom: SPDX identifier %s is defined twice", r)
		}
		defined[r] = true
		return nil
	}
	for _, p := range doc.Packages {
		if p == nil {
			continue
		}
		if err := define(p.PackageSPDXIdentifier); err != nil {
			return nil, err
		}
		sums, err := checksums(common.RenderElementID(p.PackageSPDXIdentifier), p.PackageChecksums)
		if err != nil {
			return nil, err
		}
		info := PackageInfo{
			ID:               common.RenderElementID(p.PackageSPDXIdentifier),
			Name:             p.PackageName,
			Version:          p.PackageVersion,
			FileName:         p.PackageFileName,
			SHA256:           sums[common.SHA256],
			DownloadLocation: p.PackageDownloadLocation,
			LicenseDeclared:  p.PackageLicenseDeclared,
		}
		if sp := p.PackageSupplier; sp != nil {
			info.Supplier = sp.Supplier
			if sp.SupplierType != "" {
				info.Supplier = sp.SupplierType + ": " + sp.Supplier
			}
		}
		for _, ref := range p.PackageExternalReferences {
			if ref != nil && ref.RefType == common.TypePackageManagerPURL {
				info.PURL = ref.Locator
			}
		}
		s.Packages = append(s.Packages, info)
	}
	for _, f := range doc.Files {
		if f == nil {
			continue
		}
		if err := define(f.FileSPDXIdentifier); err != nil {
			return nil, err
		}
		id := common.RenderElementID(f.FileSPDXIdentifier)
		sums, err := checksums(id, f.Checksums)
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, FileInfo{ID: id, Name: f.FileName, SHA1: sums[common.SHA1], SHA256: sums[common.SHA256]})
	}
	for _, sn := range doc.Snippets {
		if err := define(sn.SnippetSPDXIdentifier); err != nil {
			return nil, err
		}
	}
	for _, r := range doc.Relationships {
		if r == nil {
			continue
		}
		rel := Relationship{From: common.RenderDocElementID(r.RefA), Type: r.Relationship, To: common.RenderDocElementID(r.RefB)}
		for _, e := range []common.DocElementID{r.RefA, r.RefB} {
			if e.SpecialID == "" && e.DocumentRefID == "" && !defined[common.RenderDocElementID(e)] {
				return nil, fmt.Errorf("sbom: relationship %s %s %s: %s is not defined in the document", rel.From, rel.Type, rel.To, common.RenderDocElementID(e))
			}
		}
		if rel.Type == common.TypeRelationshipDescribe && rel.From == common.RenderElementID(doc.SPDXIdentifier) {
			s.Describes = append(s.Describes, rel.To)
		}
		s.Relationships = append(s.Relationships, rel)
	}
	return s, nil
}

// digestLen is the hex length of the algorithms a verifier checks (0 for
// the others).
func digestLen(a common.ChecksumAlgorithm) int {
	switch a {
	case common.SHA1:
		return 40
	case common.SHA256:
		return 64
	}
	return 0
}

func checksums(id string, cs []common.Checksum) (map[common.ChecksumAlgorithm]string, error) {
	m := map[common.ChecksumAlgorithm]string{}
	for _, c := range cs {
		if _, dup := m[c.Algorithm]; dup {
			return nil, fmt.Errorf("sbom: %s has two %s checksums", id, c.Algorithm)
		}
		if n := digestLen(c.Algorithm); n > 0 && !isHex(c.Value, n) {
			return nil, fmt.Errorf("sbom: %s: %s checksum %q is not %d lower-case hex digits", id, c.Algorithm, c.Value, n)
		}
		m[c.Algorithm] = c.Value
	}
	return m, nil
}

// CheckNamespace checks that data's documentNamespace is the content-derived
// one the package documentation defines: NamespacePrefix, then a sanitised
// NAME-VERSION- (NAME-VERSION-TARGET- for one target's document) and 64 hex digits that are the SHA-256 of data with those
// digits replaced, in place, by "0"s.
func CheckNamespace(data []byte) error {
	var head struct {
		Namespace string `json:"documentNamespace"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("sbom: not SPDX JSON: %w", err)
	}
	ns := head.Namespace
	if !strings.HasPrefix(ns, NamespacePrefix) || len(ns) < len(NamespacePrefix)+65 ||
		ns[len(ns)-65] != '-' || !isHex(ns[len(ns)-64:], 64) {
		return fmt.Errorf("sbom: documentNamespace %q is not %sNAME-VERSION[-TARGET]-<sha256>", ns, NamespacePrefix)
	}
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false) // as Generate writes
	if err := enc.Encode(ns); err != nil {
		return err
	}
	field := append([]byte(`"documentNamespace": `), bytes.TrimSuffix(quoted.Bytes(), []byte("\n"))...)
	if n := bytes.Count(data, field); n != 1 {
		return fmt.Errorf("sbom: documentNamespace is written %d times as %s, want once (not a document mkrelease wrote?)", n, field)
	}
	at := bytes.Index(data, field) + len(field) - 1 - 64 // the digits, before the closing quote
	draft := bytes.Clone(data)
	copy(draft[at:at+64], zeroDigest)
	sum := sha256.Sum256(draft)
	if got, want := hex.EncodeToString(sum[:]), ns[len(ns)-64:]; got != want {
		return fmt.Errorf("sbom: documentNamespace digest %s does not match the content (sha256 %s): the document was changed after it was written", want, got)
	}
	return nil
}
