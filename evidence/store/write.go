package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strconv"

	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/internal/atomicfile"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// serializer is what the modernc.org/sqlite connection offers to copy a
// database image in and out of memory.
type serializer interface {
	Serialize() ([]byte, error)
	Deserialize([]byte) error
}

// Write creates the store at path from one run's records, in the order given.
// It refuses to replace an existing file, and refuses records that are not
// valid evidence (an empty key field, an unknown status, role or outcome, a
// slot outside 1..4, an attempt other than 1 or 2, a duplicate key, a lane
// the run does not list, NaN, ±Inf, a negative duration), naming the record.
//
// The database is built in memory and written to a temporary name in path's
// folder, synced and renamed into place, so path is either absent or a
// complete store. The same arguments give the same bytes, with the same
// SQLite library.
func Write(path string, run Run, cases []evidence.Case, ms []evidence.Measurement) error {
	return WriteContext(context.Background(), path, run, cases, ms)
}

// WriteContext is [Write] with a context that bounds building the database.
func WriteContext(ctx context.Context, path string, run Run, cases []evidence.Case, ms []evidence.Measurement) error {
	if err := run.validate(); err != nil {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	if err := validateRecords(run, cases, ms); err != nil {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("evidence store %s: %w", path, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	img, err := build(ctx, run, cases, ms)
	if err != nil {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	if err := sealPages(img); err != nil {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, img, 0o644)
}

// build creates the database in memory and returns its image.
func build(ctx context.Context, run Run, cases []evidence.Case, ms []evidence.Measurement) (img []byte, err error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	// Every connection to ":memory:" is a database of its own: keep to one.
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()

	// Materialise page 1, then reserve the checksum bytes at the end of every
	// page. SQLite has no PRAGMA for that, so the header field (offset 20) is
	// set in the image of the still empty database, together with the start
	// of page 1's cell content area, which is the end of the usable space.
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(
		"PRAGMA page_size = %d; PRAGMA application_id = %d; PRAGMA user_version = %d",
		pageSize, applicationID, schemaVersion)); err != nil {
		return nil, fmt.Errorf("initialise database: %w", err)
	}
	empty, err := serialize(conn)
	if err != nil {
		return nil, err
	}
	if len(empty) != pageSize || empty[20] != 0 || binary.BigEndian.Uint16(empty[headerSize+5:]) != pageSize {
		return nil, errors.New("initialise database: unexpected empty database image")
	}
	empty[20] = reserveBytes
	binary.BigEndian.PutUint16(empty[headerSize+5:], usableSize)
	if err := conn.Raw(func(dc any) error { return dc.(serializer).Deserialize(empty) }); err != nil {
		return nil, fmt.Errorf("initialise database: %w", err)
	}

	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for _, t := range tables() {
		if _, err := tx.ExecContext(ctx, t.create); err != nil {
			return nil, fmt.Errorf("create table %s: %w", t.name, err)
		}
	}
	if err := insertRun(ctx, tx, run); err != nil {
		return nil, err
	}
	if err := insertCases(ctx, tx, run.ID, cases); err != nil {
		return nil, err
	}
	if err := insertMeasurements(ctx, tx, run.ID, ms); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	if err := checkDatabase(ctx, conn); err != nil {
		return nil, fmt.Errorf("new database fails its own check: %w", err)
	}
	return serialize(conn)
}

func serialize(conn *sql.Conn) (img []byte, err error) {
	err = conn.Raw(func(dc any) error {
		img, err = dc.(serializer).Serialize()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("serialize database: %w", err)
	}
	return img, nil
}

func insertRun(ctx context.Context, tx *sql.Tx, run Run) error {
	identity, err := run.CanonicalIdentity()
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO runs
		(id, target, interpreter, sources_tree_hash, steps, warmups, identity, identity_sha256)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		run.ID, run.Target, run.Interpreter, run.SourcesTreeHash,
		run.Protocol.Steps, run.Protocol.WarmUps, string(identity), identityDigest(identity))
	if err != nil {
		return fmt.Errorf("insert run %s: %w", run.ID, err)
	}
	return nil
}

func insertCases(ctx context.Context, tx *sql.Tx, runID string, cases []evidence.Case) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO cases
		(seq, run_id, lane, id, status, tier, metrics, tolerance, duration_s, message)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, c := range cases {
		metrics, err := floatMapJSON(c.Metrics)
		if err != nil {
			return err
		}
		tolerance, err := floatMapJSON(c.Tolerance)
		if err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, i, runID, c.Lane, c.ID, c.Status, nullIfEmpty(c.Tier),
			metrics, tolerance, c.Duration, nullIfEmpty(c.Message)); err != nil {
			return fmt.Errorf("insert case %s: %w", caseKey(c), err)
		}
	}
	return nil
}

func insertMeasurements(ctx context.Context, tx *sql.Tx, runID string, ms []evidence.Measurement) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO measurements
		(seq, run_id, lane, workload, phase, role, slot, attempt, outcome, steps_s, result_sha256, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, m := range ms {
		steps, err := json.Marshal(emptyIfNil(m.Steps))
		if err != nil {
			return fmt.Errorf("measurement %s: steps: %w", measurementKey(m), err)
		}
		if _, err := stmt.ExecContext(ctx, i, runID, m.Lane, m.Workload, m.Phase, m.Role, m.Slot, m.Attempt,
			m.Outcome, string(steps), nullIfEmpty(m.ResultSHA256), nullIfEmpty(m.Error)); err != nil {
			return fmt.Errorf("insert measurement %s: %w", measurementKey(m), err)
		}
	}
	return nil
}

// floatMapJSON is the column value of a metrics or tolerance map: NULL when
// empty, else JSON with sorted keys (encoding/json sorts map keys).
func floatMapJSON(m map[string]float64) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// caseKey names a case in messages and findings: lane/id.
func caseKey(c evidence.Case) string { return c.Lane + "/" + c.ID }

// measurementKey names a worker attempt: lane/workload/slot/attempt.
func measurementKey(m evidence.Measurement) string {
	return m.Lane + "/" + m.Workload + "/" + strconv.Itoa(m.Slot) + "/" + strconv.Itoa(m.Attempt)
}

// validateRecords reports every record that cannot be stored.
func validateRecords(run Run, cases []evidence.Case, ms []evidence.Measurement) error {
	var errs []error
	lanes := map[string]bool{}
	for _, l := range run.Lanes {
		lanes[l] = true
	}
	checkLane := func(what, lane string) {
		if len(lanes) > 0 && lane != "" && !lanes[lane] {
			errs = append(errs, fmt.Errorf("%s: lane %q is not one of the run's lanes", what, lane))
		}
	}
	seenCase := map[string]int{}
	for i, c := range cases {
		what := fmt.Sprintf("case %d (%s)", i, caseKey(c))
		bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(what+": "+format, args...)) }
		if c.Lane == "" {
			bad("empty lane")
		}
		if c.ID == "" {
			bad("empty id")
		}
		checkLane(what, c.Lane)
		switch c.Status {
		case evidence.StatusPass, evidence.StatusFail, evidence.StatusError, evidence.StatusSkip:
		default:
			bad("status %q is not PASS, FAIL, ERROR or SKIP", c.Status)
		}
		if !finite(c.Duration) || c.Duration < 0 || math.Signbit(c.Duration) {
			bad("duration_s %v is not a finite non-negative number (-0 included)", c.Duration)
		}
		for _, f := range []struct {
			name string
			m    map[string]float64
		}{{"metrics", c.Metrics}, {"tolerance", c.Tolerance}} {
			for k, v := range f.m {
				if !finite(v) {
					bad("%s[%q] is %v", f.name, k, v)
				}
			}
		}
		if j, dup := seenCase[caseKey(c)]; dup {
			bad("same lane/id as case %d", j)
		} else {
			seenCase[caseKey(c)] = i
		}
	}
	if len(ms) > 0 && run.Protocol == (Protocol{}) {
		errs = append(errs, fmt.Errorf("%d measurements in a run without a protocol (Protocol.Steps is 0)", len(ms)))
	}
	seenM := map[string]int{}
	for i, m := range ms {
		what := fmt.Sprintf("measurement %d (%s)", i, measurementKey(m))
		bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(what+": "+format, args...)) }
		if m.Lane == "" {
			bad("empty lane")
		}
		if m.Workload == "" {
			bad("empty workload")
		}
		checkLane(what, m.Lane)
		if m.Role != evidence.RoleCandidate && m.Role != evidence.RoleReference {
			bad("role %q is not candidate or reference", m.Role)
		}
		if m.Slot < 1 || m.Slot > 4 {
			bad("slot %d is not 1..4", m.Slot)
		}
		if m.Attempt != 1 && m.Attempt != 2 {
			bad("attempt %d is not 1 or 2", m.Attempt)
		}
		switch m.Outcome {
		case evidence.OutcomeOK, evidence.OutcomeStartupFailure, evidence.OutcomeFailure,
			evidence.OutcomeTimeout, evidence.OutcomeWrongResult:
		default:
			bad("outcome %q is not one of ok, startup-failure, failure, timeout, wrong-result", m.Outcome)
		}
		for j, v := range m.Steps {
			if !finite(v) {
				bad("steps_s[%d] is %v", j, v)
			}
		}
		if j, dup := seenM[measurementKey(m)]; dup {
			bad("same lane/workload/slot/attempt as measurement %d", j)
		} else {
			seenM[measurementKey(m)] = i
		}
	}
	return errors.Join(errs...)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// sealPages writes every page's checksum into its reserved bytes.
