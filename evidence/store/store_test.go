package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
)

func hex64(c byte) string { return strings.Repeat(string(c), 64) }

func testRun() Run {
	return Run{
		ID:     "run-1",
		Target: "demo 1.2.0",
		Wheels: []FileDigest{
			{Name: "demo-1.2.0-cp312-cp312-manylinux_2_28_x86_64.whl", SHA256: hex64('b')},
			{Name: "demo-1.2.0-py3-none-any.whl", SHA256: hex64('a')},
		},
		NativeLibraries: []FileDigest{{Name: "demo/_core.so", SHA256: hex64('c')}},
		SourcesTreeHash: hex64('d'),
		Interpreter:     "CPython 3.12.4",
		Distributions: []Distribution{
			{Name: "numpy", Version: "2.0.1", MetadataSHA256: hex64('e')},
			{Name: "demo", Version: "1.2.0", MetadataSHA256: hex64('f')},
		},
		Lanes:       []string{"unit", "bench"},
		Protocol:    Protocol{Steps: 16, WarmUps: 3},
		Environment: map[string]string{"OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"},
	}
}

func testCases() []evidence.Case {
	return []evidence.Case{
		{Lane: "unit", ID: "test_add", Status: evidence.StatusPass, Tier: "fast", Duration: 0.0125,
			Metrics: map[string]float64{"mae": 1e-9, "max": 0.1}, Tolerance: map[string]float64{"mae": 1e-6}},
		{Lane: "unit", ID: "test_sub", Status: evidence.StatusFail, Duration: 3, Message: "expected 1, got 2"},
		{Lane: "unit", ID: "test_skip", Status: evidence.StatusSkip, Duration: 0},
		{Lane: "unit", ID: "test_err", Status: evidence.StatusError, Duration: 1.5, Message: "boom"},
	}
}

func steps(n int, base float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = base + float64(i)*0.001
	}
	return s
}

func testMeasurements() []evidence.Measurement {
	var ms []evidence.Measurement
	for _, w := range []string{"small", "large"} {
		for slot, role := range []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate} {
			ms = append(ms, evidence.Measurement{Lane: "bench", Workload: w, Phase: "train", Role: role,
				Slot: slot + 1, Attempt: 1, Outcome: evidence.OutcomeOK, Steps: steps(16, 0.5+float64(slot)/10),
				ResultSHA256: hex64('9')})
		}
	}
	// A reference that failed to start, and its retry.
	ms[2].Outcome, ms[2].Steps, ms[2].ResultSHA256, ms[2].Error = evidence.OutcomeStartupFailure, nil, "", "exit status 1"
	retry := ms[6]
	retry.Workload, retry.Slot, retry.Attempt = "small", 2, 2
	return append(ms, retry)
}

// extremeFloats are values whose bits must survive the store exactly.
func extremeFloats() []float64 {
	return []float64{
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 2.2250738585072009e-308, // subnormals
		math.MaxFloat64, -math.MaxFloat64, 1e300, 1e-300, 0.1, 1.0 / 3, math.Pi,
		math.Copysign(0, -1), 0, 1 << 53, 1<<53 + 2, 9007199254740993, 1e20, -1e20, 4.35, 123456789.123456789,
		math.Nextafter(1, 2), math.Nextafter(1, 0), 5e-324, 1.7976931348623157e308,
	}
}

func write(t *testing.T, run Run, cases []evidence.Case, ms []evidence.Measurement) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "evidence.sqlite")
	if err := Write(path, run, cases, ms); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return path
}

