package main

import (
	"bytes"
	"slices"
	"testing"
)

// TestReportFlags checks how report's flags land in its options,
// separately from what it does.
func TestReportFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want ReportOptions
	}{
		{"defaults", nil, ReportOptions{Path: "dist"}},
		{"a channel as JSON", []string{"published", "--json"}, ReportOptions{Path: "published", JSON: true}},
		{"some fields as JSON, in declared order", []string{"--json=decision,kind"}, ReportOptions{Path: "dist", JSON: true, JSONFields: []string{"kind", "decision"}}},
		{"the page and the decision's flags", []string{"out", "--html", "r.html", "--to", "ch", "--key", "a.pub", "--key", "b.pub", "-t", "t1", "--allow-downgrade"},
			ReportOptions{Path: "out", HTML: "r.html", Publish: PublishOptions{To: "ch", Keys: []string{"a.pub", "b.pub"}, Targets: []string{"t1"}, AllowDowngrade: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }}
			var got *ReportOptions
			cmd := NewCmdReport(f, &globalOptions{}, func(o *ReportOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			w, p := tc.want, got.Publish
			if got.Path != w.Path || got.HTML != w.HTML || got.JSON != w.JSON || !slices.Equal(got.JSONFields, w.JSONFields) || p.To != w.Publish.To || !slices.Equal(p.Keys, w.Publish.Keys) ||
				!slices.Equal(p.Targets, w.Publish.Targets) || p.AllowDowngrade != w.Publish.AllowDowngrade {
				t.Errorf("options %+v (publish %+v), want %+v", got, p, w)
			}
		})
	}
}
