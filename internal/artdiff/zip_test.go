package artdiff

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
)

// TestAmbiguousZip: a zip that the structure audit refuses is itself the
// difference, not what archive/zip shows of it.
func TestAmbiguousZip(t *testing.T) {
	plain := func() *zt.Archive {
		return &zt.Archive{Entries: []*zt.Entry{zt.Stored("pkg/a.txt", []byte("hello\n")), zt.Deflated("pkg/b.txt", []byte("world\n"))}}
	}
	renamed := plain()
	other := "pkg/evil.txt"
	renamed.Entries[0].LocalName = &other
	hidden := plain()
	// An entry only streaming readers see, between the two listed ones.
	extra := zt.Stored("pkg/hidden.txt", []byte("surprise\n"))
	extra.NoCentral = true
	hidden.Entries = []*zt.Entry{hidden.Entries[0], extra, hidden.Entries[1]}

	tests := []struct {
		name               string
		original, rebuilt  *zt.Archive
		what, detail, last string
	}{
		{"local name in rebuilt", plain(), renamed, "ambiguous archive",
			`rebuilt: zip structure: "pkg/a.txt": at offset 0: the local header names the entry "pkg/evil.txt"`,
			"; zip readers would not agree on what the archive holds"},
		{"hidden entry in original", hidden, plain(), "ambiguous archive",
			`original: zip structure: "pkg/b.txt": at offset 45: 53 bytes between "pkg/a.txt" and this entry belong to no entry`, ""},
		{"both", renamed, hidden, "ambiguous archive",
			`original: zip structure: "pkg/a.txt": at offset 0: `, `; rebuilt: zip structure: "pkg/b.txt": at offset 45: `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			a, b := filepath.Join(dir, "a.whl"), filepath.Join(dir, "b.whl")
			must(os.WriteFile(a, tt.original.Bytes(), 0o644))
			must(os.WriteFile(b, tt.rebuilt.Bytes(), 0o644))
			d, err := Compare("demo-1.0-py3-none-any.whl", a, b)
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				t.Fatal("no difference")
			}
			t.Log(d)
			if d.What != tt.what || len(d.Path) != 0 || !strings.Contains(d.Detail, tt.detail) || !strings.Contains(d.Detail, tt.last) {
				t.Errorf("Compare = %#v\nwant what %q, detail containing %q and %q", d, tt.what, tt.detail, tt.last)
			}
		})
	}
}
