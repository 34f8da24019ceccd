package bundle

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/artdiff"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/spdxschema"
	"github.com/mkrelease/mkrelease/sbom"
)

// TestBundleDependsOnItsTargetAlone writes each target's bundle from a
// release that builds that target alone and from one that builds both:
// the two bundles are byte for byte the same, hold nothing of the other
// target (its toolchain, the source only it reads, its dependencies), pass
// Open, and carry a valid SPDX 2.3 document of their own target.
func TestBundleDependsOnItsTargetAlone(t *testing.T) {
	both := []string{"linux-x86_64", "linux-aarch64"}
	for _, tc := range []struct {
		target string
		// foreign are strings only the other target's inputs hold.
		foreign []string
		// sbomPackages are the packages the target's SBOM must name, by
		// SPDX name.
		sbomPackages []string
	}{
		{"linux-x86_64", []string{"aarch64", "arm-headers", "arm-tweaks", "armonly"},
			[]string{"cc", "core", "demo-app", "demo-app", "example", "go"}},
		{"linux-aarch64", []string{"x86_64", "x86-64", "gcc (Debian 12.2.0-14+deb12u1)"},
			[]string{"arm-headers", "arm-tweaks", "armonly", "cc", "core", "demo-app", "demo-app", "example", "go"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			write := func(build ...string) string {
				r, cs := demoRelease(t, t.TempDir(), build...)
				if err := (Stage{Closures: cs}).writeBundle(context.Background(), r, tc.target, ""); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(r.Stage, dist.NamesOf("demo-app", "2.0").Bundle(tc.target))
			}
			alone, withOther := write(tc.target), write(both...)
			a, err := os.ReadFile(alone)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(withOther)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a, b) {
				d, err := artdiff.Compare(filepath.Base(alone), alone, withOther)
				t.Fatalf("the bundle differs when the release also builds the other target: %v %v", d, err)
			}

			files := readBundle(t, withOther)
			for name, data := range files {
				for _, f := range tc.foreign {
					if bytes.Contains(data, []byte(f)) {
						t.Errorf("%s holds %q, which only the other target's inputs hold", name, f)
					}
				}
			}
			o, rep, err := Open(context.Background(), withOther)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := rep.Err(); err != nil {
				t.Errorf("Open refuses the bundle: %v", err)
			}

			doc, ok := files["demo-app-2.0-"+tc.target+".spdx.json"]
			if !ok {
				t.Fatalf("no SBOM demo-app-2.0-%s.spdx.json among %v", tc.target, slices.Sorted(maps.Keys(files)))
			}
			if err := spdxschema.Validate(doc); err != nil {
				t.Errorf("the bundle's SBOM is not valid SPDX 2.3:\n%v", err)
			}
			if err := sbom.CheckNamespace(doc); err != nil {
				t.Errorf("the bundle's SBOM: %v", err)
			}
			s, err := sbom.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			if want := "demo-app-2.0-" + tc.target; s.Name != want {
				t.Errorf("SBOM name %q, want %q", s.Name, want)
			}
			var names []string
			for _, p := range s.Packages {
				names = append(names, p.Name)
			}
			// Packages are sorted by identifier; compare as sets.
			if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(tc.sbomPackages))) {
				t.Errorf("SBOM packages %v, want %v", names, tc.sbomPackages)
			}
			// The wheels it records are those of the bundle, digest for digest.
			for _, p := range s.Packages {
				if p.FileName == "" {
					continue
				}
				dir := "dependencies/"
				if p.Name == "demo-app" {
					dir = "wheels/"
				}
				data, ok := files[dir+p.FileName]
				if !ok {
					t.Errorf("the SBOM names %s, which is not in the bundle", p.FileName)
				} else if sum := checksum.Bytes(data); sum != p.SHA256 {
					t.Errorf("the SBOM records sha256 %s for %s, the bundle's file has %s", p.SHA256, p.FileName, sum)
				}
			}

			// The CycloneDX document beside it: the same wheels, digest for
			// digest, and its serial number derived from its content.
			cdx, ok := files["demo-app-2.0-"+tc.target+".cdx.json"]
			if !ok {
				t.Fatalf("no CycloneDX SBOM demo-app-2.0-%s.cdx.json among %v", tc.target, slices.Sorted(maps.Keys(files)))
			}
			if err := sbom.CheckSerialNumber(cdx); err != nil {
				t.Errorf("the bundle's CycloneDX SBOM: %v", err)
			}
			cs, err := sbom.ParseCycloneDX(cdx)
			if err != nil {
				t.Fatal(err)
			}
			spdxWheels, cdxWheels := map[string]string{}, map[string]string{}
			for _, p := range s.Packages {
				if p.FileName != "" {
					spdxWheels[p.FileName] = p.SHA256
				}
			}
			for _, c := range cs.Components {
				if c.FileName != "" {
					cdxWheels[c.FileName] = c.SHA256
				}
			}
			if len(cdxWheels) == 0 || !maps.Equal(cdxWheels, spdxWheels) {
				t.Errorf("the CycloneDX SBOM records wheels %v, the SPDX SBOM %v", cdxWheels, spdxWheels)
			}
		})
	}

	// The release's own SBOM still describes both targets.
	r, cs := demoRelease(t, t.TempDir(), both...)
	data := releaseSPDX(t, r, cs)
	for _, want := range []string{"SPDXRef-Package-toolchain-linux-aarch64-cc", "SPDXRef-Package-toolchain-linux-x86-64-cc", "SPDXRef-Package-source-arm-headers", "armonly"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("the release's SBOM lacks %s", want)
		}
	}
}

// Without what the sources stage found there is nothing honest to write.
func TestSBOMNeedsTheSources(t *testing.T) {
	r, cs := demoRelease(t, t.TempDir(), "linux-x86_64")
	r.Found = nil
	for name, describe := range map[string]func() error{
		"release":      func() error { _, err := SBOM(r, cs); return err },
		"linux-x86_64": func() error { _, err := TargetSBOM(r, cs, "linux-x86_64"); return err },
	} {
		if err := describe(); err == nil || !strings.Contains(err.Error(), "sources stage") {
			t.Errorf("%s: %v, want an error naming the sources stage", name, err)
		}
	}
}
