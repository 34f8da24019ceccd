package provenance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testVSA() VSA {
	return VSA{
		Subjects:          []Subject{{Name: "b.whl", SHA256: strings.Repeat("b", 64)}, {Name: "a.whl", SHA256: strings.Repeat("a", 64)}},
		VerifierID:        "https://mkrelease.dev/publish",
		VerifierVersion:   map[string]string{"mkrelease": "0.1.0"},
		TimeVerified:      time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		ResourceURI:       "pkg:pypi/vexl@0.3.0",
		PolicyURI:         "https://mkrelease.dev/policies/release",
		PolicyDigest:      map[string]string{"sha256": strings.Repeat("c", 64)},
		PolicyModules:     map[string]string{"default/a.rego": strings.Repeat("d", 64)},
		PolicyParameters:  map[string]any{"max_robust_cv": 0.1, "allow_downgrade": false},
		InputAttestations: []Dependency{{Name: "vexl-0.3.0.intoto.jsonl", Digest: map[string]string{"sha256": strings.Repeat("d", 64)}}},
		Result:            VSAPassed,
		VerifiedLevels:    []string{"SLSA_BUILD_LEVEL_1"},
	}
}

func TestVSAStatement(t *testing.T) {
	st, err := testVSA().Statement()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(st, &got); err != nil {
		t.Fatal(err)
	}
	pred := got["predicate"].(map[string]any)
	for k, want := range map[string]any{
		"timeVerified": "2026-11-30T12:00:00Z", "resourceUri": "pkg:pypi/vexl@0.3.0",
		"verificationResult": "PASSED", "slsaVersion": "1.0",
	} {
		if pred[k] != want {
			t.Errorf("predicate.%s = %v, want %v", k, pred[k], want)
		}
	}
	if got["predicateType"] != VSAPredicateType || got["subject"].([]any)[0].(map[string]any)["name"] != "a.whl" {
		t.Errorf("statement = %s", st)
	}
	back, err := ParseVSA(st)
	if err != nil {
		t.Fatal(err)
	}
	if back.Result != VSAPassed || len(back.Subjects) != 2 || back.PolicyDigest["sha256"] != strings.Repeat("c", 64) ||
		back.PolicyModules["default/a.rego"] != strings.Repeat("d", 64) || back.PolicyParameters["max_robust_cv"] != 0.1 ||
		back.InputAttestations[0].Name != "vexl-0.3.0.intoto.jsonl" || !back.TimeVerified.Equal(testVSA().TimeVerified) {
		t.Errorf("ParseVSA = %+v", back)
	}
	// Signed and verified as any statement.
	s, _, err := DevKey(filepath.Join(t.TempDir(), "k"))
	if err != nil {
		t.Fatal(err)
	}
	line, err := SignStatement(context.Background(), s, st)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewVerifier(s.Public())
	if _, got, err := v.VerifyEnvelope(line); err != nil || string(got) != string(st) {
		t.Errorf("VerifyEnvelope: %v", err)
	}
}

func TestVSARefusals(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*VSA)
		want string
	}{
		{"no subjects", func(v *VSA) { v.Subjects = nil }, "no subjects"},
		{"bad result", func(v *VSA) { v.Result = "OK" }, `result "OK"`},
		{"no verifier", func(v *VSA) { v.VerifierID = "" }, "verifier id"},
		{"bad subject digest", func(v *VSA) { v.Subjects[0].SHA256 = "x" }, "b.whl"},
		{"duplicate subject", func(v *VSA) { v.Subjects[1].Name = "b.whl" }, "listed twice"},
		{"bad policy digest", func(v *VSA) { v.PolicyDigest["sha256"] = "zz" }, "policy"},
		{"bad policy module digest", func(v *VSA) { v.PolicyModules["default/a.rego"] = "zz" }, "policy module default/a.rego"},
		{"empty input attestation", func(v *VSA) { v.InputAttestations = append(v.InputAttestations, Dependency{Name: "x"}) }, "input attestation 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := testVSA()
			tt.mod(&v)
			if _, err := v.Statement(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Statement() error = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// FuzzParseVSA feeds arbitrary statements to ParseVSA: it never panics,
// and a summary it reads that Statement accepts reads back the same.
func FuzzParseVSA(f *testing.F) {
	st, err := testVSA().Statement()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(st)
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/verification_summary/v1","predicate":{"policy":{"annotations":{"modules":{"a":1},"parameters":[]}}}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseVSA(data)
		if err != nil {
			return
		}
		again, err := v.Statement()
		if err != nil {
			return // what Statement refuses (no subject, a bad digest) ParseVSA may still read
		}
		back, err := ParseVSA(again)
		if err != nil {
			t.Fatalf("reading back a statement just made: %v\n%s", err, again)
		}
		twice, err := back.Statement()
		if err != nil || string(twice) != string(again) {
			t.Fatalf("round trip changed the summary:\n%s\n%s (%v)", again, twice, err)
		}
	})
}
