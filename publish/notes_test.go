package publish

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/notes"
	"github.com/mkrelease/mkrelease/policies"
)

const testWheel = "vexl-0.3.0-py3-none-any.whl"

// checkedEvidence is what the audit's check of an evidence archive gives
// for records of one cases lane (one case FAIL when fail) and one
// crossover lane whose reference takes refStep a step.
func checkedEvidence(t *testing.T, fail bool, refStep float64) *runner.Report {
	t.Helper()
	lanes := []config.Lane{{Name: "semantic", Kind: config.LaneCases},
		{Name: "speed", Kind: config.LaneCrossover, Warmups: 1, Workloads: []config.Workload{{Name: "a", Phase: "p"}, {Name: "b", Phase: "p"}}}}
	cases := []evidence.Case{{Lane: "semantic", ID: "x", Status: evidence.StatusPass}, {Lane: "semantic", ID: "y", Status: evidence.StatusPass}}
	if fail {
		cases[1].Status = evidence.StatusFail
	}
	var ms []evidence.Measurement
	for _, w := range lanes[1].Workloads {
		for slot, role := range []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate} {
			step := 0.010
			if role == evidence.RoleReference {
				step = refStep
				if w.Name == "b" {
					step *= 1.1
				}
			}
			ms = append(ms, evidence.Measurement{Lane: "speed", Workload: w.Name, Phase: w.Phase, Role: role, Slot: slot + 1, Attempt: 1,
				Outcome: evidence.OutcomeOK, Steps: []float64{1, step, step, step * 1.01, step}, ResultSHA256: strings.Repeat("e", 64)})
		}
	}
	sum, err := runner.Recompute(lanes, cases, ms)
	if err != nil {
		t.Fatal(err)
	}
	run := store.Run{ID: "run-1", Target: "linux-x86_64", Interpreter: "CPython 3.12.4", SourcesTreeHash: strings.Repeat("d", 64),
		Wheels: []store.FileDigest{{Name: testWheel, SHA256: strings.Repeat("a", 64)}}, Lanes: []string{"semantic", "speed"}}
	ident, err := run.CanonicalIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return &runner.Report{Manifest: &runner.Manifest{Schema: runner.ManifestSchema, RunID: run.ID, Target: run.Target, Identity: ident}, Summary: sum}
}

// notesFolder writes a release folder holding the notes the build wrote,
// their sidecar, manifest.json and SHA256SUMS listing both files.
func notesFolder(t *testing.T) (dir, built string) {
	t.Helper()
	dir = t.TempDir()
	built = "## 0.3.0\n\n- Faster.\n"
	files := map[string]string{dist.NotesFile: built, dist.ManifestFile: "{}\n"}
	var sums checksum.Sums
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, checksum.Sum{Name: name, SHA256: checksum.Bytes([]byte(data))})
	}
	if err := dist.WriteSidecar(filepath.Join(dir, dist.NotesFile), checksum.Bytes([]byte(built))); err != nil {
		t.Fatal(err)
	}
	if err := checksum.WriteSums(filepath.Join(dir, dist.ChecksumsFile), sums); err != nil {
		t.Fatal(err)
	}
	return dir, built
}

// publishedNotes selects the folder's assets for target linux-x86_64 with
// evidence rep and writes the notes; it returns the selection and the
// published notes' bytes.
func publishedNotes(t *testing.T, dir string, rep *runner.Report) (*selection, []byte) {
	t.Helper()
	rel, err := dist.Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	names := dist.NamesOf("vexl", "0.3.0")
	folder := &audit.Folder{Evidence: map[string]*runner.Report{names.Evidence("linux-x86_64"): rep}}
	staging := t.TempDir()
	written, err := writeNotes(rel, folder, names, "vexl", "0.3.0", []string{"linux-x86_64"}, staging)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := selectAssets(rel, folder, names, []string{"linux-x86_64"}, nil, staging, written)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sel.paths, func(p string) bool { return filepath.Base(p) == dist.NotesFile })
	if i < 0 {
		t.Fatalf("no %s among the assets %v", dist.NotesFile, sel.names())
	}
	data, err := os.ReadFile(sel.paths[i])
	if err != nil {
		t.Fatal(err)
	}
	return sel, data
}

