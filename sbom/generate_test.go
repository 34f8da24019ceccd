package sbom

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pin"
)

var update = flag.Bool("update", false, "rewrite the golden documents (testdata/*.spdx.json, *.cdx.json) from the current output")

func generate(t *testing.T, r Release) []byte {
	t.Helper()
	out, err := Generate(r)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return out
}

// TestGolden pins the exact bytes of the realistic release's documents,
// SPDX and CycloneDX, and of its x86_64 target's; rerun with -update after
// an intended change and review the diff.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		r      Release
		encode func(*testing.T, Release) []byte
	}{
		{"vexl-0.3.0.spdx.json", realistic(), generate},
		{"vexl-0.3.0-linux-x86_64.spdx.json", oneTarget(realistic(), "linux-x86_64"), generate},
		{"vexl-0.3.0.cdx.json", realistic(), generateCDX},
		{"vexl-0.3.0-linux-x86_64.cdx.json", oneTarget(realistic(), "linux-x86_64"), generateCDX},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out := tc.encode(t, tc.r)
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./sbom -run TestGolden -update)", err)
			}
			if !bytes.Equal(out, want) {
				t.Errorf("output differs from %s; rerun with -update and review the diff", golden)
			}
			if !bytes.HasSuffix(out, []byte("}\n")) || bytes.HasSuffix(out, []byte("\n\n")) {
				t.Errorf("output does not end with exactly one newline")
			}
		})
	}
}

// TestTargetDocument checks the document of one target against the
// release's: the same elements and relationships less those of the other
// target (and the bundles, which it does not describe), named and
// namespaced for the target, and the same bytes whatever else the release
// holds.
func TestTargetDocument(t *testing.T) {
	const target, other = "linux-x86_64", "linux-aarch64"
	out := generate(t, oneTarget(realistic(), target))
	if err := CheckNamespace(out); err != nil {
		t.Errorf("CheckNamespace = %v", err)
	}
	s, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "vexl-0.3.0-" + target; s.Name != want {
		t.Errorf("name = %q, want %q", s.Name, want)
	}
	if prefix := NamespacePrefix + "vexl-0.3.0-" + idPart(target) + "-"; !strings.HasPrefix(s.Namespace, prefix) {
		t.Errorf("namespace %q does not start with %q", s.Namespace, prefix)
	}
	if bytes.Contains(out, []byte("aarch64")) {
		t.Errorf("the document of %s mentions aarch64:\n%s", target, out)
	}

	// Expected: the release's document without the other target's
	// elements and without the bundles.
	noBundles := realistic()
	for i := range noBundles.Targets {
		noBundles.Targets[i].Bundle = nil
	}
	all, err := Parse(generate(t, noBundles))
	if err != nil {
		t.Fatal(err)
	}
	foreign := func(id string) bool { return strings.Contains(id, idPart(other)) }
	var wantIDs, gotIDs []string
	for _, p := range all.Packages {
		if !foreign(p.ID) {
			wantIDs = append(wantIDs, p.ID)
		}
	}
	for _, p := range s.Packages {
		gotIDs = append(gotIDs, p.ID)
	}
	if !slices.Equal(gotIDs, wantIDs) {
		t.Errorf("packages = %v\nwant %v", gotIDs, wantIDs)
	}
	var wantRels []Relationship
	for _, rel := range all.Relationships {
		if !foreign(rel.From) && !foreign(rel.To) {
			wantRels = append(wantRels, rel)
		}
	}
	if !slices.Equal(s.Relationships, wantRels) {
		t.Errorf("relationships = %v\nwant %v", s.Relationships, wantRels)
	}
	if len(s.Files) != 2 { // the two patch overlays
		t.Errorf("files = %v, want the two patch overlays", s.Files)
	}

	// The other target's toolchain changes nothing, nor does the order of
	// the input.
	for name, mutate := range map[string]func(*Release){
		"without the other target's toolchain": func(r *Release) {
			r.Toolchains = slices.DeleteFunc(r.Toolchains, func(tc Toolchain) bool { return tc.Target == other })
		},
		"shuffled": func(r *Release) { *r = oneTarget(shuffled(7), target) },
	} {
		r := oneTarget(realistic(), target)
		mutate(&r)
		if got := generate(t, r); !bytes.Equal(got, out) {
			t.Errorf("%s: the document changed", name)
		}
	}
}

