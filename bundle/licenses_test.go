package bundle

import (
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/bundle/deps"
)

func TestLicenseInventory(t *testing.T) {
	cl := &deps.Closure{
		Own: []deps.Resolved{{Name: "vexl-plugin", Version: "0.3.0", License: deps.License{Expression: "Apache-2.0"},
			LicenseFiles: []deps.LicenseFile{{Path: "vexl_plugin-0.3.0.dist-info/licenses/LICENSE", Data: []byte("Apache License text")}}}},
		Packages: []deps.Resolved{
			{Name: "example", Version: "21.12", License: deps.License{Text: "Apache Software License"}},
			{Name: "mystery", Version: "1.0"},
			{Name: "classic", Version: "2.0", License: deps.License{Classifiers: []string{"License :: OSI Approved :: MIT License"}},
				LicenseFiles: []deps.LicenseFile{{Path: "classic-2.0.dist-info/LICENSE"}}},
		},
	}
	files := licenseEntries(cl)
	for _, want := range []string{"licenses/vexl-plugin-0.3.0.txt", "licenses/example-21.12.txt", "licenses/mystery-1.0.txt", "licenses/classic-2.0.txt", "licenses/THIRD_PARTY_LICENSES.txt"} {
		if _, ok := files[want]; !ok {
			t.Errorf("missing %s (have %v)", want, files)
		}
	}
	for name, want := range map[string][]string{
		"licenses/vexl-plugin-0.3.0.txt": {"License-Expression: Apache-2.0", "--- vexl_plugin-0.3.0.dist-info/licenses/LICENSE ---", "Apache License text", "part of this release"},
		"licenses/mystery-1.0.txt":       {"NO LICENSE INFORMATION FOUND", "License files: none in the wheel"},
		"licenses/classic-2.0.txt":       {"Classifier: License :: OSI Approved :: MIT License", "Declared in the SBOM as: MIT", "(too large to include"},
	} {
		for _, w := range want {
			if !strings.Contains(string(files[name]), w) {
				t.Errorf("%s lacks %q:\n%s", name, w, files[name])
			}
		}
	}
	third := string(files["licenses/THIRD_PARTY_LICENSES.txt"])
	for _, w := range []string{"example 21.12", "mystery 1.0", "NO LICENSE INFORMATION FOUND", "classic 2.0"} {
		if !strings.Contains(third, w) {
			t.Errorf("THIRD_PARTY_LICENSES.txt lacks %q", w)
		}
	}
	if strings.Contains(third, "vexl-plugin") {
		t.Error("the release's own wheels are listed as third-party")
	}
}
