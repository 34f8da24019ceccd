// Package store keeps the raw records of one verifier run in a single SQLite
// file beside the JSONL files the lanes wrote, and checks the two against
// each other (the rule: the SQLite store passes PRAGMA integrity_check and
// agrees with the JSONL files row for row).
//
// [Write] builds the database in memory and puts it in place atomically
// (temporary name, fsync, rename); the same records give the same bytes
// (with the same SQLite library, whose version number is in the header).
// [Open] opens a store read-only and immutable; [Store.IntegrityCheck]
// verifies it; [Store.Run], [Store.Cases] and [Store.Measurements] read it
// back in insertion order; [Agree] compares it with the JSONL records.
//
// # File format
//
// An ordinary SQLite 3 database (rollback journal, never WAL, so one file)
// with 4096-byte pages, application_id 0x6d6b7276 ("mkrv") and
// user_version 1 (the schema version). Every page ends with 32 reserved
// bytes, which SQLite leaves alone; they hold the SHA-256 of the page's other
// 4064 bytes followed by the page number as a big-endian uint32, so that any
// damaged byte, including one in unused space that PRAGMA integrity_check
// cannot see, is found by [Store.IntegrityCheck]. The checksums detect damage,
// not tampering: whoever rewrites a page can rewrite its checksum too; the
// evidence's signature covers that. A store changed by another SQLite client
// still opens, so that [Agree] can say what changed, but fails the integrity
// check on every page it touched.
//
// # Schema
//
//	CREATE TABLE runs (
//	  id                TEXT    NOT NULL PRIMARY KEY,
//	  target            TEXT    NOT NULL,
//	  interpreter       TEXT    NOT NULL,
//	  sources_tree_hash TEXT    NOT NULL,
//	  steps             INTEGER NOT NULL CHECK (steps >= 0),
//	  warmups           INTEGER NOT NULL CHECK ((steps = 0 AND warmups = 0) OR (warmups >= 0 AND warmups < steps)),
//	  identity          TEXT    NOT NULL CHECK (json_valid(identity)),
//	  identity_sha256   TEXT    NOT NULL
//	) STRICT;
//
//	CREATE TABLE cases (
//	  seq        INTEGER NOT NULL UNIQUE,   -- insertion order, 0-based
//	  run_id     TEXT    NOT NULL REFERENCES runs (id),
//	  lane       TEXT    NOT NULL,
//	  id         TEXT    NOT NULL,
//	  status     TEXT    NOT NULL CHECK (status IN ('PASS', 'FAIL', 'ERROR', 'SKIP')),
//	  tier       TEXT    CHECK (tier <> ''),
//	  metrics    TEXT    CHECK (json_valid(metrics) AND json_type(metrics) = 'object'),
//	  tolerance  TEXT    CHECK (json_valid(tolerance) AND json_type(tolerance) = 'object'),
//	  duration_s REAL    NOT NULL CHECK (duration_s >= 0),
//	  message    TEXT    CHECK (message <> ''),
//	  PRIMARY KEY (lane, id)
//	) STRICT;
//
//	CREATE TABLE measurements (
//	  seq           INTEGER NOT NULL UNIQUE, -- insertion order, 0-based
//	  run_id        TEXT    NOT NULL REFERENCES runs (id),
//	  lane          TEXT    NOT NULL,
//	  workload      TEXT    NOT NULL,
//	  phase         TEXT    NOT NULL,
//	  role          TEXT    NOT NULL CHECK (role IN ('candidate', 'reference')),
//	  slot          INTEGER NOT NULL CHECK (slot BETWEEN 1 AND 4),
//	  attempt       INTEGER NOT NULL CHECK (attempt IN (1, 2)),
//	  outcome       TEXT    NOT NULL CHECK (outcome IN ('ok', 'startup-failure', 'failure', 'timeout', 'wrong-result')),
//	  steps_s       TEXT    NOT NULL CHECK (json_valid(steps_s) AND json_type(steps_s) = 'array'),
//	  result_sha256 TEXT    CHECK (result_sha256 <> ''),
//	  error         TEXT    CHECK (error <> ''),
//	  PRIMARY KEY (lane, workload, slot, attempt)
//	) STRICT;
//
// The NOT NULL columns are the records' required JSON fields; a field the
// JSONL omits when empty (omitempty) is NULL when empty, never ”. The runs
// table holds exactly one row. Its typed columns repeat the scalar parts of
// the identity column, which holds the canonical JSON of the whole run
// identity ([Run.CanonicalIdentity]); identity_sha256 is its SHA-256.
//
// # Floating point
//
// duration_s is a REAL column; metrics, tolerance and steps_s are JSON text
// written with Go's shortest round-tripping float format. Every float reads
// back bit for bit. NaN and ±Inf are refused on write (JSON cannot carry
// them, so no record holds them), and so is a negative duration, including
// −0, whose sign an SQLite REAL column would drop.
package store
