package sanitize_test

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/evidence/store"
)

// These tests stage evidence as evidence/runner does (stage.go: the
// records as JSON lines written by encoding/json, each lane's summary and
// the run's summary as indented JSON recomputed from the records, the
// store written by store.Write) with a private value or a credential
// planted in a record by a lane, in every encoding, and check that
// ScanTree rejects every one, naming the file and an offset inside what
// was planted.

// scratch is the run's scratch folder on the lane's machine, as
// evidence/runner makes it in the temporary folder.
const scratch = "/tmp/mkrelease-evidence-run-4821"

// laneSecret is the value of a secret variable of mkrelease's
// environment when the lane ran.
const laneSecret = "Tr0ub4dor&3-correct-horse"

// machine returns the private values of the lane's machine, with the
// folders evidence/runner makes private (run.go: the verifier, the
// scratch folder, the lanes' virtualenvs, home and temporary folders).
func machine() sanitize.Private {
	return sanitize.Private{
		Home: "/home/alice", User: "alice", Host: "alice-mbp", Temp: "/tmp",
		Folders: map[string]string{
			scratch:                       "{work}",
			scratch + "/verifier":         "{verifier}",
			scratch + "/venvs":            "{venvs}",
			scratch + "/venvs/unit":       "{venv}",
			scratch + "/tmp":              "{tmp}",
			scratch + "/home":             "~",
			"/private" + scratch + "/tmp": "{tmp}",
		},
		Secrets: sanitize.EnvSecrets([]string{"MKRELEASE_KEY_PASSWORD=" + laneSecret, "LANG=C.UTF-8"}),
	}
}

// token returns a GitHub token, built at run time so that no
// credential-shaped literal sits in the source.
func token() string {
	return "gh" + "p_" + "R8nT2vLq9XwZ4sKd7YbM3cHf6JpA1gUe5NoV"
}

func pemKey() string {
	return "-----" + "BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIBm7uCzT9DGXnQeGQP0xYv3sFhXr1KdKq0aL5nQ8mZ2c\n-----END PRIVATE KEY-----\n"
}

// plant is a private value, in the text a lane writes around it, and the
// kinds of finding that name it.
type plant struct {
	name  string
	text  string
	kinds []string
}

func plants() []plant {
	return []plant{
		{"host name", "worker on alice-mbp.local finished", []string{sanitize.KindHostName}},
		{"user name", "cache kept in /var/cache/pytest-of-alice/x", []string{sanitize.KindUserName}},
		{"home path", "could not read /home/alice/.netrc", []string{sanitize.KindHomePath}},
		{"temp path", "wrote /tmp/tmpk2j3h4q/out.bin", []string{sanitize.KindTempPath}},
		{"lane venv", "python " + scratch + "/venvs/unit/bin/python3", []string{sanitize.KindPrivatePath}},
		{"lane scratch", "cwd " + scratch + "/run-unit", []string{sanitize.KindPrivatePath}},
		{"lane temp", "kept " + scratch + "/tmp/tmpab12/x.npy", []string{sanitize.KindTempPath}},
		{"PEM private key", "key:\n" + pemKey(), []string{sanitize.KindPrivateKey}},
		{"DER private key in base64", "key MC4CAQAwBQYDK2VwBCIEIBm7uCzT9DGXnQeGQP0xYv3sFhXr1KdKq0aL5nQ8mZ2c", []string{sanitize.KindPrivateKey}},
		{"environment credential", "password=" + laneSecret + " ok", []string{sanitize.KindEnvSecret}},
		{"GitHub token", "auth " + token() + " used", []string{sanitize.KindGitHubToken}},
	}
}

// encoding is how a lane disguises what it plants: enc returns the
// value(s) it writes in one record or in two consecutive records.
type encoding struct {
	name string
	enc  func(string) []string
	// files limits the encoding to some staged files ("" all).
	files []string
}

const (
	casesFile   = "unit/cases.jsonl"
	msFile      = "bench/measurements.jsonl"
	summaryFile = "unit/summary.json"
	storeFile   = "evidence.sqlite3"
)

