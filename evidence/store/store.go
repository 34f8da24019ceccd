package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/evidence"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DamageError reports a file that is not an intact evidence store: not an
// SQLite database, truncated, a page that fails its checksum or PRAGMA
// integrity_check, a missing or altered table, a row that does not decode.
type DamageError struct {
	Path     string   // the store file
	Problems []string // what is wrong, one problem each
	Err      error    // the underlying error, if any
}

// Error names the file and every problem.
func (e *DamageError) Error() string {
	msg := "evidence store " + e.Path + " is damaged: " + strings.Join(e.Problems, "; ")
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *DamageError) Unwrap() error { return e.Err }

// Store is an evidence store opened read-only. Its methods may be called
// concurrently.
type Store struct {
	path string
	db   *sql.DB
}

// Open opens the store at path read-only, as an immutable file. It checks
// the SQLite header (a file that is not SQLite, has been truncated or
// extended, or is in WAL mode is refused), the application id and schema
// version, and that every table is there as [Write] creates it; damage of
// that kind is a *[DamageError]. Page checksums and PRAGMA integrity_check
// are [Store.IntegrityCheck]'s, so that a store altered with SQLite can
// still be opened and compared with [Agree].
func Open(path string) (*Store, error) {
	return OpenContext(context.Background(), path)
}

// OpenContext is [Open] with a context.
func OpenContext(ctx context.Context, path string) (*Store, error) {
	if err := checkHeader(path); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("evidence store %s: %w", path, err)
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: "mode=ro&immutable=1"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("evidence store %s: %w", path, err)
	}
	s := &Store{path: path, db: db}
	if err := s.checkSchema(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Path returns the file the store was opened from.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// damaged returns a *DamageError for s.
func (s *Store) damaged(err error, problems ...string) error {
	return &DamageError{Path: s.path, Problems: problems, Err: err}
}

// queryErr wraps an error from reading the database: SQLite's "malformed"
// and "not a database" are damage, anything else (a cancelled context, an
// I/O error) is returned as it is, with the file and what was being read.
func (s *Store) queryErr(what string, err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_FORMAT, sqlite3.SQLITE_RANGE:
			return s.damaged(err, what)
		}
	}
	return fmt.Errorf("evidence store %s: %s: %w", s.path, what, err)
}

// checkHeader reads the database header of path and checks it against the
// file's size and the format Write produces.
func checkHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("evidence store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("evidence store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("evidence store %s: not a regular file", path)
	}
	damaged := func(format string, args ...any) error {
		return &DamageError{Path: path, Problems: []string{fmt.Sprintf(format, args...)}}
	}
	var h [headerSize]byte
	n, err := io.ReadFull(f, h[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("evidence store %s: %w", path, err)
	}
	if n < len(sqliteMagic) || string(h[:len(sqliteMagic)]) != sqliteMagic {
		return damaged("not an SQLite database (%d bytes, no SQLite header)", fi.Size())
	}
	if n < headerSize {
		return damaged("truncated: %d bytes, shorter than the SQLite header", fi.Size())
	}
	ps := int64(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return damaged("header: page size %d is not a power of two from 512 to 65536", ps)
	}
	if ps != pageSize || h[20] != reserveBytes {
		return damaged("header: %d-byte pages with %d reserved bytes, not the %d and %d an evidence store has", ps, h[20], pageSize, reserveBytes)
	}
	if h[18] == 2 || h[19] == 2 {
		return damaged("header: the database is in WAL mode, an evidence store is one file")
	}
	if h[18] != 1 || h[19] != 1 {
		return damaged("header: unknown file format versions %d/%d", h[18], h[19])
	}
	if id := binary.BigEndian.Uint32(h[68:]); id != applicationID {
		return damaged("header: application id %#x, not an mkrelease evidence store (%#x)", id, applicationID)
	}
	if v := binary.BigEndian.Uint32(h[60:]); v != schemaVersion {
		return damaged("header: schema version %d, this mkrelease reads version %d", v, schemaVersion)
	}
	pages := int64(binary.BigEndian.Uint32(h[28:]))
	changeCounter, validFor := binary.BigEndian.Uint32(h[24:]), binary.BigEndian.Uint32(h[92:])
	switch {
	case fi.Size()%ps != 0:
		return damaged("truncated or extended: %d bytes is not a whole number of %d-byte pages", fi.Size(), ps)
	case changeCounter == validFor && pages*ps != fi.Size():
		return damaged("truncated or extended: %d bytes, the header says %d pages (%d bytes)", fi.Size(), pages, pages*ps)
	}
	return nil
}

