package sbom

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testpart"
)

func generateCDX(t *testing.T, r Release) []byte {
	t.Helper()
	out, err := GenerateCycloneDX(r)
	if err != nil {
		t.Fatalf("GenerateCycloneDX: %v", err)
	}
	return out
}

// cdxDoc is the part of a CycloneDX document the tests read.
type cdxDoc struct {
	SerialNumber string `json:"serialNumber"`
	Metadata     struct {
		Timestamp string `json:"timestamp"`
		Tools     struct {
			Components []struct{ Name, Version string } `json:"components"`
		} `json:"tools"`
		Manufacturer *cdxEntity   `json:"manufacturer"`
		Authors      []cdxContact `json:"authors"`
		Component    cdxComponent `json:"component"`
		Supplier     *cdxEntity   `json:"supplier"`
	} `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Dependencies []cdxDependency `json:"dependencies"`
}

func readCDX(t *testing.T, data []byte) cdxDoc {
	t.Helper()
	var d cdxDoc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func (d cdxDoc) component(t *testing.T, ref string) cdxComponent {
	t.Helper()
	for _, c := range d.Components {
		if c.BOMRef == ref {
			return c
		}
	}
	t.Fatalf("no component %s", ref)
	return cdxComponent{}
}

// TestCycloneDXSameFacts checks that the CycloneDX document says what the
// SPDX document of the same release says: the same elements (bom-ref =
// SPDX identifier), names, versions, purls and digests, and a dependency
// for each relationship the mapping names.
func TestCycloneDXSameFacts(t *testing.T) {
	r := realistic()
	spdx, err := Parse(generate(t, r))
	if err != nil {
		t.Fatal(err)
	}
	d := readCDX(t, generateCDX(t, r))
	if got := d.Metadata.Component.BOMRef; got != "Package-release-vexl-0.3.0" {
		t.Errorf("metadata.component is %s, want the release", got)
	}
	refs := map[string]cdxComponent{d.Metadata.Component.BOMRef: d.Metadata.Component}
	for _, c := range d.Components {
		refs[c.BOMRef] = c
	}
	if len(refs) != len(spdx.Packages)+len(spdx.Files) {
		t.Errorf("%d components (with the release), SPDX has %d packages and %d files", len(refs), len(spdx.Packages), len(spdx.Files))
	}
	hash := func(c cdxComponent, alg string) string {
		for _, h := range c.Hashes {
			if h.Alg == alg {
				return h.Content
			}
		}
		return ""
	}
	for _, p := range spdx.Packages {
		c, ok := refs[strings.TrimPrefix(p.ID, "SPDXRef-")]
		if !ok {
			t.Errorf("SPDX package %s has no component", p.ID)
			continue
		}
		if c.Name != p.Name || c.Version != p.Version || c.PURL != p.PURL || hash(c, "SHA-256") != p.SHA256 {
			t.Errorf("component %s = %s %s %s %s, SPDX says %s %s %s %s", c.BOMRef, c.Name, c.Version, c.PURL, hash(c, "SHA-256"),
				p.Name, p.Version, p.PURL, p.SHA256)
		}
	}
	for _, f := range spdx.Files {
		c, ok := refs[strings.TrimPrefix(f.ID, "SPDXRef-")]
		if !ok || c.Type != "file" || "./"+c.Name != f.Name || hash(c, "SHA-1") != f.SHA1 || hash(c, "SHA-256") != f.SHA256 {
			t.Errorf("SPDX file %s %s (sha1 %s sha256 %s) has no such file component: %+v", f.ID, f.Name, f.SHA1, f.SHA256, c)
		}
	}
	dependsOn := map[string][]string{}
	for _, dep := range d.Dependencies {
		if _, ok := refs[dep.Ref]; !ok {
			t.Errorf("dependency of %s, which is no component", dep.Ref)
		}
		dependsOn[dep.Ref] = dep.DependsOn
	}
	if len(dependsOn) != len(refs) {
		t.Errorf("%d dependency entries for %d components: every component has one", len(dependsOn), len(refs))
	}
	for _, rel := range spdx.Relationships {
		a, b := strings.TrimPrefix(rel.From, "SPDXRef-"), strings.TrimPrefix(rel.To, "SPDXRef-")
		switch rel.Type {
		case "DESCRIBES":
			continue
		case "BUILD_TOOL_OF":
			a, b = b, a
		}
		if !slices.Contains(dependsOn[a], b) {
			t.Errorf("SPDX %s %s %s: %s does not depend on %s", rel.From, rel.Type, rel.To, a, b)
		}
	}
}

func TestCycloneDXContent(t *testing.T) {
	d := readCDX(t, generateCDX(t, realistic()))
	if d.Metadata.Timestamp != "2026-11-01T00:00:00Z" {
		t.Errorf("timestamp %s, want the SOURCE_DATE_EPOCH 2026-11-01T00:00:00Z", d.Metadata.Timestamp)
	}
	if tools := d.Metadata.Tools.Components; len(tools) != 1 || tools[0].Name != "mkrelease" || tools[0].Version != "0.1.0-dev" {
		t.Errorf("tools = %+v, want mkrelease 0.1.0-dev", tools)
	}
	org := &cdxEntity{Name: "vexl release team", Contact: []cdxContact{{Email: "release@vexl.invalid"}}}
	for what, got := range map[string]*cdxEntity{"metadata.supplier": d.Metadata.Supplier, "metadata.manufacturer": d.Metadata.Manufacturer,
		"the release's supplier": d.Metadata.Component.Supplier} {
		if got == nil || got.Name != org.Name || !slices.Equal(got.Contact, org.Contact) {
			t.Errorf("%s = %+v, want the Organization %+v", what, got, org)
		}
	}
	if d.Metadata.Authors != nil {
		t.Errorf("metadata.authors = %+v: an Organization supplier manufactures the BOM, no person authors it", d.Metadata.Authors)
	}
	if l := d.Metadata.Component.Licenses; len(l) != 1 || l[0].Expression != "Apache-2.0" {
		t.Errorf("the release's licenses = %+v, want the expression Apache-2.0", l)
	}

	whl := d.component(t, "Package-wheel-linux-x86-64-vexl-compiler-0.3.0")
	if whl.Type != "library" || whl.PURL != "pkg:pypi/vexl-compiler@0.3.0?file_name=vexl_compiler-0.3.0-py3-none-manylinux_2_34_x86_64.whl" ||
		len(whl.Hashes) != 1 || whl.Hashes[0] != (cdxHash{Alg: "SHA-256", Content: sum256("compiler linux-x86_64")}) {
		t.Errorf("wheel component = %+v", whl)
	}
	if whl.Supplier == nil || whl.Supplier.Name != "vexl release team" || len(whl.Licenses) != 1 || whl.Licenses[0].Expression != "Apache-2.0" {
		t.Errorf("the release's wheel does not inherit its supplier and license: %+v", whl)
	}
	numpy := d.component(t, "Package-dependency-linux-x86-64-numpy-2.1.3")
	if numpy.Supplier == nil || numpy.Supplier.Name != "Travis E. Oliphant et al." || len(numpy.Authors) != 1 || numpy.Authors[0].Name != "Travis E. Oliphant et al." {
		t.Errorf("a Person supplier is the supplier and the author: %+v %+v", numpy.Supplier, numpy.Authors)
	}
	if refs := numpy.ExternalReferences; len(refs) != 1 || refs[0].Type != "distribution" || !strings.HasPrefix(refs[0].URL, "https://files.pythonhosted.org/") {
		t.Errorf("numpy's distribution reference = %+v", refs)
	}
	if te := d.component(t, "Package-dependency-linux-x86-64-typing-extensions-4.12.2"); te.ExternalReferences != nil || te.Supplier != nil {
		t.Errorf("a wheel of unknown origin and supplier claims one: %+v", te)
	}
	if p := d.component(t, "Package-dependency-linux-x86-64-packaging-24.2"); p.Licenses != nil {
		t.Errorf("a wheel with no declared license has licenses %+v (NOASSERTION is no license)", p.Licenses)
	}
	git := d.component(t, "Package-source-vexl-python")
	if refs := git.ExternalReferences; len(refs) != 1 || refs[0].Type != "vcs" ||
		refs[0].URL != "git+https://github.com/vexl-dev/vexl-python.git@"+sum1("vexl-python commit") || git.Version != sum1("vexl-python commit") {
		t.Errorf("git source = %+v", git)
	}
	arch := d.component(t, "Package-source-runtime-headers")
	if refs := arch.ExternalReferences; len(refs) != 1 || refs[0].Type != "source-distribution" ||
		refs[0].URL != "https://downloads.example.org/headers-1.2.tar.gz" || len(refs[0].Hashes) != 1 || refs[0].Hashes[0].Content != sum256("headers archive") {
		t.Errorf("archive source = %+v", arch)
	}
	if local := d.component(t, "Package-source-vexl"); local.ExternalReferences != nil || !slices.Contains(local.Properties, cdxProperty{Name: "mkrelease:dirhash-h1", Value: h1("vexl tree")}) {
		t.Errorf("local source = %+v", local)
	}
	goTC := d.component(t, "Package-toolchain-go")
	if goTC.Type != "application" || goTC.Version != "1.26.8" || goTC.Supplier == nil || goTC.Supplier.Name != "Google LLC" {
		t.Errorf("go toolchain = %+v", goTC)
	}
	patch := d.component(t, "File-overlay-vexl-fused-fast-path")
	if patch.Type != "file" || patch.Name != "backend/overlays/0001-fused-fast-path.patch" ||
		!slices.Equal(patch.Hashes, []cdxHash{{"SHA-1", sum1("patch 1")}, {"SHA-256", sum256("patch 1")}}) {
		t.Errorf("patch overlay = %+v", patch)
	}
}

// TestCycloneDXPersonSupplier: a release supplied by a person has that
// person as the BOM's author and no manufacturer; an address the schema
// would refuse stays in the name.
func TestCycloneDXPersonSupplier(t *testing.T) {
	r := realistic()
	r.Supplier = "Person: Ada Lovelace (ada@example.org)"
	d := readCDX(t, generateCDX(t, r))
	if a := d.Metadata.Authors; len(a) != 1 || a[0] != (cdxContact{Name: "Ada Lovelace", Email: "ada@example.org"}) {
		t.Errorf("metadata.authors = %+v", a)
	}
	if d.Metadata.Manufacturer != nil {
		t.Errorf("metadata.manufacturer = %+v for a Person supplier", d.Metadata.Manufacturer)
	}
	for _, tc := range []struct{ who, name, email string }{
		{"Ada (ada@example.org)", "Ada", "ada@example.org"},
		{"Ada", "Ada", ""},
		{"Ada (not an address)", "Ada (not an address)", ""},
		{"Ada (a@b)", "Ada (a@b)", ""},
		{"(ada@example.org)", "(ada@example.org)", ""},
	} {
		if n, e := (party{"Person", tc.who}).nameEmail(); n != tc.name || e != tc.email {
			t.Errorf("nameEmail(%q) = %q %q, want %q %q", tc.who, n, e, tc.name, tc.email)
		}
	}
}

func TestCycloneDXDeterministic(t *testing.T) {
	want := generateCDX(t, realistic())
	if again := generateCDX(t, realistic()); !bytes.Equal(again, want) {
		t.Fatal("two runs over the same input differ")
	}
	for seed := uint64(1); seed <= 20; seed++ {
		if got := generateCDX(t, shuffled(seed)); !bytes.Equal(got, want) {
			t.Fatalf("input order (seed %d) changed the output", seed)
		}
	}
	// One model, two encoders: Build once gives the same bytes.
	m, err := Build(realistic())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := m.CycloneDX(); err != nil || !bytes.Equal(got, want) {
		t.Errorf("BOM.CycloneDX differs from GenerateCycloneDX (%v)", err)
	}
	if got, err := m.SPDX(); err != nil || !bytes.Equal(got, generate(t, realistic())) {
		t.Errorf("BOM.SPDX differs from Generate (%v)", err)
	}
}

func TestCycloneDXSerialNumber(t *testing.T) {
	out := generateCDX(t, realistic())
	if err := CheckSerialNumber(out); err != nil {
		t.Fatalf("CheckSerialNumber(output) = %v", err)
	}
	serial := readCDX(t, out).SerialNumber
	draft := bytes.Replace(out, []byte(serial), []byte(zeroSerial), 1)
	if got := serialOf(draft); got != serial {
		t.Errorf("serial %s, want %s (the UUIDv5 of the draft's digest)", serial, got)
	}
	// RFC 9562: version 5, variant 10.
	if s := strings.TrimPrefix(serial, "urn:uuid:"); len(s) != 36 || s[14] != '5' || !strings.ContainsRune("89ab", rune(s[19])) {
		t.Errorf("serial %s is not a UUIDv5", serial)
	}
	changed := realistic()
	changed.Targets[1].Dependencies[1].SHA256 = sum256("another packaging wheel")
	if other := readCDX(t, generateCDX(t, changed)).SerialNumber; other == serial {
		t.Error("changing one digest left the serial number unchanged")
	}
	for name, edit := range map[string]func([]byte) []byte{
		"a digest changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte(sum256("packaging")), []byte(sum256("tampered")), 1)
		},
		"the serial changed": func(b []byte) []byte {
			return bytes.Replace(b, []byte(serial), []byte("urn:uuid:11111111-1111-5111-8111-111111111111"), 1)
		},
		"no serial": func(b []byte) []byte { return bytes.Replace(b, []byte(`"serialNumber"`), []byte(`"serial"`), 1) },
	} {
		if err := CheckSerialNumber(edit(out)); err == nil {
			t.Errorf("%s: CheckSerialNumber accepted it", name)
		}
	}
}

func TestParseCycloneDX(t *testing.T) {
	out := generateCDX(t, realistic())
	s, err := ParseCycloneDX(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Component.Name != "vexl" || s.SerialNumber != readCDX(t, out).SerialNumber {
		t.Errorf("summary = %+v", s)
	}
	var wheels []string
	for _, c := range s.Components {
		if c.FileName != "" {
			wheels = append(wheels, c.FileName)
			if c.SHA256 == "" {
				t.Errorf("wheel %s without SHA-256", c.FileName)
			}
		}
	}
	if len(wheels) != 10 || !slices.Contains(wheels, "numpy-2.1.3-cp312-cp312-manylinux_2_34_x86_64.whl") {
		t.Errorf("wheel files = %v, want the 10 of both targets", wheels)
	}
	for name, data := range map[string]string{
		"not JSON":        "{",
		"not CycloneDX":   `{"spdxVersion": "SPDX-2.3"}`,
		"other version":   `{"bomFormat": "CycloneDX", "specVersion": "1.4"}`,
		"bom-ref twice":   `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"bom-ref": "a"}, {"bom-ref": "a"}]}`,
		"short hash":      `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"hashes": [{"alg": "SHA-256", "content": "abc"}]}]}`,
		"two SHA-1":       `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"hashes": [{"alg": "SHA-1", "content": "` + sum1("a") + `"}, {"alg": "SHA-1", "content": "` + sum1("b") + `"}]}]}`,
		"purl no file":    `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"purl": "pkg:pypi/numpy@2.1.3"}]}`,
		"release twice":   `{"bomFormat": "CycloneDX", "specVersion": "1.6", "metadata": {"component": {"bom-ref": "r"}}, "components": [{"bom-ref": "r"}]}`,
		"hash upper-case": `{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"hashes": [{"alg": "SHA-256", "content": "` + strings.ToUpper(sum256("a")) + `"}]}]}`,
	} {
		if _, err := ParseCycloneDX([]byte(data)); err == nil {
			t.Errorf("%s: ParseCycloneDX accepted it", name)
		}
	}
}

func FuzzParseCycloneDX(f *testing.F) {
	f.Add(generateCDXBytes(f))
	f.Add([]byte(`{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"purl": "pkg:pypi/a@1?file_name=%zz"}]}`))
	f.Add([]byte(`{"serialNumber": "urn:uuid:00000000-0000-0000-0000-000000000000"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := ParseCycloneDX(data); err == nil && s == nil {
			t.Fatal("nil summary without an error")
		}
		_ = CheckSerialNumber(data)
	})
}

