package finding

import (
	"errors"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	var r Report
	r.Run("sums")
	r.Run("wheels")
	r.Run("sums")
	if err := r.Err("x", nil, ""); err != nil || !r.OK() {
		t.Fatalf("empty report: %v", err)
	}
	r.Addf("wheels", "a.whl", "RECORD lists %d files", 3)
	r.Add(Finding{Check: "sums", File: "SHA256SUMS", Member: "a.whl", Want: "aa", Got: "bb", Msg: "digest differs"})
	r.Add(Finding{Check: "extract", Msg: "not a gzip stream"})
	if got := strings.Join(r.Checks, ","); got != "sums,wheels" {
		t.Errorf("checks %s", got)
	}
	var names []string
	for _, c := range r.ByCheck() {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "sums,wheels,extract" || len(r.Of("wheels")) != 1 {
		t.Errorf("by check %v", names)
	}
	err := r.Err("bundle b refused (3 findings):", nil, "fetch it again")
	want := "bundle b refused (3 findings):\n  wheels: a.whl: RECORD lists 3 files\n  sums: SHA256SUMS: a.whl: digest differs\n  extract: not a gzip stream\n\thint: fetch it again"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	var fe *Error
	if !errors.As(err, &fe) || fe.ExitCode() != 1 || fe.Report != &r {
		t.Errorf("error type %T", err)
	}
	custom := r.Err("h", func(f Finding) string { return f.Check }, "")
	if custom.Error() != "h\n  wheels\n  sums\n  extract" {
		t.Errorf("custom lines: %q", custom.Error())
	}
	if Plural(1) != "" || Plural(2) != "s" || Plural(0) != "s" {
		t.Error("plural")
	}
}
