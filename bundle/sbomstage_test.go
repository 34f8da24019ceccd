package bundle

import (
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/sbom"
)

// The SBOM's suppliers come from release.toml: [project] supplier for the
// release and its own wheels (a team is an Organization when it says so),
// else the first author as a Person; [[source]] and [[toolchain]] supplier
// for those, else NOASSERTION (never the release's). (demo-app is pure
// Python: one package for both targets.)
func TestSBOMSuppliers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project config.Project
		sources []config.Source
		tools   []config.Toolchain
		want    map[string]string // SPDX id → supplier
	}{
		{"configured",
			config.Project{Supplier: "Organization: demo release team (release@demo.invalid)",
				Authors: []config.Person{{Name: "demo release team", Email: "release@demo.invalid"}}},
			[]config.Source{{Name: "core", Local: "src", Supplier: "Organization: core upstream (core@example.invalid)"}, {Name: "arm-headers", Local: "arm"}},
			[]config.Toolchain{{Name: "go", Supplier: "Organization: Google LLC"}, {Name: "cc", Supplier: "Organization: Debian"}},
			map[string]string{
				"SPDXRef-Package-release-demo-app-2.0":                  "Organization: demo release team (release@demo.invalid)",
				"SPDXRef-Package-wheel-demo-app-2.0-any":                "Organization: demo release team (release@demo.invalid)",
				"SPDXRef-Package-source-core":                           "Organization: core upstream (core@example.invalid)",
				"SPDXRef-Package-source-arm-headers":                    "NOASSERTION",
				"SPDXRef-Package-toolchain-go":                          "Organization: Google LLC",
				"SPDXRef-Package-toolchain-linux-x86-64-cc":             "Organization: Debian",
				"SPDXRef-Package-toolchain-linux-aarch64-cc":            "Organization: Debian",
				"SPDXRef-Package-dependency-linux-x86-64-example-21.12": "NOASSERTION",
			}},
		{"release.toml without suppliers, as before",
			config.Project{Authors: []config.Person{{Name: "demo release team", Email: "release@demo.invalid"}}},
			nil, nil,
			map[string]string{
				"SPDXRef-Package-release-demo-app-2.0":      "Person: demo release team (release@demo.invalid)",
				"SPDXRef-Package-wheel-demo-app-2.0-any":    "Person: demo release team (release@demo.invalid)",
				"SPDXRef-Package-source-core":               "NOASSERTION",
				"SPDXRef-Package-toolchain-go":              "NOASSERTION",
				"SPDXRef-Package-toolchain-linux-x86-64-cc": "NOASSERTION",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, cs := demoRelease(t, t.TempDir(), "linux-x86_64", "linux-aarch64")
			r.Config.Project.Supplier, r.Config.Project.Authors = tc.project.Supplier, tc.project.Authors
			r.Config.Sources, r.Config.Toolchains = tc.sources, tc.tools
			data := releaseSPDX(t, r, cs)
			s, err := sbom.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range s.Packages {
				got[p.ID] = p.Supplier
			}
			for id, want := range tc.want {
				if got[id] != want {
					t.Errorf("%s: supplier %q, want %q", id, got[id], want)
				}
			}
			if want := tc.want["SPDXRef-Package-release-demo-app-2.0"]; len(s.Creators) != 2 || s.Creators[1] != want {
				t.Errorf("creators %q, want the tool and %q", s.Creators, want)
			}
		})
	}
}

// releaseSPDX is the release-wide SPDX document of r, as JSON.
func releaseSPDX(t *testing.T, r *release.Release, cs Closures) []byte {
	t.Helper()
	doc, err := SBOM(r, cs)
	if err != nil {
		t.Fatal(err)
	}
	data, err := sbom.Generate(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
