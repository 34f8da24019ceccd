package bundle

import (
	"reflect"
	"testing"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// manifest.json lists a target's dependency wheels from its closure: the
// closure's packages (not the release's own wheels), by file name, with
// an http(s) download URL alone.
func TestClosuresDependencies(t *testing.T) {
	cs := Closures{
		"linux-x86_64": &deps.Closure{
			Own: []deps.Resolved{{Name: "demo", Version: "1.0", Own: true, Files: []deps.File{{Name: "demo-1.0-py3-none-any.whl", SHA256: "aa", Size: 1}}}},
			Packages: []deps.Resolved{
				{Name: "attrs", Version: "23.1.0", Files: []deps.File{{Name: "attrs-23.1.0-py3-none-any.whl", SHA256: "bb", Size: 2, URL: "https://files.example/attrs-23.1.0-py3-none-any.whl"}}},
				{Name: "local", Version: "2.0", Files: []deps.File{
					{Name: "local-2.0-cp311-cp311-linux_x86_64.whl", SHA256: "cc", Size: 3, URL: "file:///wheels/local-2.0-cp311-cp311-linux_x86_64.whl"},
					{Name: "local-2.0-cp312-cp312-linux_x86_64.whl", SHA256: "dd", Size: 4}}},
			},
		},
		"linux-aarch64": &deps.Closure{Own: []deps.Resolved{{Name: "demo", Version: "1.0", Own: true}}},
	}
	for _, tc := range []struct {
		target string
		want   []dist.ManifestArtifact
	}{
		{"linux-x86_64", []dist.ManifestArtifact{
			{Path: "attrs-23.1.0-py3-none-any.whl", Name: "attrs==23.1.0", Size: 2, SHA256: "bb", URL: "https://files.example/attrs-23.1.0-py3-none-any.whl"},
			{Path: "local-2.0-cp311-cp311-linux_x86_64.whl", Name: "local==2.0", Size: 3, SHA256: "cc"},
			{Path: "local-2.0-cp312-cp312-linux_x86_64.whl", Name: "local==2.0", Size: 4, SHA256: "dd"},
		}},
		{"linux-aarch64", nil},  // no dependencies
		{"windows-x86_64", nil}, // no closure (no wheels)
	} {
		t.Run(tc.target, func(t *testing.T) {
			if got := cs.Dependencies(tc.target); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Dependencies(%s) = %+v, want %+v", tc.target, got, tc.want)
			}
		})
	}
}
