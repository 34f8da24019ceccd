package sbom

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx/v2/common"
)

// TestToolsGolangRoundTrip reads the output with tools-golang's own JSON
// reader, writes it back with the same options, and gets the same bytes;
// the checksums it reads are the ones given.
func TestToolsGolangRoundTrip(t *testing.T) {
	r := realistic()
	out := generate(t, r)
	doc, err := spdxjson.Read(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("tools-golang cannot read the output: %v", err)
	}
	var back bytes.Buffer
	if err := spdxjson.Write(doc, &back, spdxjson.Indent("  "), spdxjson.EscapeHTML(false)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), out) {
		t.Errorf("read and written back, the document changed:\n%s", firstDiff(out, back.Bytes()))
	}

	given := map[string]string{} // file name → sha256
	for _, tg := range r.Targets {
		for _, ps := range [][]Package{tg.Wheels, tg.Dependencies} {
			for _, p := range ps {
				given[p.FileName] = p.SHA256
			}
		}
	}
	n := 0
	for _, p := range doc.Packages {
		if p.PackageFileName == "" {
			continue
		}
		n++
		if len(p.PackageChecksums) != 1 || p.PackageChecksums[0].Algorithm != common.SHA256 || p.PackageChecksums[0].Value != given[p.PackageFileName] {
			t.Errorf("%s: checksums %v, want SHA256 %s", p.PackageFileName, p.PackageChecksums, given[p.PackageFileName])
		}
	}
	if n != 10 { // 2 targets × (2 wheels + 3 dependencies)
		t.Errorf("%d packages with a file name, want 10", n)
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ":\n- " + al[i] + "\n+ " + bl[i]
		}
	}
	return "lengths differ"
}

func TestParse(t *testing.T) {
	r := realistic()
	s, err := Parse(generate(t, r))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "vexl-0.3.0" || !strings.HasPrefix(s.Namespace, NamespacePrefix+"vexl-0.3.0-") || s.Created != "2026-11-01T00:00:00Z" {
		t.Errorf("document = %q %q %q", s.Name, s.Namespace, s.Created)
	}
	if len(s.Creators) != 2 || s.Creators[0] != "Tool: mkrelease-0.1.0-dev" {
		t.Errorf("creators = %q", s.Creators)
	}
	wantDescribes := []string{"SPDXRef-File-bundle-linux-aarch64", "SPDXRef-File-bundle-linux-x86-64", "SPDXRef-Package-release-vexl-0.3.0"}
	if strings.Join(s.Describes, " ") != strings.Join(wantDescribes, " ") {
		t.Errorf("describes = %q, want %q", s.Describes, wantDescribes)
	}

	// What a verifier compares: every file-backed package's checksum, by
	// file name, is the one given.
	byFile := map[string]PackageInfo{}
	for _, p := range s.Packages {
		if p.FileName != "" {
			byFile[p.FileName+" "+p.ID] = p
		}
	}
	for _, tg := range r.Targets {
		for kind, ps := range map[string][]Package{"wheel": tg.Wheels, "dependency": tg.Dependencies} {
			for _, p := range ps {
				got, ok := byFile[p.FileName+" "+pkgID(kind, tg.Name, p)]
				if !ok {
					t.Errorf("Parse: no package for %s", p.FileName)
					continue
				}
				if got.SHA256 != p.SHA256 || got.PURL == "" || got.Version != p.Version {
					t.Errorf("Parse: %s = %+v, want sha256 %s", p.FileName, got, p.SHA256)
				}
			}
		}
	}
	if len(byFile) != 10 {
		t.Errorf("Parse: %d file-backed packages, want 10", len(byFile))
	}
	files := map[string]FileInfo{}
	for _, f := range s.Files {
		files[f.Name] = f
	}
	if f := files["./vexl-0.3.0-linux-x86_64.tar.gz"]; f.SHA256 != r.Targets[0].Bundle.SHA256 || f.SHA1 != r.Targets[0].Bundle.SHA1 {
		t.Errorf("Parse: bundle = %+v", f)
	}
	if f := files["./backend/overlays/0001-fused-fast-path.patch"]; f.SHA256 != r.Overlays[0].SHA256 || f.SHA1 != r.Overlays[0].SHA1 {
		t.Errorf("Parse: overlay = %+v", f)
	}
	for _, p := range s.Packages {
		if p.ID == "SPDXRef-Package-source-runtime-headers" && p.SHA256 != r.Sources[2].SHA256 {
			t.Errorf("Parse: archive source sha256 = %q", p.SHA256)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	good := string(generate(t, realistic()))
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"not JSON", "SPDXVersion: SPDX-2.3\n", "not SPDX JSON"},
		{"other version", strings.Replace(good, `"SPDX-2.3"`, `"SPDX-2.2"`, 1), "want \"SPDX-2.3\""},
		{"identifier twice", strings.Replace(good, "SPDXRef-Package-source-vexl-python\"", "SPDXRef-Package-source-vexl\"", 1), "defined twice"},
		{"dangling relationship", strings.Replace(good, `"relatedSpdxElement": "SPDXRef-Package-source-vexl-python"`, `"relatedSpdxElement": "SPDXRef-Package-source-gone"`, 1), "not defined"},
		{"bad checksum", strings.Replace(good, `"checksumValue": "`, `"checksumValue": "Z`, 1), "lower-case hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == good {
				t.Fatal("the edit did not apply")
			}
			_, err := Parse([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCheckNamespace(t *testing.T) {
	out := generate(t, realistic())
	if err := CheckNamespace(out); err != nil {
		t.Fatalf("CheckNamespace(output) = %v", err)
	}
	s, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	sha := s.Packages[0].SHA256
	for _, tc := range []struct{ name, doc, want string }{
		{"a checksum changed", strings.Replace(string(out), sha, sum256("swapped"), 1), "does not match"},
		{"a comment changed", strings.Replace(string(out), "Toolchain for every target.", "Toolchain.", 1), "does not match"},
		{"namespace replaced", strings.Replace(string(out), s.Namespace, "https://example.org/spdx/vexl", 1), "is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.doc == string(out) {
				t.Fatal("the edit did not apply")
			}
			err := CheckNamespace([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckNamespace = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
