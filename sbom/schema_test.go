package sbom

import (
	"encoding/json"
	"testing"

	"github.com/mkrelease/mkrelease/internal/spdxschema"
)

func validate(t *testing.T, data []byte) error {
	t.Helper()
	if _, err := spdxschema.Load(); err != nil {
		t.Fatal(err)
	}
	return spdxschema.Validate(data)
}

func TestSchemaValid(t *testing.T) {
	noBundles := realistic()
	for i := range noBundles.Targets {
		noBundles.Targets[i].Bundle = nil
	}
	minimal := Release{Name: "vexl", Version: "0.3.0", Created: epoch, Tool: "mkrelease-0.1.0-dev"}
	minimalTarget := minimal
	minimalTarget.Target, minimalTarget.Targets = "linux-x86_64", []Target{{Name: "linux-x86_64"}}
	for _, tc := range []struct {
		name string
		r    Release
	}{{"realistic", realistic()}, {"no bundles", noBundles}, {"minimal", minimal},
		{"one target", oneTarget(realistic(), "linux-x86_64")}, {"one target, minimal", minimalTarget}} {
		t.Run(tc.name, func(t *testing.T) {
			if err := validate(t, generate(t, tc.r)); err != nil {
				t.Errorf("the document is not valid SPDX 2.3 JSON:\n%v", err)
			}
		})
	}
}

// TestSchemaRejects shows the validator does check: documents broken the
// ways a careless writer would (a nested "files" list in a package, a
// missing identifier, a misspelt relationship type) are refused.
func TestSchemaRejects(t *testing.T) {
	for name, breakIt := range map[string]func(doc map[string]any){
		"package with nested files": func(doc map[string]any) {
			doc["packages"].([]any)[0].(map[string]any)["files"] = []any{}
		},
		"package without SPDXID": func(doc map[string]any) {
			delete(doc["packages"].([]any)[0].(map[string]any), "SPDXID")
		},
		"file without checksums": func(doc map[string]any) {
			doc["files"].([]any)[0].(map[string]any)["checksums"] = []any{}
		},
		"unknown relationship": func(doc map[string]any) {
			doc["relationships"].([]any)[0].(map[string]any)["relationshipType"] = "BUNDLES"
		},
	} {
		t.Run(name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(generate(t, realistic()), &doc); err != nil {
				t.Fatal(err)
			}
			breakIt(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if validate(t, data) == nil {
				t.Error("the schema accepted a broken document")
			}
		})
	}
}
