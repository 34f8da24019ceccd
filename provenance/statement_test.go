package provenance_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/provenance"
)

var update = flag.Bool("update", false, "rewrite testdata/statement.golden.json")

// TestStatementGolden pins the statement bytes of a fixed input, fixed
// times included.
func TestStatementGolden(t *testing.T) {
	got, err := sampleProvenance().Statement()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "statement.golden.json")
	// The golden file is the statement plus a newline, so it diffs well.
	if *update {
		if err := os.WriteFile(golden, append(slices.Clone(got), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(append(got, '\n'), want) {
		t.Errorf("Statement() =\n%s\nwant (%s, regenerate with -update)\n%s", got, golden, want)
	}
}

// TestStatementShape checks the layout against the specifications, field
// by field, independently of the golden bytes.
func TestStatementShape(t *testing.T) {
	raw, err := sampleProvenance().Statement()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasSuffix(raw, []byte("\n")) || !json.Valid(raw) {
		t.Fatalf("Statement() is not compact JSON without a trailing newline: %q", raw)
	}
	var st map[string]any
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	get := func(path string) any {
		var v any = st
		for _, k := range strings.Split(path, ".") {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%s: %v is not an object", path, v)
			}
			v = m[k]
		}
		return v
	}
	for path, want := range map[string]any{
		"_type":                               provenance.StatementType,
		"predicateType":                       provenance.PredicateType,
		"predicate.buildDefinition.buildType": provenance.BuildType,
		"predicate.runDetails.builder.id":     "https://mkrelease.dev/builders/local",
		"predicate.runDetails.builder.version.mkrelease":                 "0.1.0-dev",
		"predicate.runDetails.metadata.invocationId":                     "3f1c6a1e-0000-4000-8000-000000000001",
		"predicate.runDetails.metadata.startedOn":                        "2026-11-30T08:00:00Z",
		"predicate.runDetails.metadata.finishedOn":                       "2026-11-30T07:01:30.5Z", // UTC
		"predicate.buildDefinition.externalParameters.project.name":      "vexl",
		"predicate.buildDefinition.internalParameters.source_date_epoch": 1700000000.0,
	} {
		if got := get(path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	subjects := get("subject").([]any)
	var names []string
	for _, s := range subjects {
		m := s.(map[string]any)
		names = append(names, m["name"].(string))
		if d := m["digest"].(map[string]any); len(d) != 1 || len(d["sha256"].(string)) != 64 {
			t.Errorf("subject %v: digest %v, want only a sha256", m["name"], d)
		}
	}
	if !slices.IsSorted(names) || len(names) != 4 {
		t.Errorf("subject names %v: want the 4 artifacts sorted", names)
	}
	deps := get("predicate.buildDefinition.resolvedDependencies").([]any)
	if len(deps) != 4 || deps[0].(map[string]any)["name"] != "vexl-src" || deps[3].(map[string]any)["uri"] != "pkg:golang/go@1.26.8" {
		t.Errorf("resolvedDependencies = %v, want the 4 given, in order", deps)
	}
	if _, ok := deps[3].(map[string]any)["digest"]; ok {
		t.Errorf("a dependency without digest got one: %v", deps[3])
	}
}

// TestStatementDeterministic: the order subjects and maps come in does not
// change the bytes.
func TestStatementDeterministic(t *testing.T) {
	want, err := sampleProvenance().Statement()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		p := sampleProvenance()
		r.Shuffle(len(p.Subjects), func(i, j int) { p.Subjects[i], p.Subjects[j] = p.Subjects[j], p.Subjects[i] })
		got, err := p.Statement()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("shuffle %d: subjects %v gave different bytes:\n%s\nwant\n%s", i, p.Subjects, got, want)
		}
	}
}

func TestStatementRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*provenance.Provenance)
		want   string
	}{
		{"no subjects", func(p *provenance.Provenance) { p.Subjects = nil }, "no subjects"},
		{"duplicate subject", func(p *provenance.Provenance) { p.Subjects = append(p.Subjects, p.Subjects[0]) }, "listed twice"},
		{"short digest", func(p *provenance.Provenance) { p.Subjects[0].SHA256 = "abc" }, "not 64 lowercase hex"},
		{"upper-case digest", func(p *provenance.Provenance) { p.Subjects[0].SHA256 = strings.ToUpper(p.Subjects[0].SHA256) }, "not 64 lowercase hex"},
		{"path in name", func(p *provenance.Provenance) { p.Subjects[0].Name = "../x.whl" }, "subject name"},
		{"empty name", func(p *provenance.Provenance) { p.Subjects[0].Name = "" }, "subject name"},
		{"dependency without uri and digest", func(p *provenance.Provenance) {
			p.ResolvedDependencies = append(p.ResolvedDependencies, provenance.Dependency{Name: "x"})
		}, "neither a URI nor a digest"},
		{"dependency digest not hex", func(p *provenance.Provenance) {
			p.ResolvedDependencies[1].Digest = map[string]string{"sha256": "h1:abc"}
		}, "not lowercase hex"},
		{"no builder id", func(p *provenance.Provenance) { p.BuilderID = "" }, "no builder id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sampleProvenance()
			tc.modify(&p)
			_, err := p.Statement()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Statement() error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestStatementDefaults(t *testing.T) {
	p := provenance.Provenance{
		Subjects:  []provenance.Subject{{Name: "a.whl", SHA256: sha("a")}},
		BuilderID: "https://mkrelease.dev/builders/local",
	}
	raw, err := p.Statement()
	if err != nil {
		t.Fatal(err)
	}
	want := `"buildDefinition":{"buildType":"` + provenance.BuildType + `","externalParameters":{}},"runDetails":{"builder":{"id":"https://mkrelease.dev/builders/local"}}`
	if !strings.Contains(string(raw), want) {
		t.Errorf("Statement() = %s, want it to contain %s", raw, want)
	}
}

func TestDirHash(t *testing.T) {
	// The in-toto DigestSet example: h1 of nothing.
	got, err := provenance.DirHash("h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
	if err != nil {
		t.Fatal(err)
	}
	if want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got["dirHash"] != want || len(got) != 1 {
		t.Errorf("DirHash = %v, want dirHash %s", got, want)
	}
	for _, bad := range []string{"", "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=", "h1:!!", "h1:YWJj"} {
		if _, err := provenance.DirHash(bad); err == nil {
			t.Errorf("DirHash(%q) succeeded, want an error", bad)
		}
	}
}
