package runner

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mkrelease/mkrelease/internal/finding"
)

// TestReportErrAndJSON pins the text of a refusal, its exit status and
// the JSON mkrelease evidence import --json prints.
func TestReportErrAndJSON(t *testing.T) {
	rep := &Report{Report: finding.Report{Subject: "dist/e.tar.gz", Checks: []string{CheckIdentity}}, KeyID: "k"}
	rep.Add(Finding{Check: CheckIdentity, File: "a.whl", Want: "1", Got: "2", Msg: "the evidence is for sha256 2, this wheel is 1"})
	rep.Addf(CheckIdentity, "", "no wheel")
	err := rep.Err()
	want := "evidence e.tar.gz refused (2 findings):\n  identity: a.whl: the evidence is for sha256 2, this wheel is 1\n  identity: no wheel"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() =\n%v\nwant\n%s", err, want)
	}
	var coder interface{ ExitCode() int }
	if !errors.As(err, &coder) || coder.ExitCode() != 1 {
		t.Errorf("Err() does not exit 1: %#v", err)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"archive":"dist/e.tar.gz","checks":["identity"],"findings":[` +
		`{"check":"identity","file":"a.whl","want":"1","got":"2","message":"the evidence is for sha256 2, this wheel is 1"},` +
		`{"check":"identity","message":"no wheel"}],"key_id":"k"}`
	if string(data) != wantJSON {
		t.Errorf("JSON\n%s\nwant\n%s", data, wantJSON)
	}
	if (&Report{}).Err() != nil {
		t.Error("an empty report refuses")
	}
}