func open(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sameBits reports whether a and b hold the same records, floats compared
// bit for bit (reflect.DeepEqual compares them with ==).
func sameBits(a, b any) bool {
	return fmt.Sprintf("%#v", bitsOf(a)) == fmt.Sprintf("%#v", bitsOf(b))
}

func bitsOf(v any) any {
	switch v := v.(type) {
	case []evidence.Case:
		var out []any
		for _, c := range v {
			out = append(out, []any{c.Lane, c.ID, c.Status, c.Tier, bitsOf(c.Metrics), bitsOf(c.Tolerance), math.Float64bits(c.Duration), c.Message})
		}
		return out
	case []evidence.Measurement:
		var out []any
		for _, m := range v {
			out = append(out, []any{m.Lane, m.Workload, m.Phase, m.Role, m.Slot, m.Attempt, m.Outcome, bitsOf(m.Steps), m.ResultSHA256, m.Error})
		}
		return out
	case map[string]float64:
		out := map[string]uint64{}
		for k, f := range v {
			out[k] = math.Float64bits(f)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []float64:
		var out []uint64
		for _, f := range v {
			out = append(out, math.Float64bits(f))
		}
		return out
	}
	panic(fmt.Sprintf("bitsOf %T", v))
}

func TestRoundTrip(t *testing.T) {
	extreme := extremeFloats()
	metrics := map[string]float64{}
	for i, f := range extreme {
		metrics[fmt.Sprintf("m%02d", i)] = f
	}
	var extremeCases []evidence.Case
	for i, f := range extreme {
		extremeCases = append(extremeCases, evidence.Case{Lane: "unit", ID: fmt.Sprint("extreme", i),
			Status: evidence.StatusPass, Duration: math.Abs(f), Metrics: metrics, Tolerance: map[string]float64{"x": f}})
	}
	tests := []struct {
		name  string
		run   func(*Run)
		cases []evidence.Case
		ms    []evidence.Measurement
	}{
		{name: "no records"},
		{name: "typical", cases: testCases(), ms: testMeasurements()},
		{name: "cases only", cases: testCases()},
		{name: "cases only without a protocol", run: func(r *Run) { r.Protocol = Protocol{} }, cases: testCases()},
		{name: "measurements only", ms: testMeasurements()},
		{name: "extreme floats", cases: extremeCases, ms: []evidence.Measurement{{Lane: "bench", Workload: "w",
			Phase: "p", Role: evidence.RoleCandidate, Slot: 1, Attempt: 1, Outcome: evidence.OutcomeOK, Steps: extreme}}},
		{name: "odd strings", cases: []evidence.Case{{Lane: "unit", ID: "tests/test_x.py::test[a/b-\"q\"-ü-日本]",
			Status: evidence.StatusFail, Duration: 1, Message: "line 1\nline 2\ttab 'quote' \x00 nul", Tier: "ß"}}},
		{name: "sandboxed lanes", run: func(r *Run) {
			r.Isolation = Isolation{Level: IsolationSandbox, Sandbox: "bubblewrap 0.8.0", Namespaces: []string{"user", "mount", "pid"},
				NetworkLanes: []string{"unit", "bench"}}
		}, cases: testCases()},
		{name: "lanes without a sandbox", run: func(r *Run) {
			r.Isolation = Isolation{Level: IsolationNone, Reason: "bubblewrap (bwrap) is not installed"}
		}, cases: testCases()},
		{name: "minimal run", run: func(r *Run) {
			*r = Run{ID: "r", Target: "t", SourcesTreeHash: "0a", Interpreter: "i", Protocol: Protocol{Steps: 1}}
		}, cases: []evidence.Case{{Lane: "any", ID: "x", Status: evidence.StatusPass}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := testRun()
			if tt.run != nil {
				tt.run(&run)
			}
			path := write(t, run, tt.cases, tt.ms)
			s := open(t, path)
			if err := s.IntegrityCheck(); err != nil {
				t.Fatalf("IntegrityCheck on a fresh store: %v", err)
			}
			gotRun, err := s.Run()
			if err != nil {
				t.Fatal(err)
			}
			wantRun := run.normalized()
			if wantRun.Identity, err = run.CanonicalIdentity(); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotRun, wantRun) {
				t.Errorf("Run:\n got %#v\nwant %#v", gotRun, wantRun)
			}
			gotCases, err := s.Cases()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotCases, tt.cases) || !sameBits(gotCases, tt.cases) {
				t.Errorf("Cases:\n got %#v\nwant %#v", gotCases, tt.cases)
			}
			gotMs, err := s.Measurements()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotMs, tt.ms) || !sameBits(gotMs, tt.ms) {
				t.Errorf("Measurements:\n got %#v\nwant %#v", gotMs, tt.ms)
			}
			if f := Agree(s, tt.cases, tt.ms); len(f) != 0 {
				t.Errorf("Agree with the records written: %v", f)
			}
		})
	}
}

