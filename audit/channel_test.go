package audit

import (
	"crypto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/channeltest"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testkey"
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

// states is a ChannelStates kept in memory.
type states struct {
	seen     *channel.Checkpoint
	verified []*channel.Checkpoint
}

func (s *states) Seen(string) (*channel.Checkpoint, error) { return s.seen, nil }

func (s *states) Verified(_ string, cp *channel.Checkpoint) error {
	s.verified = append(s.verified, cp)
	return nil
}

// TestChannelRollback: a channel that passes every check has its state
// kept; pointed back at its previous generation it fails the rollback
// check against that state (and only it), and nothing is kept.
func TestChannelRollback(t *testing.T) {
	signer := testkey.Signer("audit")
	dest := filepath.Join(t.TempDir(), "ch")
	for _, v := range []string{"1.0", "1.1"} {
		if _, err := channeltest.Publish(t.Context(), dest, channel.Release{Project: "demo", Version: v, Signer: signer}); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{TrustedKeys: []crypto.PublicKey{signer.Public()}, Channels: &states{}}
	failed := func(items []Item) []string {
		var out []string
		for _, it := range items {
			for _, c := range it.Checks {
				if !c.OK {
					out = append(out, c.Name)
				}
			}
		}
		return out
	}
	items, err := Channel(t.Context(), dest, o)
	if err != nil {
		t.Fatal(err)
	}
	kept := o.Channels.(*states).verified
	if got := failed(items); len(got) > 0 || len(kept) != 1 || kept[0].Generation != 2 {
		t.Fatalf("failed checks %q, kept %+v; want none failed and generation 2 kept", got, kept)
	}

	if err := os.Remove(dest); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".ch.generations/g-000001", dest); err != nil {
		t.Fatal(err)
	}
	o.Channels = &states{seen: kept[0]}
	items, err = Channel(t.Context(), dest, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := failed(items); !slices.Equal(got, []string{"rollback"}) || len(o.Channels.(*states).verified) != 0 {
		t.Errorf("failed checks %q, kept %+v; want only rollback failed and nothing kept", got, o.Channels.(*states).verified)
	}
	// Negative control: with nothing seen, the rolled back channel passes.
	o.Channels = &states{}
	if items, err = Channel(t.Context(), dest, o); err != nil || len(failed(items)) > 0 {
		t.Errorf("with no state seen: %v, failed %q", err, failed(items))
	}
}