// shuffled is realistic() with every slice in another order.
func shuffled(seed uint64) Release {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	shuffle := func(n int, swap func(i, j int)) { rng.Shuffle(n, swap) }
	r := realistic()
	shuffle(len(r.Targets), func(i, j int) { r.Targets[i], r.Targets[j] = r.Targets[j], r.Targets[i] })
	shuffle(len(r.Sources), func(i, j int) { r.Sources[i], r.Sources[j] = r.Sources[j], r.Sources[i] })
	shuffle(len(r.Overlays), func(i, j int) { r.Overlays[i], r.Overlays[j] = r.Overlays[j], r.Overlays[i] })
	shuffle(len(r.Toolchains), func(i, j int) { r.Toolchains[i], r.Toolchains[j] = r.Toolchains[j], r.Toolchains[i] })
	for ti := range r.Targets {
		t := &r.Targets[ti]
		for _, ps := range [][]Package{t.Wheels, t.Dependencies} {
			shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			for k := range ps {
				d := ps[k].DependsOn
				shuffle(len(d), func(i, j int) { d[i], d[j] = d[j], d[i] })
			}
		}
	}
	return r
}

func TestDeterministic(t *testing.T) {
	want := generate(t, realistic())
	if again := generate(t, realistic()); !bytes.Equal(again, want) {
		t.Fatal("two runs over the same input differ")
	}
	for seed := uint64(1); seed <= 20; seed++ {
		if got := generate(t, shuffled(seed)); !bytes.Equal(got, want) {
			t.Fatalf("input order (seed %d) changed the output", seed)
		}
	}
	// A repeated requirement is one relationship.
	r := realistic()
	r.Targets[0].Wheels[1].DependsOn = append(r.Targets[0].Wheels[1].DependsOn, "vexl-compiler", "Packaging")
	if got := generate(t, r); !bytes.Equal(got, want) {
		t.Error("a repeated DependsOn name changed the output")
	}
}