// TestFloatsBitForBit checks the REAL column and the JSON columns one value
// at a time, including -0 where it is allowed.
func TestFloatsBitForBit(t *testing.T) {
	for _, f := range extremeFloats() {
		cases := []evidence.Case{{Lane: "unit", ID: "c", Status: evidence.StatusPass, Metrics: map[string]float64{"v": f}}}
		if !math.Signbit(f) {
			cases[0].Duration = f
		}
		ms := []evidence.Measurement{{Lane: "bench", Workload: "w", Phase: "p", Role: evidence.RoleReference,
			Slot: 2, Attempt: 1, Outcome: evidence.OutcomeOK, Steps: []float64{f, -f}}}
		s := open(t, write(t, testRun(), cases, ms))
		gotCases, err := s.Cases()
		if err != nil {
			t.Fatal(err)
		}
		gotMs, err := s.Measurements()
		if err != nil {
			t.Fatal(err)
		}
		if !sameBits(gotCases, cases) || !sameBits(gotMs, ms) {
			t.Errorf("%v (%#x) did not round-trip: %#v %#v", f, math.Float64bits(f), gotCases, gotMs)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	type mod func(r *Run, cs *[]evidence.Case, ms *[]evidence.Measurement)
	tests := []struct {
		name string
		mod  mod
		want string
	}{
		{"NaN metric", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) {
			(*cs)[0].Metrics = map[string]float64{"mae": math.NaN()}
		}, `case 0 (unit/test_add): metrics["mae"] is NaN`},
		{"Inf tolerance", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) {
			(*cs)[1].Tolerance = map[string]float64{"t": math.Inf(-1)}
		}, `unit/test_sub): tolerance["t"] is -Inf`},
		{"Inf step", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[0].Steps[4] = math.Inf(1) },
			"bench/small/1/1): steps_s[4] is +Inf"},
		{"NaN duration", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[0].Duration = math.NaN() },
			"duration_s NaN"},
		{"negative duration", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[0].Duration = -1 },
			"duration_s -1"},
		{"negative zero duration", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) {
			(*cs)[0].Duration = math.Copysign(0, -1)
		}, "unit/test_add): duration_s"},
		{"bad status", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[2].Status = "pass" },
			`unit/test_skip): status "pass"`},
		{"empty case id", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[2].ID = "" },
			"case 2 (unit/): empty id"},
		{"duplicate case", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[3].ID = "test_add" },
			"case 3 (unit/test_add): same lane/id as case 0"},
		{"undeclared lane", func(_ *Run, cs *[]evidence.Case, _ *[]evidence.Measurement) { (*cs)[0].Lane = "other" },
			`lane "other" is not one of the run's lanes`},
		{"slot 5", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[0].Slot = 5 }, "slot 5 is not 1..4"},
		{"attempt 3", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[0].Attempt = 3 }, "attempt 3 is not 1 or 2"},
		{"bad role", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[0].Role = "cand" }, `role "cand"`},
		{"bad outcome", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[0].Outcome = "OK" }, `outcome "OK"`},
		{"duplicate measurement", func(_ *Run, _ *[]evidence.Case, ms *[]evidence.Measurement) { (*ms)[1].Slot = 1 },
			"measurement 1 (bench/small/1/1): same lane/workload/slot/attempt as measurement 0"},
		{"empty run id", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) { r.ID = "" }, "run: empty ID"},
		{"bad wheel digest", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) { r.Wheels[0].SHA256 = hex64('A') },
			"Wheels[0] demo-1.2.0-cp312-cp312-manylinux_2_28_x86_64.whl: sha256"},
		{"duplicate distribution", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Distributions[1].Name = "numpy"
		}, "Distributions[1]: numpy listed twice"},
		{"warm-ups not below steps", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) { r.Protocol.WarmUps = 16 },
			"Protocol: 16 steps with 16 warm-ups"},
		{"measurements without a protocol", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) { r.Protocol = Protocol{} },
			"measurements in a run without a protocol"},
		{"isolation of an unknown level", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Isolation = Isolation{Level: "network", Reason: "x"}
		}, `Isolation: level "network" is not "sandbox" or "none"`},
		{"sandbox without its name", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Isolation = Isolation{Level: IsolationSandbox, Namespaces: []string{"pid"}}
		}, "Isolation: a sandboxed run names its sandbox"},
		{"network lane not of the run", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Isolation = Isolation{Level: IsolationSandbox, Sandbox: "bubblewrap", Namespaces: []string{"pid"}, NetworkLanes: []string{"fetch"}}
		}, "Isolation: network lane fetch is not a lane of the run"},
		{"no sandbox without a reason", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Isolation = Isolation{Level: IsolationNone}
		}, "Isolation: a run without a sandbox says why"},
		{"isolation without a level", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Isolation = Isolation{Sandbox: "bubblewrap"}
		}, "Isolation: no level"},
		{"identity not canonical", func(r *Run, _ *[]evidence.Case, _ *[]evidence.Measurement) {
			r.Identity = []byte(`{"target":"demo 1.2.0"}`)
		}, "Identity is not the canonical identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, cases, ms := testRun(), testCases(), testMeasurements()
			tt.mod(&run, &cases, &ms)
			path := filepath.Join(t.TempDir(), "e.sqlite")
			err := Write(path, run, cases, ms)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Write error = %v, want one naming %s and saying %q", err, path, tt.want)
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused Write left %s behind (%v)", path, err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
				t.Errorf("a refused Write left %v behind", entries)
			}
		})
	}
}

func TestWriteRefusesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.sqlite")
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, testRun(), nil, nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Write over an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Errorf("existing file changed to %q", b)
	}
}

func TestWriteCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := filepath.Join(t.TempDir(), "e.sqlite")
	if err := WriteContext(ctx, path, testRun(), testCases(), testMeasurements()); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteContext with a cancelled context: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cancelled Write left %s (%v)", path, err)
	}
}

func TestDeterministic(t *testing.T) {
	run, cases, ms := testRun(), testCases(), testMeasurements()
	a := write(t, run, cases, ms)
	// The same run with its sets listed in another order is the same run.
	shuffled := testRun()
	shuffled.Wheels[0], shuffled.Wheels[1] = shuffled.Wheels[1], shuffled.Wheels[0]
	shuffled.Lanes = []string{"bench", "unit"}
	b := write(t, shuffled, cases, ms)
	ab, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ab, bb) {
		t.Errorf("two writes of the same records differ: %d and %d bytes", len(ab), len(bb))
	}
	sa, sb := open(t, a), open(t, b)
	for _, read := range []func(*Store) (any, error){
		func(s *Store) (any, error) { return s.Run() },
		func(s *Store) (any, error) { return s.Cases() },
		func(s *Store) (any, error) { return s.Measurements() },
	} {
		x, err1 := read(sa)
		y, err2 := read(sb)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(x, y) {
			t.Errorf("logical content differs: %v %v\n%#v\n%#v", err1, err2, x, y)
		}
	}
	if run.Wheels[0].Name != "demo-1.2.0-cp312-cp312-manylinux_2_28_x86_64.whl" || run.Lanes[0] != "unit" {
		t.Error("Write reordered the caller's slices")
	}
}