func one(s string) []string { return []string{s} }

// splitHalves cuts s in two, near the middle, where the first half sorts
// before the second (as a summary lists failing cases by id), after
// putting "!" (which sorts before the rest) in front of s if need be.
func splitHalves(s string) []string {
	for _, t := range []string{s, "!" + s} {
		for d := 0; d < len(t)/4; d++ {
			for _, i := range []int{len(t)/2 - d, len(t)/2 + d} {
				if t[:i] < t[i:] {
					return []string{t[:i], t[i:]}
				}
			}
		}
	}
	panic("no split of " + s)
}

func encodings() []encoding {
	wrap := func(s string, n int) string {
		var b strings.Builder
		for i := 0; i < len(s); i += n {
			b.WriteString(s[i:min(len(s), i+n)])
			if i+n < len(s) {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	return []encoding{
		{name: "plain", enc: one},
		{name: "JSON-escaped slashes", enc: func(s string) []string { return one(strings.ReplaceAll(s, "/", `\/`)) }},
		{name: `\u escapes`, enc: func(s string) []string {
			var b strings.Builder
			for _, r := range s {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			return one(b.String())
		}},
		{name: "newline escape before", enc: func(s string) []string { return one(`x\n` + s) }},
		{name: "percent-encoding", enc: func(s string) []string { return one(url.PathEscape(s)) }},
		{name: "base64", enc: func(s string) []string { return one(base64.StdEncoding.EncodeToString([]byte(s))) }},
		{name: "base64 wrapped in lines", enc: func(s string) []string {
			return one(wrap(base64.StdEncoding.EncodeToString([]byte(s)), 20))
		}},
		{name: "base64 URL-safe unpadded after a word", enc: func(s string) []string {
			return one("id" + base64.RawURLEncoding.EncodeToString([]byte(s)))
		}},
		{name: "hex", enc: func(s string) []string { return one(hex.EncodeToString([]byte(s))) }},
		{name: "hex after a hex digit", enc: func(s string) []string { return one("a" + strings.ToUpper(hex.EncodeToString([]byte(s)))) }},
		{name: "base64 of hex", enc: func(s string) []string {
			return one(base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString([]byte(s)))))
		}},
		{name: "invisible characters", enc: func(s string) []string {
			var b strings.Builder
			for i, r := range s {
				if i > 0 && i%3 == 0 {
					b.WriteString("\u200b")
				}
				b.WriteRune(r)
			}
			return one(b.String())
		}},
		{name: "fullwidth (NFKC)", enc: func(s string) []string {
			return one(strings.Map(func(r rune) rune {
				switch {
				case r == ' ':
					return 0x3000
				case r > ' ' && r < 0x7F:
					return r - 0x21 + 0xFF01
				}
				return r
			}, s))
		}},
		{name: "split across two records", enc: splitHalves},
		{name: "base64 split across two records", enc: func(s string) []string {
			return splitHalves(base64.StdEncoding.EncodeToString([]byte(s)))
		}},
		{name: "deleted row", enc: one, files: []string{storeFile}},
		{name: "free page", enc: one, files: []string{storeFile}},
	}
}

// lane builds the records of a cases lane and a crossover lane, with
// values planted: in the messages of consecutive cases (cases.jsonl and
// the store), in the errors of consecutive measurements
// (measurements.jsonl), or as the ids of consecutive failing cases (the
// summary lists them).
func lane(file string, planted []string) ([]evidence.Case, []evidence.Measurement) {
	var cases []evidence.Case
	for i := range 6 {
		cases = append(cases, evidence.Case{Lane: "unit", ID: fmt.Sprintf("conv2d/fp32/case-%03d", i), Status: evidence.StatusPass,
			Tier: "fast", Metrics: map[string]float64{"max_abs_err": 1e-7 * float64(i+1)}, Tolerance: map[string]float64{"max_abs_err": 1e-5},
			Duration: 0.25 + float64(i)/8, Message: "ok {venv}/lib/python3.12/site-packages/vexl/ops/conv.py:12 in {work}/run-unit"})
	}
	var ms []evidence.Measurement
	for slot, role := range []string{evidence.RoleCandidate, evidence.RoleReference, evidence.RoleReference, evidence.RoleCandidate} {
		ms = append(ms, evidence.Measurement{Lane: "bench", Workload: "w1", Phase: "train", Role: role, Slot: slot + 1, Attempt: 1,
			Outcome: evidence.OutcomeOK, Steps: []float64{0.5, 0.25, 0.25, 0.26}, ResultSHA256: strings.Repeat("9f", 32)})
	}
	for i, v := range planted {
		switch file {
		case casesFile, storeFile:
			cases[2+i].Message = v
		case msFile:
			ms[1+i].Outcome, ms[1+i].Steps, ms[1+i].ResultSHA256, ms[1+i].Error = evidence.OutcomeFailure, nil, "", v
		case summaryFile:
			cases[2+i].ID, cases[2+i].Status = v, evidence.StatusFail
		}
	}
	return cases, ms
}

func testRun() store.Run {
	return store.Run{ID: "3f2a9c1b7d4e4b1c9a0e5d6f7a8b9c0d", Target: "linux-x86_64", Interpreter: "CPython 3.12.4", SourcesTreeHash: strings.Repeat("cd", 32),
		Wheels:      []store.FileDigest{{Name: "vexl-0.3.0-cp312-cp312-manylinux_2_28_x86_64.whl", SHA256: strings.Repeat("ab", 32)}},
		Lanes:       []string{"bench", "unit"},
		Protocol:    store.Protocol{Steps: 4, WarmUps: 1},
		Environment: map[string]string{"LANG": "C.UTF-8", "PYTHONHASHSEED": "0"},
	}
}

// stage writes the evidence folder of the records as evidence/runner
// does, and returns its root.
func stage(t *testing.T, cases []evidence.Case, ms []evidence.Measurement) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jsonl := func(records any) []byte {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		switch rs := records.(type) {
		case []evidence.Case:
			for _, r := range rs {
				if err := enc.Encode(r); err != nil {
					t.Fatal(err)
				}
			}
		case []evidence.Measurement:
			for _, r := range rs {
				if err := enc.Encode(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		return b.Bytes()
	}
	write(casesFile, jsonl(cases))
	write(msFile, jsonl(ms))
	// The cases lane's aggregates, recomputed from its records as the
	// runner does (the crossover lane's need a full protocol: its records
	// are what is tested here).
	sum, err := runner.RecomputeSpecs([]runner.LaneSpec{{Name: "unit", Kind: "cases"}}, cases, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{summaryFile: sum.Lanes[0], "summary.json": sum} {
		js, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		write(name, append(js, '\n'))
	}
	if err := store.Write(filepath.Join(dir, storeFile), testRun(), cases, ms); err != nil {
		t.Fatal(err)
	}
	return dir
}

// deleteRows inserts rows into the store's cases table, the planted value
// the message of one of them, and deletes them again, with SQLite's
// secure_delete off: the deleted row is left in a freeblock of a page in
// use or, when whole pages empty (wholePages), on free pages.
func deleteRows(t *testing.T, path, planted string, wholePages bool) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("PRAGMA secure_delete = OFF")
	n := 1
	if wholePages {
		n = 40
	}
	for i := range n {
		msg := strings.Repeat("filler text of a deleted row. ", 10)
		if i == n/2 {
			msg = planted
		}
		exec("INSERT INTO cases (seq, run_id, lane, id, status, duration_s, message) VALUES (?, ?, 'unit', ?, 'PASS', 0.5, ?)",
			1000+i, testRun().ID, fmt.Sprintf("deleted-%d", i), msg)
	}
	exec("DELETE FROM cases WHERE seq >= 1000")
	if wholePages {
		var free int
		if err := db.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil || free == 0 {
			t.Fatalf("no free pages after the delete (%d, %v)", free, err)
		}
	}
}

// where returns the byte ranges of the file that hold what was planted:
// each planted value as the file spells it (JSON-escaped in JSON files).
func where(t *testing.T, data []byte, file string, planted []string) [][2]int {
	t.Helper()
	var out [][2]int
	for _, v := range planted {
		needle := []byte(v)
		if file != storeFile {
			js, _ := json.Marshal(v)
			needle = js[1 : len(js)-1]
		}
		i := bytes.Index(data, needle)
		if i < 0 {
			t.Fatalf("%s does not hold %q", file, needle)
		}
		out = append(out, [2]int{i, i + len(needle)})
	}
	return out
}

func TestStagedEvidenceRejectsPlantedValues(t *testing.T) {
	sc := machine().Scanner()
	for _, p := range plants() {
		for _, e := range encodings() {
			for _, file := range []string{casesFile, msFile, summaryFile, storeFile} {
				if e.files != nil && !slices.Contains(e.files, file) {
					continue
				}
				if testing.Short() && (file == msFile || file == summaryFile) {
					continue // the same JSON scan as cases.jsonl's
				}
				t.Run(p.name+"/"+e.name+"/"+file, func(t *testing.T) {
					planted := e.enc(p.text)
					deleted := e.name == "deleted row" || e.name == "free page"
					var dir string
					if deleted {
						cases, ms := lane(file, nil)
						dir = stage(t, cases, ms)
						deleteRows(t, filepath.Join(dir, storeFile), planted[0], e.name == "free page")
					} else {
						cases, ms := lane(file, planted)
						dir = stage(t, cases, ms)
					}
					findings, err := sc.ScanTree(dir)
					if err != nil {
						t.Fatal(err)
					}
					data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
					if err != nil {
						t.Fatal(err)
					}
					spans := where(t, data, file, planted)
					var mine []sanitize.Finding
					ok := false
					for _, f := range findings {
						if f.File != file {
							continue
						}
						mine = append(mine, f)
						in := false
						for _, s := range spans {
							in = in || int(f.Offset) >= s[0] && int(f.Offset) < s[1]
						}
						if in && slices.Contains(p.kinds, f.Kind) {
							ok = true
						}
					}
					if !ok {
						t.Errorf("%s: no %v finding inside %v; findings:\n%v", file, p.kinds, spans, mine)
					}
					var msg string
					if err := sanitize.Err(findings); err != nil {
						msg = err.Error()
					}
					for _, secret := range []string{"alice", laneSecret, token()[4:], "MC4CAQAwBQYDK2VwBCIEIBm7"} {
						if strings.Contains(msg, secret) {
							t.Errorf("the rejection discloses %q:\n%s", secret, msg)
						}
					}
				})
			}
		}
	}
}

// A clean lane's staged evidence passes: digests, base64 RECORD hashes,
// UUIDs, versions, sanitised paths, JSON escapes and split words in
// consecutive records.
func TestStagedEvidenceCleanLanePasses(t *testing.T) {
	cases, ms := lane(casesFile, nil)
	cases[1].Message = `AssertionError: "expected" != "got"` + "\n\tat {venv}/lib/python3.12/site-packages/vexl/x.py:3 (50% of 2 & <3>)"
	cases[2].Message = "vexl/_native.cpython-312-x86_64-linux-gnu.so,sha256=n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sF7DwCgg,123456"
	cases[3].Message = "run 123e4567-e89b-12d3-a456-426614174000 of vexl 0.3.0rc1+local.7 sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	cases[4].Message = "the result, in {tmp}/x and ~/.cache, was"
	cases[5].Message = "written as C:\\Users\\{user}\\x ü ﬁ ½ …"
	ms[1].Outcome, ms[1].Steps, ms[1].ResultSHA256, ms[1].Error = evidence.OutcomeFailure, nil, "", "worker exited with status 1 after 3 steps"
	dir := stage(t, cases, ms)
	deleteRows(t, filepath.Join(dir, storeFile), "a sanitised {venv}/bin/python message", true)
	findings, err := machine().Scanner().ScanTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(findings) != 0 {
		t.Errorf("clean evidence rejected:\n%v", sanitize.Err(findings))
	}
}