// checkSchema checks that every table is there as Write creates it.
func (s *Store) checkSchema(ctx context.Context) error {
	got := map[string]string{}
	rows, err := s.db.QueryContext(ctx, "SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
	if err != nil {
		return s.queryErr("reading the schema", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var create sql.NullString
		if err := rows.Scan(&name, &create); err != nil {
			return s.queryErr("reading the schema", err)
		}
		got[name] = create.String
	}
	if err := rows.Err(); err != nil {
		return s.queryErr("reading the schema", err)
	}
	var problems []string
	for _, t := range tables() {
		create, ok := got[t.name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("table %s is missing", t.name))
		case create != t.create:
			problems = append(problems, fmt.Sprintf("table %s is not defined as schema version %d defines it", t.name, schemaVersion))
		}
	}
	if len(problems) > 0 {
		return s.damaged(nil, problems...)
	}
	return nil
}

// IntegrityCheck verifies the store: every page's checksum, PRAGMA
// integrity_check, PRAGMA foreign_key_check, and exactly one run. It returns
// nil or a *[DamageError] naming the file and every problem found.
func (s *Store) IntegrityCheck() error {
	return s.IntegrityCheckContext(context.Background())
}

// IntegrityCheckContext is [Store.IntegrityCheck] with a context.
func (s *Store) IntegrityCheckContext(ctx context.Context) error {
	img, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("evidence store: %w", err)
	}
	problems := verifyPages(img)
	if len(img)%pageSize != 0 {
		problems = append(problems, fmt.Sprintf("%d bytes is not a whole number of %d-byte pages", len(img), pageSize))
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.queryErr("integrity check", err)
	}
	defer conn.Close()
	if err := checkDatabase(ctx, conn); err != nil {
		var de *DamageError
		if !errors.As(err, &de) {
			return s.queryErr("integrity check", err)
		}
		problems = append(problems, de.Problems...)
	}
	var runs int
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM runs").Scan(&runs); err != nil {
		problems = append(problems, "counting runs: "+err.Error())
	} else if runs != 1 {
		problems = append(problems, fmt.Sprintf("%d runs, not 1", runs))
	}
	if len(problems) > 0 {
		return s.damaged(nil, problems...)
	}
	return nil
}

// checkDatabase runs PRAGMA integrity_check and foreign_key_check on conn and
// returns a *DamageError (with no path) listing what they report, or the
// error that kept them from running.
func checkDatabase(ctx context.Context, conn *sql.Conn) error {
	var problems []string
	rows, err := conn.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		var se *sqlite.Error
		if errors.As(err, &se) {
			return &DamageError{Problems: []string{"integrity_check: " + err.Error()}, Err: err}
		}
		return err
	}
	for rows.Next() {
		var msg string
		if err := rows.Scan(&msg); err != nil {
			rows.Close()
			return err
		}
		if msg != "ok" {
			problems = append(problems, "integrity_check: "+msg)
		}
	}
	if err := rows.Err(); err != nil {
		problems = append(problems, "integrity_check: "+err.Error())
	}
	rows.Close()
	rows, err = conn.QueryContext(ctx, "PRAGMA foreign_key_check")
	if err != nil {
		problems = append(problems, "foreign_key_check: "+err.Error())
	} else {
		for rows.Next() {
			var table, parent string
			var rowid sql.NullInt64
			var fk int
			if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
				rows.Close()
				return err
			}
			problems = append(problems, fmt.Sprintf("foreign_key_check: %s row %d refers to a missing %s row", table, rowid.Int64, parent))
		}
		if err := rows.Err(); err != nil {
			problems = append(problems, "foreign_key_check: "+err.Error())
		}
		rows.Close()
	}
	if len(problems) > 0 {
		return &DamageError{Problems: problems}
	}
	return nil
}

// Run returns the run the store records, normalised as [Run] describes,
// after checking that its typed columns and identity digest agree with its
// identity JSON.
func (s *Store) Run() (Run, error) {
	return s.RunContext(context.Background())
}

