package sbom

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/pyname"
)

// The NTIA minimum elements ("The Minimum Elements For a Software Bill of
// Materials", 2021) as SPDX 2.3 Annex K maps them: supplier → supplier,
// component name → name, version → versionInfo, other unique identifiers
// → SPDXID (and the purl), dependency relationship → relationships,
// author of SBOM data → creationInfo.creators, timestamp →
// creationInfo.created. Checked here on the raw JSON, independently of
// Parse, plus a checksum on every file and wheel.

type rawDoc struct {
	CreationInfo struct {
		Creators []string `json:"creators"`
		Created  string   `json:"created"`
	} `json:"creationInfo"`
	Packages []struct {
		SPDXID    string `json:"SPDXID"`
		Name      string `json:"name"`
		Version   string `json:"versionInfo"`
		FileName  string `json:"packageFileName"`
		Supplier  string `json:"supplier"`
		Checksums []struct {
			Algorithm string `json:"algorithm"`
			Value     string `json:"checksumValue"`
		} `json:"checksums"`
		ExternalRefs []struct {
			Type    string `json:"referenceType"`
			Locator string `json:"referenceLocator"`
		} `json:"externalRefs"`
	} `json:"packages"`
	Files []struct {
		SPDXID    string `json:"SPDXID"`
		Name      string `json:"fileName"`
		Checksums []struct {
			Algorithm string `json:"algorithm"`
			Value     string `json:"checksumValue"`
		} `json:"checksums"`
	} `json:"files"`
	Relationships []struct {
		A    string `json:"spdxElementId"`
		Type string `json:"relationshipType"`
		B    string `json:"relatedSpdxElement"`
	} `json:"relationships"`
}

func TestNTIAMinimumElements(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Release
	}{{"release", realistic()}, {"one target", oneTarget(realistic(), "linux-x86_64")}} {
		t.Run(tc.name, func(t *testing.T) { checkNTIA(t, tc.r) })
	}
}