// checkDamaged asserts that path is found damaged, by Open or by
// IntegrityCheck, with a *DamageError naming the file, and that reading a
// store that opens neither panics nor hides the damage.
func checkDamaged(t *testing.T, path, want string) {
	t.Helper()
	s, err := Open(path)
	if err == nil {
		defer s.Close()
		// Whatever the damage, reading must not panic.
		s.Run()
		s.Cases()
		s.Measurements()
		Agree(s, testCases(), testMeasurements())
		err = s.IntegrityCheck()
		if err == nil {
			t.Fatalf("%s: damage not detected by Open or IntegrityCheck", want)
		}
	}
	var de *DamageError
	if !errors.As(err, &de) || de.Path != path || !strings.Contains(err.Error(), path) {
		t.Fatalf("%s: error %v (%T), want a *DamageError naming %s", want, err, err, path)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}

func TestDamage(t *testing.T) {
	good := write(t, testRun(), testCases(), testMeasurements())
	img, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pages := len(img) / pageSize
	if pages < 4 {
		t.Fatalf("test store has only %d pages", pages)
	}
	flip := func(offsets ...int) func([]byte) []byte {
		return func(b []byte) []byte {
			for _, o := range offsets {
				b[o] ^= 0x40
			}
			return b
		}
	}
	tests := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"empty file", func([]byte) []byte { return nil }, "not an SQLite database"},
		{"text file", func([]byte) []byte { return []byte(`{"lane":"unit","id":"x"}` + "\n") }, "not an SQLite database"},
		{"random bytes", func(b []byte) []byte {
			for i := range b {
				b[i] = byte(i*7 + i/251)
			}
			return b
		}, "not an SQLite database"},
		{"truncated in header", func(b []byte) []byte { return b[:60] }, "shorter than the SQLite header"},
		{"truncated to one page", func(b []byte) []byte { return b[:pageSize] }, "truncated or extended"},
		{"truncated by one page", func(b []byte) []byte { return b[:len(b)-pageSize] }, "truncated or extended"},
		{"truncated mid-page", func(b []byte) []byte { return b[:len(b)/2+17] }, "not a whole number"},
		{"truncated by one byte", func(b []byte) []byte { return b[:len(b)-1] }, "not a whole number"},
		{"extended by a page", func(b []byte) []byte { return append(b, make([]byte, pageSize)...) }, "truncated or extended"},
		{"flip in a middle page's middle", flip((pages/2)*pageSize + pageSize/2), fmt.Sprintf("page %d ", pages/2+1)},
		{"flip in every middle page", func(b []byte) []byte {
			for p := 1; p < pages-1; p++ {
				b[p*pageSize+pageSize/2+p] ^= 0xff
			}
			return b
		}, "checksum mismatch"},
		{"flip in a page's checksum", flip(3*pageSize - 1), "page 3 "},
		{"flip in the last page", flip(len(img) - pageSize + 100), fmt.Sprintf("page %d ", pages)},
		{"flip in the application id", flip(70), "application id"},
		{"WAL mode", func(b []byte) []byte { b[18], b[19] = 2, 2; return b }, "WAL"},
		{"another page size", func(b []byte) []byte { b[16], b[17] = 0x20, 0; return b }, "8192-byte pages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "damaged.sqlite")
			if err := os.WriteFile(path, tt.damage(bytes.Clone(img)), 0o644); err != nil {
				t.Fatal(err)
			}
			checkDamaged(t, path, tt.want)
		})
	}
}

// TestEveryFlipDetected flips bytes all over the file, one at a time, in
// page headers, cells, free space and checksums alike.
func TestEveryFlipDetected(t *testing.T) {
	good := write(t, testRun(), testCases(), testMeasurements())
	img, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	stride := 23
	if testing.Short() {
		stride = 211
	}
	dir := t.TempDir()
	for off := 0; off < len(img); off += stride {
		for _, mask := range []byte{0x01, 0x80} {
			b := bytes.Clone(img)
			b[off] ^= mask
			path := filepath.Join(dir, fmt.Sprintf("flip-%d-%x.sqlite", off, mask))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			checkDamaged(t, path, "")
			os.Remove(path)
		}
	}
}

// modify changes a store with SQLite itself, opened read-write.
func modify(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, stmt := range stmts {
		res, err := db.Exec(stmt)
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if n, _ := res.RowsAffected(); n != 1 && strings.HasPrefix(stmt, "DELETE") {
			t.Fatalf("%s: %d rows", stmt, n)
		}
	}
}

func TestTableMissing(t *testing.T) {
	for _, tbl := range []string{"runs", "cases", "measurements"} {
		t.Run(tbl, func(t *testing.T) {
			path := write(t, testRun(), testCases(), testMeasurements())
			modify(t, path, "DROP TABLE "+tbl)
			checkDamaged(t, path, "table "+tbl+" is missing")
		})
	}
	t.Run("altered", func(t *testing.T) {
		path := write(t, testRun(), testCases(), testMeasurements())
		modify(t, path, "ALTER TABLE cases ADD COLUMN extra TEXT")
		checkDamaged(t, path, "table cases is not defined as schema version 1 defines it")
	})
}