func generateCDXBytes(f *testing.F) []byte {
	out, err := GenerateCycloneDX(realistic())
	if err != nil {
		f.Fatal(err)
	}
	return out
}

// cdxValidator returns the command that validates CycloneDX documents
// with the CycloneDX project's own library (testdata/cyclonedx, which
// scripts/bootstrap installs with npm ci). Without node or the library the
// tests skip in the default part of the suite and fail in the whole suite
// (testpart.Missing).
func cdxValidator(t *testing.T) (node, script string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "cyclonedx"))
	if err != nil {
		t.Fatal(err)
	}
	node, err = exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node"
	default:
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cyclonedx", "cyclonedx-library", "package.json")); err != nil {
			missing = "the CycloneDX validator (sbom/testdata/cyclonedx/node_modules)"
		}
	}
	if missing != "" {
		testpart.Missing(t, missing, "run scripts/bootstrap (it installs node and the validator with npm ci)")
	}
	return node, filepath.Join(dir, "validate.mjs")
}

// validateCDX runs the independent validator on each document; the
// result is its exit status (0 valid, 1 invalid) and what it printed.
func validateCDX(t *testing.T, docs map[string][]byte) (int, string) {
	t.Helper()
	node, script := cdxValidator(t)
	dir := t.TempDir()
	args := []string{script}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range docs {
			if !yield(k) {
				return
			}
		}
	}) {
		p := filepath.Join(dir, name+".cdx.json")
		if err := os.WriteFile(p, docs[name], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.Command(node, args...)
	out, err := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code != 1 {
		t.Fatalf("the validator failed to run (exit %d): %v\n%s", code, err, out)
	}
	return code, string(out)
}

// TestCycloneDXSchemaValid validates the documents with the official
// CycloneDX 1.6 JSON schema through the CycloneDX project's validator.
func TestCycloneDXSchemaValid(t *testing.T) {
	noBundles := realistic()
	for i := range noBundles.Targets {
		noBundles.Targets[i].Bundle = nil
	}
	person := realistic()
	person.Supplier = "Person: Ada Lovelace (ada@example.org)"
	minimal := Release{Name: "vexl", Version: "0.3.0", Created: epoch, Tool: "mkrelease-0.1.0-dev"}
	minimalTarget := minimal
	minimalTarget.Target, minimalTarget.Targets = "linux-x86_64", []Target{{Name: "linux-x86_64"}}
	docs := map[string][]byte{}
	for name, r := range map[string]Release{"realistic": realistic(), "no-bundles": noBundles, "person": person, "minimal": minimal,
		"one-target": oneTarget(realistic(), "linux-x86_64"), "one-target-minimal": minimalTarget} {
		docs[name] = generateCDX(t, r)
	}
	if code, out := validateCDX(t, docs); code != 0 {
		t.Errorf("not valid CycloneDX 1.6:\n%s", out)
	}
}

// TestCycloneDXSchemaRejects shows the validator does check: documents
// broken the ways a careless writer would are refused.
func TestCycloneDXSchemaRejects(t *testing.T) {
	breaks := map[string]func(doc map[string]any){
		"unknown component type": func(doc map[string]any) {
			doc["components"].([]any)[0].(map[string]any)["type"] = "wheel"
		},
		"unknown hash algorithm": func(doc map[string]any) {
			doc["components"].([]any)[0].(map[string]any)["hashes"].([]any)[0].(map[string]any)["alg"] = "sha256"
		},
		"bad serial number": func(doc map[string]any) { doc["serialNumber"] = "urn:uuid:not-a-uuid" },
		"component without name": func(doc map[string]any) {
			delete(doc["components"].([]any)[0].(map[string]any), "name")
		},
		"two license expressions": func(doc map[string]any) {
			md := doc["metadata"].(map[string]any)["component"].(map[string]any)
			md["licenses"] = append(md["licenses"].([]any), map[string]any{"expression": "MIT"})
		},
	}
	docs := map[string][]byte{}
	for name, breakIt := range breaks {
		var doc map[string]any
		if err := json.Unmarshal(generateCDX(t, realistic()), &doc); err != nil {
			t.Fatal(err)
		}
		breakIt(doc)
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		docs[strings.ReplaceAll(name, " ", "-")] = data
	}
	code, out := validateCDX(t, docs)
	if code != 1 {
		t.Fatalf("the validator accepted broken documents (exit %d):\n%s", code, out)
	}
	for name := range docs {
		if !strings.Contains(out, name+".cdx.json: not valid") {
			t.Errorf("%s: the validator did not refuse it:\n%s", name, out)
		}
	}
}