// checkNTIA checks the minimum elements in the document of r.
func checkNTIA(t *testing.T, r Release) {
	t.Helper()
	var doc rawDoc
	if err := json.Unmarshal(generate(t, r), &doc); err != nil {
		t.Fatal(err)
	}

	// Author of the SBOM data and timestamp.
	if want := []string{"Tool: mkrelease-0.1.0-dev", "Organization: vexl release team (release@vexl.invalid)"}; !slices.Equal(doc.CreationInfo.Creators, want) {
		t.Errorf("creators = %q, want %q", doc.CreationInfo.Creators, want)
	}
	if want := time.Unix(epoch, 0).UTC().Format("2006-01-02T15:04:05Z"); doc.CreationInfo.Created != want {
		t.Errorf("created = %q, want %q (SOURCE_DATE_EPOCH)", doc.CreationInfo.Created, want)
	}

	// What every package must say, from the input: supplier (NOASSERTION
	// only where the input has none) and checksum.
	type want struct{ supplier, sha256, purl string }
	wants := map[string]want{
		"SPDXRef-Package-release-vexl-0.3.0": {supplier: r.Supplier},
	}
	for _, tg := range r.Targets {
		for _, p := range tg.Wheels {
			// The release's own wheels: the release's supplier.
			wants[pkgID("wheel", tg.Name, p)] = want{r.Supplier, p.SHA256, "pkg:pypi/" + pyname.Normalize(p.Name) + "@" + p.Version + "?file_name=" + p.FileName}
		}
		for _, p := range tg.Dependencies {
			s := p.Supplier
			if s == "" {
				s = "NOASSERTION" // truly unknown: the wheel's metadata names nobody
			}
			wants[pkgID("dependency", tg.Name, p)] = want{s, p.SHA256, "pkg:pypi/" + pyname.Normalize(p.Name) + "@" + p.Version + "?file_name=" + p.FileName}
		}
	}
	// Sources and toolchains: the supplier release.toml gives them, else
	// NOASSERTION (never the release's: a source is the upstream's).
	orNone := func(s string) string {
		if s == "" {
			return "NOASSERTION"
		}
		return s
	}
	for _, s := range r.Sources {
		wants["SPDXRef-Package-source-"+idPart(s.Name)] = want{supplier: orNone(s.Supplier)}
	}
	described := map[string]bool{"": true}
	for _, tg := range r.Targets {
		described[tg.Name] = true
	}
	for _, tc := range r.Toolchains {
		if !described[tc.Target] {
			continue
		}
		id := "SPDXRef-Package-toolchain-" + idPart(tc.Name)
		if tc.Target != "" {
			id = "SPDXRef-Package-toolchain-" + idPart(tc.Target) + "-" + idPart(tc.Name)
		}
		wants[id] = want{supplier: orNone(tc.Supplier)}
	}
	idPattern := regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)
	seen := map[string]bool{"SPDXRef-DOCUMENT": true}
	unique := func(id string) {
		if !idPattern.MatchString(id) {
			t.Errorf("identifier %q is not SPDXRef-[A-Za-z0-9.-]+", id)
		}
		if seen[id] {
			t.Errorf("identifier %s is not unique", id)
		}
		seen[id] = true
	}
	for _, p := range doc.Packages {
		unique(p.SPDXID)
		if p.Name == "" || p.Version == "" {
			t.Errorf("%s: name %q, version %q: both are minimum elements", p.SPDXID, p.Name, p.Version)
		}
		if p.Supplier == "" {
			t.Errorf("%s: no supplier", p.SPDXID)
		}
		w, described := wants[p.SPDXID]
		switch {
		case described:
			if got := strings.TrimSpace(p.Supplier); got != w.supplier {
				t.Errorf("%s: supplier %q, want %q", p.SPDXID, got, w.supplier)
			}
			delete(wants, p.SPDXID)
		case p.Supplier != "NOASSERTION":
			t.Errorf("%s: supplier %q, but nothing in the input names one", p.SPDXID, p.Supplier)
		}
		if p.FileName != "" || w.sha256 != "" {
			if len(p.Checksums) != 1 || p.Checksums[0].Algorithm != "SHA256" || p.Checksums[0].Value != w.sha256 {
				t.Errorf("%s (%s): checksums %v, want SHA256 %s", p.SPDXID, p.FileName, p.Checksums, w.sha256)
			}
		}
		if w.purl != "" {
			if len(p.ExternalRefs) != 1 || p.ExternalRefs[0].Type != "purl" || p.ExternalRefs[0].Locator != w.purl {
				t.Errorf("%s: external refs %v, want purl %s", p.SPDXID, p.ExternalRefs, w.purl)
			}
		}
	}
	for id := range wants {
		t.Errorf("no package %s", id)
	}
	for _, f := range doc.Files {
		unique(f.SPDXID)
		algs := map[string]bool{}
		for _, c := range f.Checksums {
			algs[c.Algorithm] = true
		}
		if !algs["SHA1"] || !algs["SHA256"] {
			t.Errorf("file %s: checksums %v, want SHA1 (SPDX §8.4) and SHA256", f.Name, f.Checksums)
		}
	}

	// Dependency relationships: every input requirement is there, and
	// every wheel and dependency is reachable from what the document
	// describes.
	edges := map[string][]string{}
	has := map[[3]string]bool{}
	for _, rel := range doc.Relationships {
		edges[rel.A] = append(edges[rel.A], rel.B)
		has[[3]string{rel.A, rel.Type, rel.B}] = true
	}
	for _, tg := range r.Targets {
		ids := map[string]string{}
		for _, p := range tg.Wheels {
			ids[pyname.Normalize(p.Name)] = pkgID("wheel", tg.Name, p)
			if !has[[3]string{"SPDXRef-Package-release-vexl-0.3.0", "CONTAINS", pkgID("wheel", tg.Name, p)}] {
				t.Errorf("the release does not CONTAIN %s", pkgID("wheel", tg.Name, p))
			}
		}
		for _, p := range tg.Dependencies {
			ids[pyname.Normalize(p.Name)] = pkgID("dependency", tg.Name, p)
		}
		for _, ps := range [][]Package{tg.Wheels, tg.Dependencies} {
			for _, p := range ps {
				from := ids[pyname.Normalize(p.Name)]
				for _, d := range p.DependsOn {
					if !has[[3]string{from, "DEPENDS_ON", ids[pyname.Normalize(d)]}] {
						t.Errorf("missing %s DEPENDS_ON %s", from, ids[pyname.Normalize(d)])
					}
				}
			}
		}
	}
	if !has[[3]string{"SPDXRef-Package-wheel-linux-x86-64-vexl-plugin-0.3.0", "DEPENDS_ON", "SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0"}] {
		t.Error("the plugin wheel does not DEPEND_ON the compiler wheel")
	}
	reached := map[string]bool{}
	var visit func(string)
	visit = func(id string) {
		if reached[id] {
			return
		}
		reached[id] = true
		for _, next := range edges[id] {
			visit(next)
		}
	}
	visit("SPDXRef-DOCUMENT")
	for _, p := range doc.Packages {
		if !reached[p.SPDXID] && !strings.HasPrefix(p.SPDXID, "SPDXRef-Package-toolchain-") {
			t.Errorf("%s is not reachable from SPDXRef-DOCUMENT", p.SPDXID)
		}
	}
}

func pkgID(kind, target string, p Package) string {
	return "SPDXRef-Package-" + kind + "-" + idPart(target) + "-" + pyname.Normalize(p.Name) + "-" + idPart(p.Version)
}
