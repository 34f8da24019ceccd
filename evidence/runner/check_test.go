package runner

import (
	"context"
	"crypto"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/extract"
	"github.com/mkrelease/mkrelease/provenance"
)

// fixture is evidence made from synthetic records, without running a
// lane: a cases lane (3 PASS, 1 FAIL) and a crossover lane of two
// workloads in which the candidate is exactly twice as fast.
type fixture struct {
	o      RunOptions
	stage  string // the staged folder (kept for tampering)
	name   string
	run    store.Run
	lanes  []config.Lane
	cases  []evidence.Case
	ms     []evidence.Measurement
	signer provenance.Signer
	keys   []crypto.PublicKey
	wheels map[string]string
}

const (
	wheelA = "demo-1.0-py3-none-any.whl"
	wheelB = "dep-2.0-py3-none-any.whl"
)

func hex64(c byte) string { return strings.Repeat(string(c), 64) }

func newFixture(t *testing.T) *fixture {
	t.Helper()
	signer, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{signer: signer, keys: []crypto.PublicKey{signer.Public()}, name: dist.NamesOf("demo", "1.0").EvidenceRoot("linux-x86_64")}
	f.wheels = map[string]string{wheelA: hex64('a'), wheelB: hex64('b')}
	f.lanes = []config.Lane{
		{Name: "unit", Kind: config.LaneCases, Timeout: config.Duration{Duration: time.Minute}},
		{Name: "speed", Kind: config.LaneCrossover, Timeout: config.Duration{Duration: time.Minute}, Steps: 6, Warmups: 1,
			Workloads: []config.Workload{{Name: "add", Phase: "p1"}, {Name: "mul", Phase: "p2"}}},
	}
	f.cases = []evidence.Case{
		{Lane: "unit", ID: "a", Status: evidence.StatusPass, Tier: "1", Duration: 0.5},
		{Lane: "unit", ID: "b", Status: evidence.StatusPass, Tier: "1", Metrics: map[string]float64{"err": 0}},
		{Lane: "unit", ID: "c", Status: evidence.StatusFail, Tier: "2", Message: "1 != 2"},
		{Lane: "unit", ID: "d", Status: evidence.StatusPass, Tier: "2"},
	}
	for _, w := range f.lanes[1].Workloads {
		for slot, role := range []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate} {
			step := 0.01
			if role == evidence.RoleReference {
				step = 0.02
			}
			f.ms = append(f.ms, evidence.Measurement{Lane: "speed", Workload: w.Name, Phase: w.Phase, Role: role, Slot: slot + 1, Attempt: 1,
				Outcome: evidence.OutcomeOK, Steps: []float64{1, step, step, step, step, step}, ResultSHA256: hex64('c')})
		}
	}
	f.run = store.Run{ID: "run-1", Target: "linux-x86_64", SourcesTreeHash: hex64('d'), Interpreter: "CPython 3.12.0",
		Wheels:   []store.FileDigest{{Name: wheelA, SHA256: hex64('a')}, {Name: wheelB, SHA256: hex64('b')}},
		Lanes:    []string{"speed", "unit"},
		Protocol: store.Protocol{Steps: 6, WarmUps: 1}}
	cfg := &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}, SHA256: hex64('e')}
	f.o = RunOptions{Config: cfg, Dist: t.TempDir(), Target: "linux-x86_64", Signer: signer}
	f.stage = filepath.Join(t.TempDir(), f.name)
	sum, err := Recompute(f.lanes, f.cases, f.ms)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := writeStage(f.stage, cfg, "linux-x86_64", f.run, f.lanes, hostWatch{}, f.cases, f.ms, sum, at, at); err != nil {
		t.Fatal(err)
	}
	f.pack(t)
	return f
}

// pack (re)writes the archive and statements from the staged folder, as a
// producer holding the key would: SHA256SUMS, sidecar and signatures are
// all consistent with whatever the folder holds.
func (f *fixture) pack(t *testing.T) string {
	t.Helper()
	if err := writeSums(f.stage); err != nil {
		t.Fatal(err)
	}
	sum, err := Recompute(f.lanes, f.cases, f.ms)
	if err != nil {
		t.Fatal(err)
	}
	archive, _, err := pack(context.Background(), f.o, f.stage, f.run, sum)
	if err != nil {
		t.Fatal(err)
	}
	return archive
}

func (f *fixture) check(t *testing.T, archive string) *Report {
	t.Helper()
	private := sanitize.FromSystem()
	rep, err := Check(context.Background(), archive, CheckOptions{TrustedKeys: f.keys, Wheels: f.wheels, Private: &private})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func findings(rep *Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.Check + ": " + f.File + ": " + f.Msg + "\n")
	}
	return b.String()
}