func TestAgree(t *testing.T) {
	type records struct {
		cases []evidence.Case
		ms    []evidence.Measurement
	}
	tests := []struct {
		name  string
		store []string       // SQL run on the store with SQLite, read-write
		jsonl func(*records) // changes to the JSONL side
		want  []Finding
	}{
		{name: "agree"},
		{name: "case row deleted from the store",
			store: []string{"DELETE FROM cases WHERE lane = 'unit' AND id = 'test_sub'"},
			want:  []Finding{{"cases", "unit/test_sub", "", "row in the JSONL records is missing from the store"}}},
		{name: "measurement row deleted from the store",
			store: []string{"DELETE FROM measurements WHERE workload = 'large' AND slot = 3"},
			want:  []Finding{{"measurements", "bench/large/3/1", "", "row in the JSONL records is missing from the store"}}},
		{name: "metric changed in the JSONL",
			jsonl: func(r *records) { r.cases[0].Metrics = map[string]float64{"mae": 1.0000000000000003e-9, "max": 0.1} },
			want:  []Finding{{"cases", "unit/test_add", "metrics.mae", "store has 1e-09, JSONL has 1.0000000000000003e-09"}}},
		{name: "metric changed in the store",
			store: []string{`UPDATE cases SET metrics = '{"mae":2e-9,"max":0.1}' WHERE id = 'test_add'`},
			want:  []Finding{{"cases", "unit/test_add", "metrics.mae", "store has 2e-09, JSONL has 1e-09"}}},
		{name: "metric missing on one side, tolerance on the other",
			jsonl: func(r *records) {
				r.cases[0].Metrics = map[string]float64{"max": 0.1, "new": 1}
				r.cases[1].Tolerance = map[string]float64{"x": 0}
			},
			want: []Finding{
				{"cases", "unit/test_add", "metrics.mae", "store has 1e-09, missing from JSONL"},
				{"cases", "unit/test_add", "metrics.new", "missing from the store, JSONL has 1"},
				{"cases", "unit/test_sub", "tolerance.x", "missing from the store, JSONL has 0"},
			}},
		{name: "status, duration and message",
			jsonl: func(r *records) {
				r.cases[3].Status, r.cases[3].Duration, r.cases[3].Message = evidence.StatusPass, 1.25, ""
			},
			want: []Finding{
				{"cases", "unit/test_err", "status", `store has "ERROR", JSONL has "PASS"`},
				{"cases", "unit/test_err", "duration_s", "store has 1.5, JSONL has 1.25"},
				{"cases", "unit/test_err", "message", `store has "boom", JSONL has ""`},
			}},
		{name: "extra measurement in the JSONL",
			jsonl: func(r *records) {
				m := r.ms[0]
				m.Workload = "huge"
				r.ms = append(r.ms, m)
			},
			want: []Finding{{"measurements", "bench/huge/1/1", "", "row in the JSONL records is missing from the store"}}},
		{name: "JSONL missing a case and a measurement",
			jsonl: func(r *records) { r.cases = r.cases[1:]; r.ms = r.ms[:len(r.ms)-1] },
			want: []Finding{
				{"cases", "unit/test_add", "", "row in the store is missing from the JSONL records"},
				{"measurements", "bench/small/2/2", "", "row in the store is missing from the JSONL records"},
			}},
		{name: "step changed, outcome changed",
			jsonl: func(r *records) { r.ms[1].Steps[7] = math.Nextafter(r.ms[1].Steps[7], 1); r.ms[4].Outcome = "timeout" },
			want: []Finding{
				{"measurements", "bench/small/2/1", "steps_s[7]", "store has 0.607, JSONL has 0.6070000000000001"},
				{"measurements", "bench/large/1/1", "outcome", `store has "ok", JSONL has "timeout"`},
			}},
		{name: "steps dropped",
			jsonl: func(r *records) { r.ms[0].Steps = r.ms[0].Steps[:15] },
			want:  []Finding{{"measurements", "bench/small/1/1", "steps_s", "store has 16 values, JSONL has 15"}}},
		{name: "signed zero differs",
			store: []string{`UPDATE cases SET metrics = '{"mae":-0,"max":0.1}' WHERE id = 'test_add'`},
			jsonl: func(r *records) { r.cases[0].Metrics["mae"] = 0 },
			want:  []Finding{{"cases", "unit/test_add", "metrics.mae", "store has -0, JSONL has 0"}}},
		{name: "duplicate in the JSONL",
			jsonl: func(r *records) { r.cases = append(r.cases, r.cases[2]) },
			want:  []Finding{{"cases", "unit/test_skip", "", "key appears more than once in the JSONL records"}}},
		{name: "reordered rows agree",
			jsonl: func(r *records) {
				r.cases[0], r.cases[3] = r.cases[3], r.cases[0]
				r.ms[0], r.ms[8] = r.ms[8], r.ms[0]
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, testRun(), testCases(), testMeasurements())
			if len(tt.store) > 0 {
				modify(t, path, tt.store...)
			}
			r := records{testCases(), testMeasurements()}
			if tt.jsonl != nil {
				tt.jsonl(&r)
			}
			s := open(t, path)
			got := Agree(s, r.cases, r.ms)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Agree:\n got %q\nwant %q", got, tt.want)
			}
			// A store changed after it was written fails its integrity check,
			// though SQLite's own check passes.
			err := s.IntegrityCheck()
			if len(tt.store) > 0 {
				if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || strings.Contains(err.Error(), "integrity_check") {
					t.Errorf("IntegrityCheck on a store changed with SQLite: %v", err)
				}
			} else if err != nil {
				t.Errorf("IntegrityCheck: %v", err)
			}
		})
	}
}

