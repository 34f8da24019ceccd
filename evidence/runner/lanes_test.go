package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

func TestReadCases(t *testing.T) {
	tests := []struct {
		name      string
		lines     string
		wantCases []string // id:status
		wantBad   []string // id: message prefix
	}{
		{"valid", `{"id":"a","status":"PASS","tier":"1","metrics":{"e":0.5},"tolerance":{"abs":1},"duration_s":0.1}
{"id":"b","status":"SKIP","duration_s":0}
`, []string{"a:PASS", "b:SKIP"}, nil},
		{"lane field is overwritten", `{"lane":"other","id":"a","status":"FAIL","duration_s":1}`, []string{"a:FAIL"}, nil},
		{"blank lines skipped", "\n\n{\"id\":\"a\",\"status\":\"PASS\",\"duration_s\":0}\n\n", []string{"a:PASS"}, nil},
		{"unknown status", `{"id":"a","status":"OK","duration_s":0}`, nil, []string{`L/line-1: case a: status "OK" is not PASS, FAIL, ERROR or SKIP`}},
		{"no id", `{"status":"PASS","duration_s":0}`, nil, []string{"L/line-1: a case without an id"}},
		{"twice", `{"id":"a","status":"PASS","duration_s":0}
{"id":"a","status":"FAIL","duration_s":0}`, []string{"a:PASS"}, []string{"L/line-2: case a reported twice"}},
		{"negative duration", `{"id":"a","status":"PASS","duration_s":-1}`, nil, []string{"L/line-1: case a: a number is negative, NaN or infinite"}},
		{"unknown field", `{"id":"a","status":"PASS","duration_s":0,"extra":1}`, nil, []string{`L/line-1: not a case: json: unknown field "extra"`}},
		{"not json", `PASS a`, nil, []string{"L/line-1: not a case: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "cases.jsonl")
			os.WriteFile(file, []byte(tt.lines), 0o644)
			cases, bad := readCases("L", file)
			var got []string
			for _, c := range cases {
				if c.Lane != "L" {
					t.Errorf("case %s has lane %q", c.ID, c.Lane)
				}
				got = append(got, c.ID+":"+c.Status)
			}
			if strings.Join(got, ",") != strings.Join(tt.wantCases, ",") {
				t.Errorf("cases %v, want %v", got, tt.wantCases)
			}
			if len(bad) != len(tt.wantBad) {
				t.Fatalf("bad %+v, want %v", bad, tt.wantBad)
			}
			for i, b := range bad {
				if b.Status != evidence.StatusError || !strings.HasPrefix(b.ID+": "+b.Message, tt.wantBad[i]) {
					t.Errorf("bad[%d] = %s %s: %s, want ERROR %s", i, b.Status, b.ID, b.Message, tt.wantBad[i])
				}
			}
		})
	}
}

// FuzzReadCases: whatever a lane writes, reading it never panics, and
// every case it yields is one the store accepts.
func FuzzReadCases(f *testing.F) {
	f.Add([]byte(`{"id":"a","status":"PASS","duration_s":0.1,"metrics":{"x":1}}` + "\n"))
	f.Add([]byte(`{"id":"a","status":"PASS","duration_s":1e400}`))
	f.Add([]byte("{\"id\":\"\\u0000\",\"status\":\"FAIL\",\"duration_s\":0}\n\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "cases.jsonl")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cases, bad := readCases("L", file)
		seen := map[string]bool{}
		for _, c := range append(cases, bad...) {
			if c.ID == "" || c.Lane != "L" || !finite(c.Duration) || c.Duration < 0 || !finiteMap(c.Metrics) || !finiteMap(c.Tolerance) {
				t.Fatalf("invalid case out of readCases: %+v", c)
			}
			switch c.Status {
			case evidence.StatusPass, evidence.StatusFail, evidence.StatusError, evidence.StatusSkip:
			default:
				t.Fatalf("status %q", c.Status)
			}
			if seen[c.ID] && !strings.HasPrefix(c.ID, "L/") {
				t.Fatalf("duplicate id %q", c.ID)
			}
			seen[c.ID] = true
		}
	})
}
