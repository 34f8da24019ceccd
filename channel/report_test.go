package channel

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportErr pins the text of a channel that fails verification.
func TestReportErr(t *testing.T) {
	rep := &Report{Dest: "/srv/ch"}
	rep.add(".", CheckDest, "gone")
	rep.addCmp("index.html", CheckIndex, "a.whl", "1", "2", "link to a.whl has sha256 2, channel.json lists 1")
	want := "channel /srv/ch: 2 finding(s)\n  .: dest: gone\n  index.html: index: link to a.whl has sha256 2, channel.json lists 1"
	if err := rep.Err(); err == nil || err.Error() != want {
		t.Fatalf("Err() =\n%v\nwant\n%s", err, want)
	}
	if f := rep.Findings[1]; f.Member != "a.whl" || f.Want != "1" || f.Got != "2" {
		t.Errorf("typed fields %+v", f)
	}
	if (&Report{}).Err() != nil {
		t.Error("an empty report fails")
	}
}

// TestVerifyTypedFields checks that a finding comparing two values carries
// them: a wrong #sha256 fragment in index.html.
func TestVerifyTypedFields(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "ch")
	mustPublish(t, dest, release(t, "0.3.0", ""))
	replace(t, filepath.Join(dest, "index.html"), func(s string) string {
		i := strings.Index(s, "#sha256=") + len("#sha256=")
		return s[:i] + strings.Repeat("0", 64) + s[i+64:]
	})
	rep, err := Verify(context.Background(), dest, verifyOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.File == "index.html" && f.Check == CheckIndex && f.Got == strings.Repeat("0", 64) && len(f.Want) == 64 && f.Member != "" {
			return
		}
	}
	t.Errorf("no index finding with the link, the wanted and the found digest: %+v", rep.Findings)
}