// RunContext is [Store.Run] with a context.
func (s *Store) RunContext(ctx context.Context) (Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, target, interpreter, sources_tree_hash, steps, warmups,
		identity, identity_sha256 FROM runs`)
	if err != nil {
		return Run{}, s.queryErr("reading the run", err)
	}
	defer rows.Close()
	var runs []Run
	for rows.Next() {
		var id, target, interp, tree, identity, digest string
		var steps, warmups int
		if err := rows.Scan(&id, &target, &interp, &tree, &steps, &warmups, &identity, &digest); err != nil {
			return Run{}, s.queryErr("reading the run", err)
		}
		r, err := ParseIdentity(id, []byte(identity))
		if err != nil {
			return Run{}, s.damaged(err, "run "+id+": identity does not decode")
		}
		var problems []string
		if identityDigest([]byte(identity)) != digest {
			problems = append(problems, "identity_sha256 does not match identity")
		}
		if canon, err := r.CanonicalIdentity(); err != nil || string(canon) != identity {
			problems = append(problems, "identity is not in canonical form")
		}
		if r.Target != target || r.Interpreter != interp || r.SourcesTreeHash != tree ||
			r.Protocol.Steps != steps || r.Protocol.WarmUps != warmups {
			problems = append(problems, "typed columns disagree with identity")
		}
		if len(problems) > 0 {
			for i := range problems {
				problems[i] = "run " + id + ": " + problems[i]
			}
			return Run{}, s.damaged(nil, problems...)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return Run{}, s.queryErr("reading the run", err)
	}
	if len(runs) != 1 {
		return Run{}, s.damaged(nil, fmt.Sprintf("%d runs, not 1", len(runs)))
	}
	return runs[0], nil
}

// Cases returns the cases in insertion order.
func (s *Store) Cases() ([]evidence.Case, error) {
	return s.CasesContext(context.Background())
}

// CasesContext is [Store.Cases] with a context.
func (s *Store) CasesContext(ctx context.Context) ([]evidence.Case, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT lane, id, status, tier, metrics, tolerance, duration_s, message
		FROM cases ORDER BY seq`)
	if err != nil {
		return nil, s.queryErr("reading cases", err)
	}
	defer rows.Close()
	var out []evidence.Case
	for rows.Next() {
		var c evidence.Case
		var tier, metrics, tolerance, message sql.NullString
		if err := rows.Scan(&c.Lane, &c.ID, &c.Status, &tier, &metrics, &tolerance, &c.Duration, &message); err != nil {
			return nil, s.queryErr("reading cases", err)
		}
		c.Tier, c.Message = tier.String, message.String
		if c.Metrics, err = decodeFloatMap(metrics); err != nil {
			return nil, s.damaged(err, "case "+caseKey(c)+": metrics do not decode")
		}
		if c.Tolerance, err = decodeFloatMap(tolerance); err != nil {
			return nil, s.damaged(err, "case "+caseKey(c)+": tolerance does not decode")
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryErr("reading cases", err)
	}
	return out, nil
}

// Measurements returns the worker attempts in insertion order.
func (s *Store) Measurements() ([]evidence.Measurement, error) {
	return s.MeasurementsContext(context.Background())
}

// MeasurementsContext is [Store.Measurements] with a context.
func (s *Store) MeasurementsContext(ctx context.Context) ([]evidence.Measurement, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT lane, workload, phase, role, slot, attempt, outcome, steps_s,
		result_sha256, error FROM measurements ORDER BY seq`)
	if err != nil {
		return nil, s.queryErr("reading measurements", err)
	}
	defer rows.Close()
	var out []evidence.Measurement
	for rows.Next() {
		var m evidence.Measurement
		var steps string
		var result, errMsg sql.NullString
		if err := rows.Scan(&m.Lane, &m.Workload, &m.Phase, &m.Role, &m.Slot, &m.Attempt, &m.Outcome,
			&steps, &result, &errMsg); err != nil {
			return nil, s.queryErr("reading measurements", err)
		}
		m.ResultSHA256, m.Error = result.String, errMsg.String
		if err := json.Unmarshal([]byte(steps), &m.Steps); err != nil {
			return nil, s.damaged(err, "measurement "+measurementKey(m)+": steps_s do not decode")
		}
		m.Steps = nilIfEmpty(m.Steps)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryErr("reading measurements", err)
	}
	return out, nil
}

// decodeFloatMap decodes a metrics or tolerance column; NULL is nil.
func decodeFloatMap(col sql.NullString) (map[string]float64, error) {
	if !col.Valid {
		return nil, nil
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(col.String), &m); err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}