// namespaceOf recomputes the namespace by the documented rule: the
// SHA-256 of the document with the namespace's 64 hex digits replaced by
// "0"s.
func namespaceOf(t *testing.T, out []byte) (got, want string) {
	t.Helper()
	var doc struct {
		Namespace string `json:"documentNamespace"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	got = doc.Namespace
	prefix := "https://mkrelease.dev/spdx/vexl-0.3.0-"
	if !strings.HasPrefix(got, prefix) || len(got) != len(prefix)+64 {
		t.Fatalf("namespace %q is not %s<64 hex>", got, prefix)
	}
	draft := bytes.Replace(out, []byte(got), []byte(prefix+strings.Repeat("0", 64)), 1)
	sum := sha256.Sum256(draft)
	return got, prefix + hex.EncodeToString(sum[:])
}

func TestNamespace(t *testing.T) {
	out := generate(t, realistic())
	got, want := namespaceOf(t, out)
	if got != want {
		t.Fatalf("namespace = %s, want %s (sha256 of the document with zeros in place of the digest)", got, want)
	}
	if err := CheckNamespace(out); err != nil {
		t.Errorf("CheckNamespace(output) = %v", err)
	}

	changed := realistic()
	changed.Targets[1].Dependencies[1].SHA256 = sum256("another packaging wheel")
	out2 := generate(t, changed)
	got2, want2 := namespaceOf(t, out2)
	if got2 != want2 {
		t.Fatalf("changed document: namespace = %s, want %s", got2, want2)
	}
	if got2 == got {
		t.Error("changing one checksum left the namespace unchanged")
	}
}

func TestIdentifiers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"linux-x86_64", "linux-x86-64"},
		{"1.0+cpu", "1.0-cpu"},
		{"a b/c", "a-b-c"},
		{"Vexl.Compiler-2", "Vexl.Compiler-2"},
		{"é", "--"}, // each byte outside the set
	} {
		if got := idPart(tc.in); got != tc.want {
			t.Errorf("idPart(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"0.3.0", "0.3.0"},
		{"1.0+cpu.2", "1.0%2Bcpu.2"},
		{"1!2.0", "1%212.0"},
		{"a_b~c-d.e", "a_b~c-d.e"}, // the punctuation the spec keeps
		{"x:y", "x:y"},             // the colon is never encoded
		{"a b", "a%20b"},
		{"a/b?c=d&e#f@g%", "a%2Fb%3Fc%3Dd%26e%23f%40g%25"}, // separators inside a component
		{"é", "%C3%A9"}, // UTF-8 bytes, upper-case hex
		{"vexl_compiler-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
			"vexl_compiler-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"},
	} {
		if got := purlEncode(tc.in); got != tc.want {
			t.Errorf("purlEncode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	s, err := Parse(generate(t, realistic()))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range s.Packages {
		ids = append(ids, p.ID)
	}
	for _, f := range s.Files {
		ids = append(ids, f.ID)
	}
	for _, want := range []string{
		"SPDXRef-Package-release-vexl-0.3.0",
		"SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0",
		"SPDXRef-Package-wheel-linux-aarch64-vexl-plugin-0.3.0",
		"SPDXRef-Package-dependency-linux-x86-64-typing-extensions-4.12.2",
		"SPDXRef-Package-source-vexl-python",
		"SPDXRef-Package-overlay-runtime-headers-extra-headers",
		"SPDXRef-File-overlay-vexl-fused-fast-path",
		"SPDXRef-Package-toolchain-go",
		"SPDXRef-Package-toolchain-linux-aarch64-cc",
		"SPDXRef-File-bundle-linux-x86-64",
	} {
		if !slices.Contains(ids, want) {
			t.Errorf("no element %s among %v", want, ids)
		}
	}
}

func TestSourceLocation(t *testing.T) {
	const c = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		kind, loc string
		want      string // download location; "" = refused
		infoLacks string // a string sourceInfo must not contain
	}{
		{SourceGit, "https://github.com/vexl-dev/vexl.git", "git+https://github.com/vexl-dev/vexl.git@" + c, ""},
		{SourceGit, "git+https://github.com/vexl-dev/vexl.git", "git+https://github.com/vexl-dev/vexl.git@" + c, ""},
		{SourceGit, "ssh://git@example.org/vexl.git", "git+ssh://git@example.org/vexl.git@" + c, ""},
		{SourceGit, "git://example.org/vexl", "git+git://example.org/vexl@" + c, ""},
		{SourceGit, "git@github.com:vexl-dev/vexl.git", "git+ssh://git@github.com/vexl-dev/vexl.git@" + c, ""},
		{SourceGit, "vendor/vexl.git", "NOASSERTION", ""},
		{SourceGit, "file:///home/someone/vexl.git", "NOASSERTION", "/home/someone"},
		{SourceGit, "/home/someone/vexl.git", "", ""},
		{SourceGit, "https://user:secret@example.org/vexl.git", "", ""},
		{SourceGit, "https://token@example.org/vexl.git", "", ""},
		{SourceArchive, "https://example.org/vexl-1.0.tar.gz", "https://example.org/vexl-1.0.tar.gz", ""},
		{SourceArchive, "third_party/vexl-1.0.tar.gz", "NOASSERTION", ""},
		{SourceArchive, "ftp://example.org/vexl-1.0.tar.gz", "", ""},
		{SourceArchive, "../outside.tar.gz", "", ""},
		{SourceLocal, "backend/src", "NOASSERTION", ""},
		{SourceLocal, "/srv/backend/src", "", ""},
		{SourceLocal, "backend/./src", "", ""},
	} {
		loc, info, msg := sourceLocation(Source{Source: pin.Source{Kind: tc.kind, Location: tc.loc, Commit: c}})
		if tc.want == "" {
			if msg == "" {
				t.Errorf("sourceLocation(%s %q) = %q, want a refusal", tc.kind, tc.loc, loc)
			} else if strings.Contains(msg, "secret") || strings.Contains(msg, "token@") {
				t.Errorf("refusal of %q shows the credential: %s", tc.loc, msg)
			}
			continue
		}
		if msg != "" || loc != tc.want {
			t.Errorf("sourceLocation(%s %q) = %q, %q; want %q", tc.kind, tc.loc, loc, msg, tc.want)
		}
		if tc.infoLacks != "" && strings.Contains(info, tc.infoLacks) {
			t.Errorf("sourceInfo of %q records %q: %s", tc.loc, tc.infoLacks, info)
		}
	}
}

func TestToolchains(t *testing.T) {
	// A document for one target leaves out the other target's toolchain;
	// a target without wheels gets its toolchain on the release.
	r := realistic()
	r.Targets = r.Targets[:1]
	r.Targets[0].Wheels = nil
	r.Targets[0].Dependencies = nil
	s, err := Parse(generate(t, r))
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, p := range s.Packages {
		if strings.HasPrefix(p.ID, "SPDXRef-Package-toolchain-") {
			tools = append(tools, p.ID)
		}
	}
	want := []string{"SPDXRef-Package-toolchain-go", "SPDXRef-Package-toolchain-linux-x86-64-cc"}
	if !slices.Equal(tools, want) {
		t.Errorf("toolchains = %v, want %v", tools, want)
	}
	rel := Relationship{"SPDXRef-Package-toolchain-linux-x86-64-cc", "BUILD_TOOL_OF", "SPDXRef-Package-release-vexl-0.3.0"}
	if !slices.Contains(s.Relationships, rel) {
		t.Errorf("missing %v", rel)
	}
}

// errorFields lists the Field of every *Error in a (joined) error.
func errorFields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		var e *Error
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
		} else if errors.As(err, &e) {
			out = append(out, e.Field)
		}
	}
	walk(err)
	return out
}

var refusals = []struct {
	name   string
	mutate func(*Release)
	field  string // the field the (first) error names
	msg    string // a substring of its message
}{
	{"no epoch", func(r *Release) { r.Created = 0 }, "created", "SOURCE_DATE_EPOCH"},
	{"no tool", func(r *Release) { r.Tool = "" }, "tool", "NTIA"},
	{"untyped supplier", func(r *Release) { r.Supplier = "vexl team" }, "supplier", "Organization: NAME"},
	{"bad license", func(r *Release) { r.License = "Apache 2.0" }, "license", "license expression"},
	{"upper-case digest", func(r *Release) {
		r.Targets[0].Wheels[0].SHA256 = strings.ToUpper(r.Targets[0].Wheels[0].SHA256)
	}, `targets["linux-x86_64"].wheels["vexl-compiler"].sha256`, "lower-case hex"},
	{"no checksum", func(r *Release) { r.Targets[1].Dependencies[1].SHA256 = "" },
		`targets["linux-aarch64"].dependencies["packaging"].sha256`, "NTIA"},
	{"no file name", func(r *Release) { r.Targets[0].Wheels[1].FileName = "" },
		`targets["linux-x86_64"].wheels["vexl-plugin"].fileName`, "base name"},
	{"invalid name", func(r *Release) { r.Targets[0].Dependencies[0].Name = "-numpy" },
		`targets["linux-x86_64"].dependencies["-numpy"].name`, ""},
	{"dependency outside the closure", func(r *Release) { r.Targets[0].Dependencies[0].DependsOn = []string{"scipy"} },
		`targets["linux-x86_64"].dependencies["numpy"].dependsOn`, "closure"},
	{"self dependency", func(r *Release) { r.Targets[0].Dependencies[0].DependsOn = []string{"NumPy"} },
		`targets["linux-x86_64"].dependencies["numpy"].dependsOn`, "itself"},
	{"listed twice", func(r *Release) {
		r.Targets[0].Dependencies = append(r.Targets[0].Dependencies, r.Targets[0].Dependencies[0])
		r.Targets[0].Dependencies[3].Version = "2.2.0"
	}, `targets["linux-x86_64"].dependencies["numpy"]`, "twice"},
	{"target twice", func(r *Release) { r.Targets[1].Name = r.Targets[0].Name }, `targets["linux-x86_64"]`, "twice"},
	{"local download location", func(r *Release) {
		r.Targets[0].Dependencies[0].DownloadLocation = "file:///home/someone/wheels/numpy.whl"
	}, `targets["linux-x86_64"].dependencies["numpy"].downloadLocation`, "build machine"},
	{"bundle without sha1", func(r *Release) { r.Targets[0].Bundle.SHA1 = "" },
		`targets["linux-x86_64"].bundle.sha1`, "§8.4"},
	{"overlay without sha1", func(r *Release) { r.Overlays[0].SHA1 = "" },
		`overlays["fused-fast-path"].sha1`, "§8.4"},
	{"overlay of no source", func(r *Release) { r.Overlays[1].Source = "vexl-src" },
		`overlays["stamp-release-version"].source`, "no source"},
	{"overlay patch and tree", func(r *Release) { r.Overlays[0].Tree = h1("x") }, `overlays["fused-fast-path"]`, "not both"},
	{"absolute overlay path", func(r *Release) { r.Overlays[0].Path = "/work/main/backend/overlays/0001.patch" },
		`overlays["fused-fast-path"].path`, "relative"},
	{"absolute local source", func(r *Release) { r.Sources[0].Location = "/work/main/backend/src" },
		`sources["vexl"].location`, "machine path"},
	{"git credentials", func(r *Release) { r.Sources[1].Location = "https://ci:hunter2@github.com/vexl-dev/vexl-python.git" },
		`sources["vexl-python"].location`, "credentials"},
	{"short commit", func(r *Release) { r.Sources[1].Commit = "a5f784c" }, `sources["vexl-python"].commit`, "full commit"},
	{"archive without digest", func(r *Release) { r.Sources[2].SHA256 = "" }, `sources["runtime-headers"].sha256`, "pinned"},
	{"no tree", func(r *Release) { r.Sources[0].Tree = "" }, `sources["vexl"].tree`, "h1:"},
	{"unknown kind", func(r *Release) { r.Sources[0].Kind = "svn" }, `sources["vexl"].kind`, "svn"},
	{"source twice", func(r *Release) { r.Sources = append(r.Sources, r.Sources[0]) }, `sources["vexl"]`, "twice"},
	{"identifier collision", func(r *Release) {
		s := r.Sources[1]
		s.Name = "vexl_python"
		r.Sources = append(r.Sources, s)
	}, `sources["vexl_python"]`, "SPDXRef-Package-source-vexl-python"},
	{"dependency license", func(r *Release) { r.Targets[0].Dependencies[0].License = "BSD License" },
		`targets["linux-x86_64"].dependencies["numpy"].license`, "license expression"},
	{"https download with token", func(r *Release) {
		r.Targets[0].Dependencies[0].DownloadLocation = "https://__token__:hunter2@pypi.example.org/numpy.whl"
	}, `targets["linux-x86_64"].dependencies["numpy"].downloadLocation`, "credentials"},
	{"toolchain without version", func(r *Release) { r.Toolchains[0].Version = "" }, `toolchains["go"]`, "version"},
	{"untyped source supplier", func(r *Release) { r.Sources[0].Supplier = "vexl upstream" }, `sources["vexl"].supplier`, "Organization: NAME"},
	{"untyped toolchain supplier", func(r *Release) { r.Toolchains[0].Supplier = "Google" }, `toolchains["go"].supplier`, "Organization: NAME"},
	{"one-target document of two targets", func(r *Release) { r.Target = "linux-x86_64" }, "target", "alone"},
	{"one-target document of another target", func(r *Release) { *r = oneTarget(*r, "linux-x86_64"); r.Target = "linux-aarch64" },
		"target", "alone"},
	{"one-target document without a name", func(r *Release) { *r = oneTarget(*r, "linux-x86_64"); r.Target = " " }, "target", "name"},
}

func TestRefuses(t *testing.T) {
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			r := realistic()
			tc.mutate(&r)
			out, err := Generate(r)
			if err == nil {
				t.Fatalf("Generate accepted it:\n%.300s", out)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("first error = %v; want field %s and a message containing %q", e, tc.field, tc.msg)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the credential: %v", err)
			}
		})
	}
}

func TestRefusesReportsEverything(t *testing.T) {
	r := realistic()
	r.Created = -1
	r.Targets[1].Wheels[0].SHA256 = "nope"
	r.Overlays[2].Tree = "h1:short"
	got := errorFields(func() error { _, err := Generate(r); return err }())
	want := []string{"created", `targets["linux-aarch64"].wheels["vexl-compiler"].sha256`, `overlays["extra-headers"].tree`}
	if !slices.Equal(got, want) {
		t.Errorf("errors name %q, want %q", got, want)
	}
}

func TestRefusedSupplierIsReportedOnce(t *testing.T) {
	r := realistic()
	r.Supplier = "vexl team"
	_, err := Generate(r)
	if got := errorFields(err); !slices.Equal(got, []string{"supplier"}) {
		t.Errorf("errors name %q, want only the release's supplier", got)
	}
}

// A dependency the closure needs as two wheel files (one per Python of the
// target) is two packages, and a requirement on its name points at both.
func TestOnePackagePerWheelFile(t *testing.T) {
	r := Release{Name: "vexl", Version: "0.3.0", Created: epoch, Tool: "mkrelease-0.1.0-dev",
		Targets: []Target{{Name: "linux-x86_64",
			Wheels: []Package{{Name: "vexl-plugin", Version: "0.3.0", FileName: "vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl",
				SHA256: sum256("plugin"), DependsOn: []string{"numpy"}}},
			Dependencies: []Package{
				{Name: "numpy", Version: "2.1.0", FileName: "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl", SHA256: sum256("np311")},
				{Name: "numpy", Version: "2.1.0", FileName: "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl", SHA256: sum256("np312")},
			}}}}
	data, err := Generate(r)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, p := range s.Packages {
		if p.Name == "numpy" {
			ids[p.FileName] = p.ID
		}
	}
	if len(ids) != 2 || ids["numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl"] == ids["numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl"] {
		t.Fatalf("numpy packages: %v", ids)
	}
	depends := 0
	for _, rel := range s.Relationships {
		if rel.Type == "DEPENDS_ON" && strings.Contains(rel.From, "vexl-plugin") && strings.Contains(rel.To, "numpy") {
			depends++
		}
	}
	if depends != 2 {
		t.Errorf("vexl-plugin DEPENDS_ON %d numpy packages, want 2", depends)
	}
	dup := r
	dup.Targets = []Target{r.Targets[0]}
	dup.Targets[0].Dependencies = append(dup.Targets[0].Dependencies, r.Targets[0].Dependencies[0])
	if _, err := Generate(dup); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("the same file twice: %v", err)
	}
}

// A pure-Python wheel of the release is one file every target holds: one
// package, contained by the release and by each target's bundle, depending
// on each target's native wheel; the native wheels stay one per target.
func TestSharedPureWheelIsOnePackage(t *testing.T) {
	pure := Package{Name: "demo-py", Version: "1.0", FileName: "demo_py-1.0-py3-none-any.whl", SHA256: sum256("py"), DependsOn: []string{"demo-core"}}
	target := func(name string) Target {
		return Target{Name: name, Wheels: []Package{
			{Name: "demo-core", Version: "1.0", FileName: "demo_core-1.0-py3-none-" + name + ".whl", SHA256: sum256("core " + name)},
			pure,
		}, Bundle: &File{Name: "demo-1.0-" + name + ".tar.gz", SHA1: strings.Repeat("1", 40), SHA256: sum256("bundle " + name)}}
	}
	r := Release{Name: "demo", Version: "1.0", Created: epoch, Tool: "mkrelease-0.1.0-dev",
		Targets: []Target{target("linux_x86_64"), target("linux_aarch64")}}
	data, err := Generate(r)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var pureIDs, coreIDs []string
	for _, p := range s.Packages {
		switch p.Name {
		case "demo-py":
			pureIDs = append(pureIDs, p.ID)
		case "demo-core":
			coreIDs = append(coreIDs, p.ID)
		}
	}
	if len(pureIDs) != 1 || len(coreIDs) != 2 {
		t.Fatalf("demo-py packages %v, demo-core packages %v: want one and two", pureIDs, coreIDs)
	}
	contains, depends := 0, 0
	for _, rel := range s.Relationships {
		switch {
		case rel.Type == "CONTAINS" && strings.Contains(rel.From, "bundle") && rel.To == pureIDs[0]:
			contains++
		case rel.Type == "DEPENDS_ON" && rel.From == pureIDs[0] && slices.Contains(coreIDs, rel.To):
			depends++
		}
	}
	if contains != 2 || depends != 2 {
		t.Errorf("the pure wheel is in %d bundles and depends on %d native wheels, want 2 and 2", contains, depends)
	}

	// One target alone: its own id, as before.
	one := r
	one.Targets = r.Targets[:1]
	data, err = Generate(one)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"SPDXRef-Package-wheel-linux-x86-64-demo-py-1.0"`) {
		t.Errorf("a wheel of one target lost its target in its id:\n%s", data)
	}
}