func TestAgreeCancelled(t *testing.T) {
	s := open(t, write(t, testRun(), testCases(), testMeasurements()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := AgreeContext(ctx, s, testCases(), testMeasurements())
	if len(got) != 2 || got[0].Table != "cases" || got[1].Table != "measurements" ||
		!strings.Contains(got[0].Msg, "cannot read the store") {
		t.Errorf("AgreeContext with a cancelled context: %q", got)
	}
}

func TestFindingString(t *testing.T) {
	f := Finding{"cases", "unit/x", "metrics.mae", "store has 1, JSONL has 2"}
	if got, want := f.String(), "cases unit/x metrics.mae: store has 1, JSONL has 2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	f = Finding{Table: "cases", Msg: "cannot read"}
	if got, want := f.String(), "cases: cannot read"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "absent.sqlite")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open of a folder: %v", err)
	}
	// A path SQLite's URI syntax would misread unless escaped.
	odd := filepath.Join(dir, "a b?c#d%20e.sqlite")
	if err := Write(odd, testRun(), testCases(), nil); err != nil {
		t.Fatal(err)
	}
	s := open(t, odd)
	if err := s.IntegrityCheck(); err != nil {
		t.Error(err)
	}
	if s.Path() != odd {
		t.Errorf("Path() = %q", s.Path())
	}
	if _, err := os.Stat(odd + "-journal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading left a journal: %v", err)
	}
}

// TestOpenReadOnly checks that a store is never written through Open.
func TestOpenReadOnly(t *testing.T) {
	path := write(t, testRun(), testCases(), testMeasurements())
	before, _ := os.ReadFile(path)
	s := open(t, path)
	if _, err := s.db.Exec("DELETE FROM cases"); err == nil {
		t.Error("a store opened with Open accepted a DELETE")
	}
	s.Close()
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the file changed")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("files beside the store: %v", entries)
	}
}

// TestDocSchema keeps the package documentation's schema the one written.
func TestDocSchema(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for line := range strings.Lines(string(doc)) {
		text.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "//"), "\t"))
	}
	space := regexp.MustCompile(`\s+`)
	norm := func(s string) string { return space.ReplaceAllString(s, " ") }
	for _, tb := range tables() {
		if !strings.Contains(norm(text.String()), norm(tb.create)+";") {
			t.Errorf("doc.go does not show table %s as schema.go creates it", tb.name)
		}
	}
}

