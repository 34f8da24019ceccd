package sbom

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spdx/tools-golang/spdx/v2/common"
)

// CycloneDX 1.6 JSON, as the BOM encodes it.
const (
	cdxSchema      = "http://cyclonedx.org/schema/bom-1.6.schema.json"
	cdxSpecVersion = "1.6"
	// SerialPrefix starts the name whose UUIDv5 is a document's serial
	// number: SerialPrefix and the hex SHA-256 of the document as written
	// with the zero serial number.
	SerialPrefix = "https://mkrelease.dev/cyclonedx/"
	zeroSerial   = "urn:uuid:00000000-0000-0000-0000-000000000000"
	// propertyPrefix namespaces mkrelease's own properties (CycloneDX
	// property taxonomy: a tool's name, then ":").
	propertyPrefix = "mkrelease:"
)

// uuidNamespaceURL is RFC 9562's namespace ID for URLs
// (6ba7b811-9dad-11d1-80b4-00c04fd430c8).
var uuidNamespaceURL = [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

type cdxBOM struct {
	Schema       string          `json:"$schema"`
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	SerialNumber string          `json:"serialNumber"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components,omitempty"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Timestamp    string        `json:"timestamp"`
	Tools        cdxTools      `json:"tools"`
	Manufacturer *cdxEntity    `json:"manufacturer,omitempty"`
	Authors      []cdxContact  `json:"authors,omitempty"`
	Component    cdxComponent  `json:"component"`
	Supplier     *cdxEntity    `json:"supplier,omitempty"`
	Properties   []cdxProperty `json:"properties,omitempty"`
}

type cdxTools struct {
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type               string        `json:"type"`
	BOMRef             string        `json:"bom-ref,omitempty"`
	Supplier           *cdxEntity    `json:"supplier,omitempty"`
	Authors            []cdxContact  `json:"authors,omitempty"`
	Name               string        `json:"name"`
	Version            string        `json:"version,omitempty"`
	Description        string        `json:"description,omitempty"`
	Hashes             []cdxHash     `json:"hashes,omitempty"`
	Licenses           []cdxLicense  `json:"licenses,omitempty"`
	PURL               string        `json:"purl,omitempty"`
	ExternalReferences []cdxExtRef   `json:"externalReferences,omitempty"`
	Properties         []cdxProperty `json:"properties,omitempty"`
}

type cdxEntity struct {
	Name    string       `json:"name"`
	Contact []cdxContact `json:"contact,omitempty"`
}

type cdxContact struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

type cdxHash struct {
	Alg     string `json:"alg"`
	Content string `json:"content"`
}

type cdxLicense struct {
	Expression      string `json:"expression"`
	Acknowledgement string `json:"acknowledgement"`
}

type cdxExtRef struct {
	URL     string    `json:"url"`
	Comment string    `json:"comment,omitempty"`
	Type    string    `json:"type"`
	Hashes  []cdxHash `json:"hashes,omitempty"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// GenerateCycloneDX returns the CycloneDX 1.6 JSON document of r. It is
// Build, then [BOM.CycloneDX]; a caller that writes both documents builds
// once and encodes twice.
func GenerateCycloneDX(r Release) ([]byte, error) {
	m, err := Build(r)
	if err != nil {
		return nil, err
	}
	return m.CycloneDX()
}

// CycloneDX returns the CycloneDX 1.6 JSON document of m: the same
// elements and relationships as [BOM.SPDX], deterministic, two-space
// indented with a trailing newline, and with the content-derived serial
// number the package documentation defines.
func (m *BOM) CycloneDX() ([]byte, error) {
	doc := m.cdxDocument()
	doc.SerialNumber = zeroSerial
	draft, err := renderCDX(doc)
	if err != nil {
		return nil, err
	}
	doc.SerialNumber = serialOf(draft)
	return renderCDX(doc)
}

// serialOf is the serial number of a draft written with the zero serial:
// the UUIDv5 (RFC 9562 §5.5) of the URL SerialPrefix + its hex SHA-256.
func serialOf(draft []byte) string {
	sum := sha256.Sum256(draft)
	h := sha1.New()
	h.Write(uuidNamespaceURL[:])
	h.Write([]byte(SerialPrefix + hex.EncodeToString(sum[:])))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	x := hex.EncodeToString(u)
	return "urn:uuid:" + x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func renderCDX(doc *cdxBOM) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("sbom: write CycloneDX JSON: %w", err)
	}
	return buf.Bytes(), nil
}

// cdxDocument encodes m's facts as CycloneDX 1.6, the serial number left
// empty.
func (m *BOM) cdxDocument() *cdxBOM {
	doc := &cdxBOM{
		Schema:      cdxSchema,
		BOMFormat:   "CycloneDX",
		SpecVersion: cdxSpecVersion,
		Version:     1,
		Metadata: cdxMetadata{
			Timestamp: m.createdTime(),
			Tools:     cdxTools{Components: []cdxComponent{toolComponent(m.tool)}},
			Supplier:  m.supplier.entity(),
			Properties: []cdxProperty{{Name: propertyPrefix + "scope",
				Value: "SBOM of " + m.scope + ". The serialNumber is the UUIDv5 (URL namespace) of " + SerialPrefix +
					" followed by the SHA-256 of this file as written with the serialNumber " + zeroSerial + "."}},
		},
	}
	// SPDX's creators: the tool, and the release's supplier: a person
	// authors the BOM, an organisation manufactures it.
	switch m.supplier.typ {
	case "Person":
		doc.Metadata.Authors = m.supplier.contacts()
	case "Organization":
		doc.Metadata.Manufacturer = m.supplier.entity()
	}
	for _, e := range m.elements {
		c := cdxComponentOf(e)
		if e.id == m.release {
			doc.Metadata.Component = c
			continue
		}
		doc.Components = append(doc.Components, c)
	}
	doc.Dependencies = m.cdxDependencies()
	return doc
}

// toolVersion splits "mkrelease-0.1.0-dev" into the tool's name and its
// version: the version starts at the first "-" followed by a digit.
var toolVersion = regexp.MustCompile(`^(.*?)-([0-9].*)$`)

func toolComponent(tool string) cdxComponent {
	c := cdxComponent{Type: "application", Name: tool}
	if m := toolVersion.FindStringSubmatch(tool); m != nil {
		c.Name, c.Version = m[1], m[2]
	}
	return c
}

// emailRE is what is written as an email address: anything else in the
// parentheses of "NAME (EMAIL)" stays part of the name, so the document
// never carries an address its schema's idn-email format refuses.
var emailRE = regexp.MustCompile(`^[^@\s()<>,;:"\[\]\\]+@[^@\s()<>,;:"\[\]\\]+\.[^@\s()<>,;:"\[\]\\]+$`)

// nameEmail splits "NAME (EMAIL)" into its name and address; "NAME" and
// an unreadable address give the whole text as the name.
func (p party) nameEmail() (name, email string) {
	who := p.who
	if i := strings.LastIndex(who, " ("); i > 0 && strings.HasSuffix(who, ")") {
		if e := who[i+2 : len(who)-1]; emailRE.MatchString(e) {
			return strings.TrimSpace(who[:i]), e
		}
	}
	return who, ""
}

// entity is p as a CycloneDX organizationalEntity; nil when unknown.
func (p party) entity() *cdxEntity {
	if p.typ == "" {
		return nil
	}
	name, email := p.nameEmail()
	e := &cdxEntity{Name: name}
	if email != "" {
		c := cdxContact{Email: email}
		if p.typ == "Person" {
			c.Name = name
		}
		e.Contact = []cdxContact{c}
	}
	return e
}

// contacts is a Person as CycloneDX authors; nil for an organisation or
// an unknown supplier.
func (p party) contacts() []cdxContact {
	if p.typ != "Person" {
		return nil
	}
	name, email := p.nameEmail()
	return []cdxContact{{Name: name, Email: email}}
}

// cdxType is the CycloneDX 1.6 component type of an element: the wheels,
// the release, the sources and their trees are libraries (code other
// software is built with or imports), a toolchain an application (a
// program run to build), a patch, an overlay folder's files and a bundle
// files.
func cdxType(k elementKind) string {
	switch k {
	case kindToolchain:
		return "application"
	case kindPatchOverlay, kindBundle, kindTreeOverlay:
		return "file"
	}
	return "library"
}

func cdxComponentOf(e element) cdxComponent {
	c := cdxComponent{
		Type:        cdxType(e.kind),
		BOMRef:      string(e.id),
		Supplier:    e.supplier.entity(),
		Authors:     e.supplier.contacts(),
		Name:        e.name,
		Version:     e.version,
		Description: e.comment,
		PURL:        e.purl,
	}
	if e.sha1 != "" {
		c.Hashes = append(c.Hashes, cdxHash{Alg: "SHA-1", Content: e.sha1})
	}
	if e.sha256 != "" {
		c.Hashes = append(c.Hashes, cdxHash{Alg: "SHA-256", Content: e.sha256})
	}
	if e.license != "" && e.license != noAssertion && e.license != "NONE" {
		c.Licenses = []cdxLicense{{Expression: e.license, Acknowledgement: "declared"}}
	}
	if e.fileName != "" {
		c.Properties = append(c.Properties, cdxProperty{Name: propertyPrefix + "file-name", Value: e.fileName})
	}
	if e.location != "" && e.location != noAssertion {
		switch {
		case e.kind == kindSource && e.sourceKind == SourceGit:
			c.ExternalReferences = []cdxExtRef{{URL: e.location, Type: "vcs",
				Comment: "the pinned commit " + e.commit + ", as pip's VCS URLs write it (git+URL@COMMIT)"}}
		case e.kind == kindSource:
			r := cdxExtRef{URL: e.location, Type: "source-distribution", Comment: "the pinned source archive"}
			if e.sha256 != "" {
				r.Hashes = []cdxHash{{Alg: "SHA-256", Content: e.sha256}}
			}
			c.ExternalReferences = []cdxExtRef{r}
		default:
			c.ExternalReferences = []cdxExtRef{{URL: e.location, Type: "distribution", Comment: "where the wheel was fetched from",
				Hashes: []cdxHash{{Alg: "SHA-256", Content: e.sha256}}}}
		}
	}
	if e.sourceKind != "" {
		c.Properties = append(c.Properties, cdxProperty{Name: propertyPrefix + "source-kind", Value: e.sourceKind})
	}
	if e.sourceInfo != "" {
		c.Properties = append(c.Properties, cdxProperty{Name: propertyPrefix + "source-info", Value: e.sourceInfo})
	}
	if e.tree != "" {
		c.Properties = append(c.Properties, cdxProperty{Name: propertyPrefix + "dirhash-h1", Value: e.tree})
	}
	return c
}

// cdxDependencies mirrors the SPDX relationships as CycloneDX
// dependencies: every element has an entry (an empty one has no
// dependencies), and "A dependsOn B" for A DEPENDS_ON B, A CONTAINS B
// (the release and a bundle need the wheels they ship) and A
// GENERATED_FROM B (the release needs its sources and overlays); for an
// overlay's PATCH_FOR its source (an overlay needs the source it applies
// to); and the reverse of BUILD_TOOL_OF (a wheel needs the toolchain that
// built it). DESCRIBES is the document's metadata.component.
func (m *BOM) cdxDependencies() []cdxDependency {
	on := map[common.ElementID][]string{}
	for _, e := range m.elements {
		on[e.id] = nil
	}
	for _, r := range m.rels {
		switch r.typ {
		case common.TypeRelationshipDependsOn, common.TypeRelationshipContains,
			common.TypeRelationshipGeneratedFrom, common.TypeRelationshipPatchFor:
			on[r.a] = append(on[r.a], string(r.b))
		case common.TypeRelationshipBuildToolOf:
			on[r.b] = append(on[r.b], string(r.a))
		}
	}
	out := make([]cdxDependency, 0, len(m.elements))
	for _, e := range m.elements { // in identifier order
		deps := on[e.id]
		slices.Sort(deps)
		out = append(out, cdxDependency{Ref: string(e.id), DependsOn: slices.Compact(deps)})
	}
	return out
}
