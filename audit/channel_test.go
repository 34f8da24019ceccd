package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
)

// TestVSAFindingsNotes: a version's verification summary must name the
// published release notes with their digest, as it names the wheels.
func TestVSAFindingsNotes(t *testing.T) {
	const whl = "vexl-0.3.0-py3-none-any.whl"
	signer, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v, err := provenance.NewVerifier(signer.Public())
	if err != nil {
		t.Fatal(err)
	}
	const notes = "## 0.3.0\n\n### Validation\n\n| semantic | cases | | 2/2 PASS |\n"
	for _, tc := range []struct {
		name     string
		subjects []string // the summary's subjects: the wheel, the notes
		notes    string   // the published notes; "" for none
		want     []string // the findings, as "file: message" prefixes
	}{
		{"notes signed and published", []string{whl, dist.NotesFile}, notes, nil},
		{"notes changed after signing", []string{whl, dist.NotesFile}, strings.Replace(notes, "2/2", "3/3", 1),
			[]string{dist.NotesFile + ": sha256 "}},
		{"notes not a subject", []string{whl}, notes, []string{dist.NotesFile + ": published but not a subject of"}},
		{"notes a subject, not published", []string{whl, dist.NotesFile}, "", []string{dist.NotesFile + ": a subject of"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write := func(name, data string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write(whl, "wheel bytes")
			digests := map[string]string{whl: checksum.Bytes([]byte("wheel bytes")), dist.NotesFile: checksum.Bytes([]byte(notes))}
			if tc.notes != "" {
				write(dist.NotesFile, tc.notes)
			}
			s := provenance.VSA{VerifierID: "https://example.org/v", ResourceURI: "pkg:generic/vexl@0.3.0", PolicyURI: "https://example.org/p",
				PolicyDigest: map[string]string{"sha256": strings.Repeat("0", 64)}, Result: provenance.VSAPassed, TimeVerified: time.Unix(0, 0)}
			for _, n := range tc.subjects {
				s.Subjects = append(s.Subjects, provenance.Subject{Name: n, SHA256: digests[n]})
			}
			st, err := s.Statement()
			if err != nil {
				t.Fatal(err)
			}
			env, err := provenance.SignStatement(t.Context(), signer, st)
			if err != nil {
				t.Fatal(err)
			}
			write(dist.NamesOf("vexl", "0.3.0").VSA(), string(env))
			files, err := summarisedFiles(dir)
			if err != nil {
				t.Fatal(err)
			}
			got := vsaFindings(v, dir, "", files)
			if len(got) != len(tc.want) {
				t.Fatalf("findings %+v, want %q", got, tc.want)
			}
			for i, f := range got {
				if line := f.File + ": " + f.Msg; !strings.HasPrefix(line, tc.want[i]) {
					t.Errorf("finding %q, want it to begin %q", line, tc.want[i])
				}
			}
		})
	}
}
