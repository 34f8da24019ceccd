package sbom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// CycloneDXSummary is what a verifier needs from a CycloneDX JSON document
// mkrelease wrote: its serial number and the components with their
// digests.
type CycloneDXSummary struct {
	// SerialNumber is the document's serialNumber, "urn:uuid:…".
	SerialNumber string
	// Component is metadata.component, the release.
	Component ComponentInfo
	// Components are the components in document order.
	Components []ComponentInfo
}

// ComponentInfo is one component of a CycloneDXSummary.
type ComponentInfo struct {
	// Ref is the bom-ref (the SPDX identifier without "SPDXRef-").
	Ref string
	// Type, Name, Version and PURL are as written.
	Type, Name, Version, PURL string
	// FileName is the file the component is: a wheel's file name (the
	// purl's file_name qualifier), else "".
	FileName string
	// SHA1 and SHA256 are the component's hashes in hex ("" when absent).
	SHA1, SHA256 string
}

// ParseCycloneDX reads a CycloneDX 1.6 JSON document and summarises it. It
// refuses a document that is not CycloneDX 1.6 JSON, that defines a
// bom-ref twice, whose hashes are not lower-case hex of the algorithm's
// length or repeat an algorithm, or whose wheel purl has no file_name. It
// does not check the serial number; see [CheckSerialNumber].
func ParseCycloneDX(data []byte) (*CycloneDXSummary, error) {
	type hash struct{ Alg, Content string }
	type component struct {
		Type    string `json:"type"`
		Ref     string `json:"bom-ref"`
		Name    string `json:"name"`
		Version string `json:"version"`
		PURL    string `json:"purl"`
		Hashes  []hash `json:"hashes"`
	}
	var doc struct {
		BOMFormat    string `json:"bomFormat"`
		SpecVersion  string `json:"specVersion"`
		SerialNumber string `json:"serialNumber"`
		Metadata     struct {
			Component component `json:"component"`
		} `json:"metadata"`
		Components []component `json:"components"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("sbom: not CycloneDX JSON: %w", err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != cdxSpecVersion {
		return nil, fmt.Errorf("sbom: bomFormat %q specVersion %q: want CycloneDX %s", doc.BOMFormat, doc.SpecVersion, cdxSpecVersion)
	}
	seen := map[string]bool{}
	info := func(c component) (ComponentInfo, error) {
		ci := ComponentInfo{Ref: c.Ref, Type: c.Type, Name: c.Name, Version: c.Version, PURL: c.PURL}
		if c.Ref != "" {
			if seen[c.Ref] {
				return ci, fmt.Errorf("sbom: bom-ref %s is defined twice", c.Ref)
			}
			seen[c.Ref] = true
		}
		for _, h := range c.Hashes {
			var dst *string
			n := 0
			switch h.Alg {
			case "SHA-1":
				dst, n = &ci.SHA1, 40
			case "SHA-256":
				dst, n = &ci.SHA256, 64
			default:
				continue
			}
			if *dst != "" {
				return ci, fmt.Errorf("sbom: component %s has two %s hashes", c.Ref, h.Alg)
			}
			if !isHex(h.Content, n) {
				return ci, fmt.Errorf("sbom: component %s: %s hash %q is not %d lower-case hex digits", c.Ref, h.Alg, h.Content, n)
			}
			*dst = h.Content
		}
		if rest, ok := strings.CutPrefix(c.PURL, "pkg:pypi/"); ok {
			_, query, _ := strings.Cut(rest, "?")
			q, err := url.ParseQuery(query)
			if err != nil || q.Get("file_name") == "" {
				return ci, fmt.Errorf("sbom: component %s: purl %q names no file (file_name qualifier)", c.Ref, c.PURL)
			}
			ci.FileName = q.Get("file_name")
		}
		return ci, nil
	}
	s := &CycloneDXSummary{SerialNumber: doc.SerialNumber}
	var err error
	if s.Component, err = info(doc.Metadata.Component); err != nil {
		return nil, err
	}
	for _, c := range doc.Components {
		ci, err := info(c)
		if err != nil {
			return nil, err
		}
		s.Components = append(s.Components, ci)
	}
	return s, nil
}

// CheckSerialNumber checks that data's serialNumber is the content-derived
// one the package documentation defines: the UUIDv5 (URL namespace) of
// SerialPrefix followed by the hex SHA-256 of data with the serial number
// replaced, in place, by the zero one (urn:uuid:00000000-…).
func CheckSerialNumber(data []byte) error {
	var head struct {
		SerialNumber string `json:"serialNumber"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("sbom: not CycloneDX JSON: %w", err)
	}
	if len(head.SerialNumber) != len(zeroSerial) || !strings.HasPrefix(head.SerialNumber, "urn:uuid:") {
		return fmt.Errorf("sbom: serialNumber %q is not urn:uuid:UUID", head.SerialNumber)
	}
	field := []byte(`"serialNumber": "` + head.SerialNumber + `"`)
	if n := bytes.Count(data, field); n != 1 {
		return fmt.Errorf("sbom: serialNumber is written %d times as %s, want once (not a document mkrelease wrote?)", n, field)
	}
	draft := bytes.Replace(data, field, []byte(`"serialNumber": "`+zeroSerial+`"`), 1)
	if want := serialOf(draft); want != head.SerialNumber {
		return fmt.Errorf("sbom: serialNumber %s does not match the content (want %s): the document was changed after it was written", head.SerialNumber, want)
	}
	return nil
}
