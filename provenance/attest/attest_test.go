package attest

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
)

func TestInvocationIDIsAnRFC9562UUID(t *testing.T) {
	uuid := regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 64 {
		id := InvocationID(func(string) string { return "" })
		if !uuid.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}
	if got := InvocationID(func(k string) string { return gh[k] }); got != "https://github.com/o/r/actions/runs/7/attempts/2" {
		t.Errorf("GitHub run: %s", got)
	}
}

// TestMaterialsToolchains checks that each toolchain is a resolved
// dependency with the digest of its executable and its version line.
func TestMaterialsToolchains(t *testing.T) {
	goSHA, ccSHA := strings.Repeat("a", 64), strings.Repeat("b", 64)
	m := &dist.Manifest{Toolchains: []dist.ManifestToolchain{
		{Name: "go", Version: "go version go1.26.8 linux/amd64", SHA256: goSHA},
		{Name: "mingw-gcc", Target: "windows-x86_64", Version: "x86_64-w64-mingw32-gcc (GCC) 12-win32", SHA256: ccSHA},
	}}
	got := Materials(m)
	want := []provenance.Dependency{
		{Name: "toolchain:go", URI: "urn:mkrelease:toolchain:go", Digest: map[string]string{"sha256": goSHA},
			Annotations: map[string]any{"version": "go version go1.26.8 linux/amd64"}},
		{Name: "toolchain:mingw-gcc [windows-x86_64]", URI: "urn:mkrelease:toolchain:mingw-gcc:windows-x86_64", Digest: map[string]string{"sha256": ccSHA},
			Annotations: map[string]any{"version": "x86_64-w64-mingw32-gcc (GCC) 12-win32"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Materials = %+v\nwant %+v", got, want)
	}
}
