package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/sbom"
)

// TestSBOMFindings checks both SBOMs of a folder against its wheel: the
// SPDX and the CycloneDX document each must be present, carry its
// content-derived identifier and record the wheel's digest.
func TestSBOMFindings(t *testing.T) {
	const whl = "demo-1.0-py3-none-any.whl"
	wheelData := []byte("the wheel")
	doc := func(sha string) sbom.Release {
		return sbom.Release{Name: "demo", Version: "1.0", Created: 1793491200, Tool: "mkrelease-0.1.0-dev",
			Targets: []sbom.Target{{Name: "linux-x86_64", Wheels: []sbom.Package{{Name: "demo", Version: "1.0", FileName: whl, SHA256: sha}}}}}
	}
	encode := func(t *testing.T, r sbom.Release) (spdx, cdx []byte) {
		m, err := sbom.Build(r)
		if err != nil {
			t.Fatal(err)
		}
		if spdx, err = m.SPDX(); err != nil {
			t.Fatal(err)
		}
		if cdx, err = m.CycloneDX(); err != nil {
			t.Fatal(err)
		}
		return spdx, cdx
	}
	good, goodCDX := encode(t, doc(checksum.Bytes(wheelData)))
	_, otherCDX := encode(t, doc(checksum.Bytes([]byte("another wheel"))))
	names := dist.NamesOf("demo", "1.0")
	for _, tc := range []struct {
		name  string
		files map[string][]byte
		want  []string // substrings of the findings, in order; none for a clean folder
	}{
		{"both agree with the wheel", map[string][]byte{names.SBOM(): good, names.CycloneDX(): goodCDX}, nil},
		{"the CycloneDX document records another digest", map[string][]byte{names.SBOM(): good, names.CycloneDX(): otherCDX},
			[]string{whl + ": the CycloneDX SBOM records sha256 " + checksum.Bytes([]byte("another wheel"))}},
		{"no CycloneDX document", map[string][]byte{names.SBOM(): good},
			[]string{"no CycloneDX SBOM (NAME-VERSION.cdx.json) in the folder"}},
		{"a CycloneDX document changed after it was written", map[string][]byte{names.SBOM(): good,
			names.CycloneDX(): []byte(strings.Replace(string(goodCDX), `"name": "demo"`, `"name": "demo2"`, 1))},
			[]string{names.CycloneDX() + ": sbom: serialNumber"}},
		{"not a CycloneDX document", map[string][]byte{names.SBOM(): good, names.CycloneDX(): good},
			[]string{names.CycloneDX() + ": sbom: bomFormat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.files[whl] = wheelData
			for name, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rel, err := dist.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			fs := sbomFindings(rel, nil)
			var got []string
			for _, f := range fs {
				line := f.Msg
				if f.File != "" {
					line = f.File + ": " + f.Msg
				}
				got = append(got, line)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("findings %q, want %d: %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("finding %q, want it to contain %q", got[i], w)
				}
			}
		})
	}
}