// Every wheel file has a purl of its own: the file_name qualifier names the
// file, so the wheels of one version built for two targets no longer share
// pkg:pypi/vexl-compiler@0.3.0, and the version and file name are
// percent-encoded ("+" of a local version is %2B).
func TestWheelPURLs(t *testing.T) {
	r := realistic()
	torch := Package{Name: "torch", Version: "2.1.0+cu118", FileName: "torch-2.1.0+cu118-cp312-cp312-linux_x86_64.whl", SHA256: sum256("torch")}
	r.Targets[0].Dependencies = append(r.Targets[0].Dependencies, torch)
	s, err := Parse(generate(t, r))
	if err != nil {
		t.Fatal(err)
	}
	purls := map[string]string{} // id → purl
	owner := map[string]string{} // purl → its file and digest
	for _, p := range s.Packages {
		if p.FileName == "" {
			if p.PURL != "" {
				t.Errorf("%s is no wheel but has the purl %s", p.ID, p.PURL)
			}
			continue
		}
		purls[p.ID] = p.PURL
		base, query, ok := strings.Cut(p.PURL, "?")
		if want := "pkg:pypi/" + p.Name + "@" + strings.ReplaceAll(p.Version, "+", "%2B"); base != want {
			t.Errorf("%s: purl %s, want it to start %s", p.ID, p.PURL, want)
		}
		value, found := strings.CutPrefix(query, "file_name=")
		if !ok || !found || strings.ContainsAny(value, "&+") {
			t.Errorf("%s: purl %s has no single, encoded file_name qualifier", p.ID, p.PURL)
		} else if file, err := url.PathUnescape(value); err != nil || file != p.FileName {
			t.Errorf("%s: file_name of %s decodes to %q (%v), want %q", p.ID, p.PURL, file, err, p.FileName)
		}
		// One purl, one file: a pure-Python wheel in both targets' closures
		// is one file and keeps one purl (two packages, one per target).
		if other, dup := owner[p.PURL]; dup && other != p.FileName+" "+p.SHA256 {
			t.Errorf("%s shares the purl %s with another file (%s)", p.ID, p.PURL, other)
		}
		owner[p.PURL] = p.FileName + " " + p.SHA256
	}
	if len(owner) != 9 { // 2 × 2 wheels, 2 × numpy, packaging, typing-extensions, torch
		t.Errorf("%d distinct purls, want one per file (9): %v", len(owner), owner)
	}
	if len(purls) != 11 { // 2 targets × (2 wheels + 3 dependencies), and torch
		t.Errorf("%d wheel packages, want 11: %v", len(purls), purls)
	}
	for id, want := range map[string]string{
		"SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0":    "pkg:pypi/vexl-compiler@0.3.0?file_name=vexl_compiler-0.3.0-py3-none-manylinux_2_34_x86_64.whl",
		"SPDXRef-Package-wheel-linux-aarch64-vexl-compiler-0.3.0":   "pkg:pypi/vexl-compiler@0.3.0?file_name=vexl_compiler-0.3.0-py3-none-manylinux_2_34_aarch64.whl",
		"SPDXRef-Package-dependency-linux-x86-64-torch-2.1.0-cu118": "pkg:pypi/torch@2.1.0%2Bcu118?file_name=torch-2.1.0%2Bcu118-cp312-cp312-linux_x86_64.whl",
		// one file in both targets' closures: the same purl, two packages
		"SPDXRef-Package-dependency-linux-aarch64-packaging-24.2": "pkg:pypi/packaging@24.2?file_name=packaging-24.2-py3-none-any.whl",
	} {
		if purls[id] != want {
			t.Errorf("%s: purl %q, want %q", id, purls[id], want)
		}
	}
}