func TestCheckAcceptsUntouchedEvidence(t *testing.T) {
	f := newFixture(t)
	rep := f.check(t, filepath.Join(f.o.Dist, f.name+".tar.gz"))
	if !rep.OK() {
		t.Fatalf("untouched evidence refused:\n%s", findings(rep))
	}
	want := []string{CheckSidecar, CheckArchive, CheckSums, CheckSanitised, CheckRecords, CheckStore, CheckAggregates, CheckIdentity, CheckSignature}
	if strings.Join(rep.Checks, ",") != strings.Join(want, ",") {
		t.Errorf("checks = %v, want %v", rep.Checks, want)
	}
	unit, _ := rep.Summary.Lane("unit")
	if n := unit.Cases.Counts; n.Total != 4 || n.Pass != 3 || n.Fail != 1 {
		t.Errorf("recomputed counts = %+v, want 4 total, 3 pass, 1 fail", n)
	}
	speed, _ := rep.Summary.Lane("speed")
	// Twice as fast in every workload: r = 2 on every board.
	if g := speed.Crossover.Overall.Geomean; g < 2-1e-12 || g > 2+1e-12 {
		t.Errorf("overall geomean = %v, want 2", g)
	}
}

// TestCheckLyingSummary: a summary.json that claims every case passed,
// even packed, summed and signed consistently, is caught, and the values
// recomputed from the raw records are the ones the report carries.
func TestCheckLyingSummary(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.stage, "unit", "summary.json")
	var ls LaneSummary
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ls); err != nil {
		t.Fatal(err)
	}
	ls.Cases.Counts.Pass, ls.Cases.Counts.Fail, ls.Cases.Failing = 4, 0, nil
	lie, _ := json.MarshalIndent(ls, "", "  ")
	if err := os.WriteFile(path, append(lie, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := f.check(t, f.pack(t))
	want := "aggregates: unit/summary.json: says something else than its raw records; the values recomputed from the records are the ones used\n"
	if got := findings(rep); got != want {
		t.Fatalf("findings:\n%s\nwant exactly:\n%s", got, want)
	}
	unit, _ := rep.Summary.Lane("unit")
	if n := unit.Cases.Counts; n.Pass != 3 || n.Fail != 1 || len(unit.Cases.Failing) != 1 || unit.Cases.Failing[0].ID != "c" {
		t.Errorf("the report carries %+v (failing %v), want the recomputed 3 pass, 1 fail (c)", n, unit.Cases.Failing)
	}
}

// TestCheckStoreMissingRow: one case row deleted from the store (and the
// archive re-packed consistently) is refused, naming the row.
func TestCheckStoreMissingRow(t *testing.T) {
	f := newFixture(t)
	db, err := sql.Open("sqlite", filepath.Join(f.stage, StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM cases WHERE lane = 'unit' AND id = 'c'`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	rep := f.check(t, f.pack(t))
	got := findings(rep)
	if !strings.Contains(got, "store: "+StoreFile+": cases unit/c: row in the JSONL records is missing from the store\n") {
		t.Errorf("findings do not name the missing row:\n%s", got)
	}
	if !strings.Contains(got, "checksum mismatch") {
		t.Errorf("findings do not report the store's broken page checksums:\n%s", got)
	}
	for _, fd := range rep.Findings {
		if fd.Check != CheckStore {
			t.Errorf("unexpected finding outside the store check: %+v", fd)
		}
	}
}

// TestCheckOtherWheels: the run identity must name exactly the wheels of
// the bundle, each with its digest: evidence for another digest of a
// wheel, for a run that did not install one of the bundle's wheels or
// installed another, and evidence checked without the bundle's wheels,
// are refused.
func TestCheckOtherWheels(t *testing.T) {
	f := newFixture(t)
	archive := filepath.Join(f.o.Dist, f.name+".tar.gz")
	const unknown = "identity: demo-1.0-linux-x86_64.tar.gz: the wheels of the target's bundle are not known (it is not beside the evidence, or does not check out), so nothing shows which wheels the evidence is for: check the evidence beside its bundle\n"
	tests := []struct {
		name   string
		wheels map[string]string
		want   string
	}{
		{"the bundle's wheels exactly", map[string]string{wheelA: hex64('a'), wheelB: hex64('b')}, ""},
		{"other digest", map[string]string{wheelA: hex64('f'), wheelB: hex64('b')},
			"identity: " + wheelA + ": the evidence is for sha256 " + hex64('a') + ", this wheel is " + hex64('f') + ": evidence for other wheels; run mkrelease evidence run on this build\n"},
		{"wheel not installed", map[string]string{wheelA: hex64('a'), wheelB: hex64('b'), "new-1.0-py3-none-any.whl": hex64('1')},
			"identity: new-1.0-py3-none-any.whl: the evidence is not for this wheel: its run did not install it\n"},
		{"installed wheel not in the bundle", map[string]string{wheelA: hex64('a')},
			"identity: " + wheelB + ": the run installed this wheel, which is not in the bundle\n"},
		// What a lax match took: some of the run's wheels, the others
		// not compared.
		{"a subset of the run's wheels", map[string]string{wheelB: hex64('b')},
			"identity: " + wheelA + ": the run installed this wheel, which is not in the bundle\n"},
		{"none of the run's wheels", map[string]string{"x-1-py3-none-any.whl": hex64('1')},
			"identity: x-1-py3-none-any.whl: the evidence is not for this wheel: its run did not install it\n" +
				"identity: " + wheelA + ": the run installed this wheel, which is not in the bundle\n" +
				"identity: " + wheelB + ": the run installed this wheel, which is not in the bundle\n"},
		{"no wheels", nil, unknown},
		{"an empty set of wheels", map[string]string{}, unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Check(context.Background(), archive, CheckOptions{TrustedKeys: f.keys, Wheels: tt.wheels})
			if err != nil {
				t.Fatal(err)
			}
			if got := findings(rep); got != tt.want {
				t.Errorf("findings:\n%s\nwant exactly:\n%s", got, tt.want)
			}
		})
	}
}

// TestCheckTampering: the archive changed after signing, a signature by an
// untrusted key, a record edited without the store, a private path.
func TestCheckTampering(t *testing.T) {
	t.Run("archive byte changed", func(t *testing.T) {
		f := newFixture(t)
		archive := filepath.Join(f.o.Dist, f.name+".tar.gz")
		data, _ := os.ReadFile(archive)
		data[len(data)/2] ^= 1
		os.WriteFile(archive, data, 0o644)
		rep := f.check(t, archive)
		if rep.OK() || rep.Findings[0].Check != CheckSidecar {
			t.Errorf("findings:\n%s\nwant the sidecar first", findings(rep))
		}
	})
	t.Run("untrusted key", func(t *testing.T) {
		f := newFixture(t)
		other, _, err := provenance.DevKey(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f.keys = []crypto.PublicKey{other.Public()}
		rep := f.check(t, filepath.Join(f.o.Dist, f.name+".tar.gz"))
		for _, fd := range rep.Findings {
			if fd.Check != CheckSignature {
				t.Errorf("unexpected finding %+v", fd)
			}
		}
		// Three statements (two lanes, the summary), none verifies, so no
		// summary statement is seen either.
		if len(rep.Findings) != 4 {
			t.Errorf("findings:\n%s\nwant 3 unverified statements and no signed summary", findings(rep))
		}
	})
	t.Run("record edited, store not", func(t *testing.T) {
		f := newFixture(t)
		path := filepath.Join(f.stage, "unit", "cases.jsonl")
		data, _ := os.ReadFile(path)
		os.WriteFile(path, []byte(strings.Replace(string(data), `"status":"FAIL"`, `"status":"PASS"`, 1)), 0o644)
		rep := f.check(t, f.pack(t))
		got := findings(rep)
		if !strings.Contains(got, "store: "+StoreFile+": cases unit/c status: store has \"FAIL\", JSONL has \"PASS\"\n") {
			t.Errorf("findings:\n%s", got)
		}
	})
	t.Run("private path", func(t *testing.T) {
		f := newFixture(t)
		path := filepath.Join(f.stage, "unit", "report.md")
		data, _ := os.ReadFile(path)
		prefix := len(data)
		os.WriteFile(path, append(data, []byte("see /home/alice/notes.txt\n")...), 0o644)
		rep := f.check(t, f.pack(t))
		want := "sanitised: : unit/report.md: offset " + strconv.Itoa(prefix+4) + ": home-path: "
		if got := findings(rep); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
			t.Errorf("findings:\n%s\nwant one starting %q", got, want)
		}
	})
}

// TestPackLayout checks that the packer writes one root folder.
func TestPackLayout(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(t.TempDir(), "x")
	if _, err := extract.ExtractFile(context.Background(), filepath.Join(f.o.Dist, f.name+".tar.gz"), dir, extract.Options{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	want := []string{
		f.name + "/SHA256SUMS", f.name + "/evidence.sqlite3", f.name + "/manifest.json",
		f.name + "/speed/measurements.jsonl", f.name + "/speed/report.md", f.name + "/speed/summary.json",
		f.name + "/summary.json",
		f.name + "/unit/cases.jsonl", f.name + "/unit/report.md", f.name + "/unit/summary.json",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("archive holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckKnownDigest shows that evidence checked with the digest its
// caller already has is reported exactly as when Check hashes it, that
// the digest given is what the sidecar and the statements are compared
// with (the archive is not hashed again), and which options are refused.
func TestCheckKnownDigest(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change alters the fixture's archive or sidecar.
		change  func(t *testing.T, archive string)
		sidecar string // in the one sidecar finding; "" for none
	}{
		{name: "untouched", change: func(*testing.T, string) {}},
		{name: "no sidecar", change: func(t *testing.T, archive string) {
			os.Remove(dist.SidecarPath(archive))
		}},
		{name: "archive byte changed", sidecar: "mismatch", change: func(t *testing.T, archive string) {
			data, _ := os.ReadFile(archive)
			data[len(data)/2] ^= 1
			os.WriteFile(archive, data, 0o644)
		}},
		{name: "sidecar naming another file", sidecar: "sidecar names another file", change: func(t *testing.T, archive string) {
			os.WriteFile(dist.SidecarPath(archive), []byte(hex64('0')+"  other.tar.gz\n"), 0o644)
		}},
		{name: "malformed sidecar", sidecar: "line 1", change: func(t *testing.T, archive string) {
			os.WriteFile(dist.SidecarPath(archive), []byte("not a sum\n"), 0o644)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			archive := filepath.Join(f.o.Dist, f.name+".tar.gz")
			tc.change(t, archive)
			sha, size, err := checksum.File(archive)
			if err != nil {
				t.Fatal(err)
			}
			private := sanitize.FromSystem()
			o := CheckOptions{TrustedKeys: f.keys, Wheels: f.wheels, Private: &private}
			hashed, err := Check(context.Background(), archive, o)
			if err != nil {
				t.Fatal(err)
			}
			o.ArchiveSHA256, o.ArchiveSize = strings.ToUpper(sha), size
			given, err := Check(context.Background(), archive, o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(hashed, given) {
				t.Errorf("with its digest:\n%s\nhashing it:\n%s", findings(given), findings(hashed))
			}
			var sidecar []string
			for _, fd := range given.Findings {
				if fd.Check == CheckSidecar {
					sidecar = append(sidecar, fd.Msg)
				}
			}
			if tc.sidecar == "" && len(sidecar) > 0 || tc.sidecar != "" && (len(sidecar) != 1 || !strings.Contains(sidecar[0], tc.sidecar)) {
				t.Errorf("sidecar findings %q, want one saying %q", sidecar, tc.sidecar)
			}
		})
	}

	f := newFixture(t)
	archive := filepath.Join(f.o.Dist, f.name+".tar.gz")
	sha, size, err := checksum.File(archive)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the digest given is the one compared", func(t *testing.T) {
		wrong := hex64('9')
		rep, err := Check(context.Background(), archive, CheckOptions{TrustedKeys: f.keys, Wheels: f.wheels, ArchiveSHA256: wrong, ArchiveSize: size})
		if err != nil {
			t.Fatal(err)
		}
		got := findings(rep)
		if !strings.HasPrefix(got, CheckSidecar+": "+f.name+".tar.gz.sha256: "+f.name+".tar.gz: sha256 mismatch: listed "+sha+", file has "+wrong) {
			t.Errorf("findings:\n%s\nwant the sidecar mismatch naming the digest given first", got)
		}
		if !strings.Contains(got, CheckSignature+": "+f.name+".tar.gz: statement 1 ") || !strings.Contains(got, "does not name it with sha256 "+wrong) {
			t.Errorf("findings:\n%s\nwant the statements compared with the digest given", got)
		}
		if now, _, _ := checksum.File(archive); now != sha {
			t.Fatalf("the archive changed: %s", now)
		}
		if rep := f.check(t, archive); !rep.OK() {
			t.Errorf("hashed, the same evidence is refused:\n%s", findings(rep))
		}
	})
	t.Run("refused options", func(t *testing.T) {
		for _, o := range []CheckOptions{
			{ArchiveSHA256: sha[:63]},
			{ArchiveSHA256: sha[:63] + "g"},
			{ArchiveSHA256: sha, ArchiveSize: size + 1},
			{ArchiveSize: size - 1},
		} {
			if _, err := Check(context.Background(), archive, o); err == nil || !strings.Contains(err.Error(), archive) {
				t.Errorf("%q %d: %v, want an error naming the archive", o.ArchiveSHA256, o.ArchiveSize, err)
			}
		}
	})
}