// TestWriteNotes: the published notes are the folder's notes followed by
// the Validation section of the checked evidence; they replace the
// folder's file among the assets, with a sidecar and a SHA256SUMS line of
// their own and known digests that are the files'; the other lines of
// SHA256SUMS stay.
func TestWriteNotes(t *testing.T) {
	dir, built := notesFolder(t)
	rep := checkedEvidence(t, false, 0.012)
	sel, data := publishedNotes(t, dir, rep)
	want := notes.Markdown(notes.Release{Project: "vexl", Version: "0.3.0", Changelog: []byte(built), Targets: []notes.Target{
		{Name: "linux-x86_64", Evidence: "vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz", Report: rep}}})
	if !bytes.Equal(data, want) || !bytes.HasPrefix(data, []byte(built)) || !bytes.Contains(data, []byte("| semantic | cases | | 2/2 PASS |")) {
		t.Errorf("published notes:\n%s\nwant\n%s", data, want)
	}
	wantNames := []string{dist.NotesFile, dist.Sidecar(dist.NotesFile), dist.ChecksumsFile, dist.ManifestFile}
	slices.Sort(wantNames)
	if got := sel.names(); !slices.Equal(got, wantNames) {
		t.Errorf("assets %v, want %v", got, wantNames)
	}
	for _, p := range sel.paths {
		sha, size, err := checksum.File(p)
		if err != nil {
			t.Fatal(err)
		}
		if k := sel.known[p]; k.SHA256 != sha || k.Size != size || k.Name != filepath.Base(p) {
			t.Errorf("%s: known %+v, the file has %s (%d bytes)", p, k, sha, size)
		}
		switch filepath.Base(p) {
		case dist.ManifestFile:
			if filepath.Dir(p) != dir {
				t.Errorf("%s is not the folder's", p)
			}
		case dist.Sidecar(dist.NotesFile):
			if res, err := dist.VerifySidecar(t.Context(), p); err != nil || !res.OK() {
				t.Errorf("sidecar %s: %v %+v", p, err, res)
			}
		case dist.ChecksumsFile:
			sums, err := checksum.ReadSums(p)
			if err != nil {
				t.Fatal(err)
			}
			wantSums := checksum.Sums{{Name: dist.NotesFile, SHA256: checksum.Bytes(data)}, {Name: dist.ManifestFile, SHA256: checksum.Bytes([]byte("{}\n"))}}
			if !slices.Equal(sums, wantSums) {
				t.Errorf("published SHA256SUMS %v, want %v", sums, wantSums)
			}
		}
	}
	// The folder itself is left as it was.
	if got, _ := os.ReadFile(filepath.Join(dir, dist.NotesFile)); string(got) != built {
		t.Errorf("the folder's notes changed: %q", got)
	}
}

// TestWriteNotesChangedRecord: one changed evidence record changes the
// published notes (and so the digest the summary signs) in the figure it
// feeds; the same records give the same bytes, so a second publish of
// the same release is a no-op.
func TestWriteNotesChangedRecord(t *testing.T) {
	dir, _ := notesFolder(t)
	_, base := publishedNotes(t, dir, checkedEvidence(t, false, 0.012))
	if _, again := publishedNotes(t, dir, checkedEvidence(t, false, 0.012)); !bytes.Equal(base, again) {
		t.Fatal("the same evidence gave other notes")
	}
	overall := func(rep *runner.Report) string {
		l, _ := rep.Summary.Lane("speed")
		return "| speed | overall | 2 | " + notes.Board(l.Crossover.Overall) + " |"
	}
	slower := checkedEvidence(t, false, 0.013)
	for _, tc := range []struct {
		name     string
		rep      *runner.Report
		from, to string
	}{
		{"a reference step time", slower, overall(checkedEvidence(t, false, 0.012)), overall(slower)},
		{"a case that fails", checkedEvidence(t, true, 0.012), "| semantic | cases | | 2/2 PASS |", "| semantic | cases | | 1/2 PASS, 1 FAIL (y FAIL) |"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := publishedNotes(t, dir, tc.rep)
			if tc.from == tc.to || !bytes.Contains(base, []byte(tc.from)) || !bytes.Contains(got, []byte(tc.to)) {
				t.Errorf("want %q to become %q:\n--- before\n%s\n--- after\n%s", tc.from, tc.to, base, got)
			}
			if checksum.Bytes(got) == checksum.Bytes(base) {
				t.Error("the digest did not change")
			}
		})
	}
}

// The verification summary's subjects are the wheels, bundles and SBOMs
// (SPDX and CycloneDX), and the release notes publish wrote; nothing else.
func TestVSASubjectsHoldTheNotes(t *testing.T) {
	sha := func(c byte) string { return strings.Repeat(string(c), 64) }
	in := policies.Input{Release: policies.Release{Project: "vexl", Version: "0.3.0"}, Artifacts: []policies.Artifact{
		{Name: dist.NotesFile, Kind: dist.KindNotes.String(), SHA256: sha('1')},
		{Name: dist.Sidecar(dist.NotesFile), Kind: dist.KindSidecar.String(), SHA256: sha('2')},
		{Name: dist.ManifestFile, Kind: dist.KindManifest.String(), SHA256: sha('3')},
		{Name: testWheel, Kind: dist.KindWheel.String(), SHA256: sha('4')},
		{Name: "vexl-0.3.0-linux-x86_64.tar.gz", Kind: dist.KindBundle.String(), SHA256: sha('5')},
		{Name: "vexl-0.3.0.spdx.json", Kind: dist.KindSBOM.String(), SHA256: sha('6')},
		{Name: "vexl-0.3.0.cdx.json", Kind: dist.KindCycloneDX.String(), SHA256: sha('7')},
		{Name: dist.Sidecar("vexl-0.3.0.cdx.json"), Kind: dist.KindSidecar.String(), SHA256: sha('8')},
	}}
	v, err := vsa(&dist.Release{}, in, &policies.Decision{Allow: true}, audit.ProvenanceFacts{}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range v.Subjects {
		got = append(got, s.Name+" "+s.SHA256[:1])
	}
	if want := []string{dist.NotesFile + " 1", testWheel + " 4", "vexl-0.3.0-linux-x86_64.tar.gz 5", "vexl-0.3.0.spdx.json 6", "vexl-0.3.0.cdx.json 7"}; !slices.Equal(got, want) {
		t.Errorf("subjects %v, want %v", got, want)
	}
}