// TestContentDamage changes rows with SQLite so that they no longer read
// back: the reader reports a *DamageError naming the row, never panics.
func TestContentDamage(t *testing.T) {
	tests := []struct {
		name  string
		sql   []string
		read  func(*Store) error
		want  string
		check string // what IntegrityCheck says besides page checksums
	}{
		{"run deleted", []string{"DELETE FROM runs"},
			func(s *Store) error { _, err := s.Run(); return err }, "0 runs, not 1", "foreign_key_check: cases row 1 refers to a missing runs row"},
		{"second run", []string{"INSERT INTO runs SELECT 'run-2', target, interpreter, sources_tree_hash, steps, warmups, identity, identity_sha256 FROM runs"},
			func(s *Store) error { _, err := s.Run(); return err }, "2 runs, not 1", "2 runs, not 1"},
		{"typed column changed", []string{"UPDATE runs SET interpreter = 'PyPy 7.3'"},
			func(s *Store) error { _, err := s.Run(); return err }, "run run-1: typed columns disagree with identity", ""},
		{"identity changed", []string{`UPDATE runs SET identity = replace(identity, '"bbbb', '"cccc')`},
			func(s *Store) error { _, err := s.Run(); return err }, "run run-1: identity_sha256 does not match identity", ""},
		{"identity not canonical", []string{`UPDATE runs SET identity = json_set(identity, '$.lanes', json('["unit","bench"]'))`},
			func(s *Store) error { _, err := s.Run(); return err }, "identity is not in canonical form", ""},
		{"identity unknown field", []string{`UPDATE runs SET identity = json_set(identity, '$.extra', 1)`},
			func(s *Store) error { _, err := s.Run(); return err }, "run run-1: identity does not decode", ""},
		{"metrics not an object", []string{"PRAGMA ignore_check_constraints = 1", `UPDATE cases SET metrics = '[1]' WHERE id = 'test_add'`},
			func(s *Store) error { _, err := s.Cases(); return err }, "case unit/test_add: metrics do not decode", ""},
		{"tolerance not JSON", []string{"PRAGMA ignore_check_constraints = 1", `UPDATE cases SET tolerance = '{' WHERE id = 'test_add'`},
			func(s *Store) error { _, err := s.Cases(); return err }, "case unit/test_add: tolerance does not decode", ""},
		{"steps not numbers", []string{"PRAGMA ignore_check_constraints = 1", `UPDATE measurements SET steps_s = '["x"]' WHERE seq = 0`},
			func(s *Store) error { _, err := s.Measurements(); return err }, "measurement bench/small/1/1: steps_s do not decode", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := write(t, testRun(), testCases(), testMeasurements())
			modify(t, path, tt.sql...)
			s := open(t, path)
			err := tt.read(s)
			var de *DamageError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("read: %v, want a *DamageError naming %s and saying %q", err, path, tt.want)
			}
			err = s.IntegrityCheck()
			if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), tt.check) {
				t.Errorf("IntegrityCheck: %v, want page checksums and %q", err, tt.check)
			}
		})
	}
}

// TestIsolationInIdentity: how the lanes ran is part of the identity
// (another isolation, another identity), and an identity without it, as
// evidence made before it was recorded has, keeps its canonical bytes.
func TestIsolationInIdentity(t *testing.T) {
	old := testRun()
	oldID, err := old.CanonicalIdentity()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(oldID, []byte("isolation")) {
		t.Errorf("an identity without isolation names it: %s", oldID)
	}
	back, err := ParseIdentity("run-1", oldID)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := back.CanonicalIdentity(); err != nil || !bytes.Equal(again, oldID) {
		t.Errorf("an identity without isolation does not round-trip: %s (%v), want %s", again, err, oldID)
	}
	boxed := testRun()
	boxed.Isolation = Isolation{Level: IsolationSandbox, Sandbox: "bubblewrap 0.8.0", Namespaces: []string{"user", "pid"}, NetworkLanes: []string{"unit"}}
	boxedID, err := boxed.CanonicalIdentity()
	if err != nil {
		t.Fatal(err)
	}
	want := `"isolation":{"level":"sandbox","sandbox":"bubblewrap 0.8.0","namespaces":["user","pid"],"network_lanes":["unit"]}}`
	if !bytes.HasSuffix(boxedID, []byte(want)) {
		t.Errorf("identity %s does not end with %s", boxedID, want)
	}
	if back, err := ParseIdentity("run-1", boxedID); err != nil || !reflect.DeepEqual(back.Isolation, boxed.Isolation) {
		t.Errorf("isolation read back as %+v (%v), want %+v", back.Isolation, err, boxed.Isolation)
	}
}