func sealPages(img []byte) error {
	if len(img) == 0 || len(img)%pageSize != 0 || int(img[20]) != reserveBytes {
		return fmt.Errorf("database image of %d bytes is not in %d-byte pages with %d reserved bytes", len(img), pageSize, reserveBytes)
	}
	for p := 0; p*pageSize < len(img); p++ {
		page := img[p*pageSize : (p+1)*pageSize]
		sum := pageChecksum(page, uint32(p+1))
		copy(page[usableSize:], sum[:])
	}
	return nil
}

// pageChecksum is the SHA-256 of a page's usable bytes followed by its
// 1-based page number, big-endian.
func pageChecksum(page []byte, number uint32) [sha256.Size]byte {
	h := sha256.New()
	h.Write(page[:usableSize])
	h.Write(binary.BigEndian.AppendUint32(nil, number))
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// verifyPages checks every page's checksum and returns a problem for each
// page that fails (at most a few, then a count).
func verifyPages(img []byte) []string {
	var problems []string
	failed := 0
	for p := 0; (p+1)*pageSize <= len(img); p++ {
		page := img[p*pageSize : (p+1)*pageSize]
		sum := pageChecksum(page, uint32(p+1))
		if !bytes.Equal(sum[:], page[usableSize:]) {
			failed++
			if failed <= 5 {
				problems = append(problems, fmt.Sprintf("page %d (bytes %d..%d): checksum mismatch, damaged or changed after it was written",
					p+1, p*pageSize, (p+1)*pageSize-1))
			}
		}
	}
	if failed > 5 {
		problems = append(problems, fmt.Sprintf("%d more pages fail their checksum", failed-5))
	}
	return problems
}
