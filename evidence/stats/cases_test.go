package stats

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

func TestCases(t *testing.T) {
	cs := []evidence.Case{
		{Lane: "unit", ID: "t3", Status: evidence.StatusPass, Tier: "fast"},
		{Lane: "unit", ID: "t1", Status: evidence.StatusFail, Tier: "fast"},
		{Lane: "unit", ID: "t2", Status: evidence.StatusSkip, Tier: "slow"},
		{Lane: "unit", ID: "t4", Status: evidence.StatusError},
		{Lane: "conv", ID: "c1", Status: evidence.StatusPass, Tier: "slow"},
		{Lane: "conv", ID: "c2", Status: "pass", Tier: "slow"}, // lower case: invalid
		{Lane: "conv", ID: "", Status: evidence.StatusPass},    // no id: invalid
		{Lane: "unit", ID: "t3", Status: evidence.StatusPass, Tier: "fast"},
	}
	got := Cases(cs)
	want := CaseSummary{
		// 8 cases: PASS t3, c1, t3 again = 3; FAIL t1; ERROR t4; SKIP t2;
		// invalid c2 and the id-less one = 2.
		Counts: Counts{Total: 8, Pass: 3, Fail: 1, Error: 1, Skip: 1, Invalid: 2},
		ByTier: map[string]Counts{
			"fast": {Total: 3, Pass: 2, Fail: 1},             // t3, t1, t3
			"slow": {Total: 3, Pass: 1, Skip: 1, Invalid: 1}, // t2, c1, c2
			"":     {Total: 2, Error: 1, Invalid: 1},         // t4, id-less
		},
		// By lane then id: conv/"" < conv/c2 < unit/t1 < unit/t4.
		Failing: []CaseRef{
			{Lane: "conv", ID: "", Status: "PASS"},
			{Lane: "conv", ID: "c2", Tier: "slow", Status: "pass"},
			{Lane: "unit", ID: "t1", Tier: "fast", Status: "FAIL"},
			{Lane: "unit", ID: "t4", Status: "ERROR"},
		},
		Duplicates: []CaseRef{{Lane: "unit", ID: "t3", Tier: "fast", Status: "PASS"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Cases =\n%+v\nwant\n%+v", got, want)
	}
	// The JSON is stable: map keys sorted, lists in order.
	a, _ := json.Marshal(got)
	for range 5 {
		if b, _ := json.Marshal(Cases(cs)); string(b) != string(a) {
			t.Fatalf("unstable encoding:\n%s\n%s", a, b)
		}
	}
}

func TestCasesEmpty(t *testing.T) {
	got := Cases(nil)
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"counts":{"total":0,"pass":0,"fail":0,"error":0,"skip":0,"invalid":0},"by_tier":{},"failing":[],"duplicates":[]}`
	if string(data) != want {
		t.Errorf("Cases(nil) = %s, want %s", data, want)
	}
}
