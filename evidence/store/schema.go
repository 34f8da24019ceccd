package store

// File format constants (see the package documentation).
const (
	pageSize      = 4096
	reserveBytes  = 32 // per page: SHA-256 of the rest of the page and its number
	usableSize    = pageSize - reserveBytes
	applicationID = 0x6d6b7276 // "mkrv"
	schemaVersion = 1          // PRAGMA user_version
	sqliteMagic   = "SQLite format 3\x00"
	headerSize    = 100
)

// The tables, in creation order. The statements are the package
// documentation's, verbatim; Open compares a store's with them.
const (
	createRuns = `CREATE TABLE runs (
  id                TEXT    NOT NULL PRIMARY KEY,
  target            TEXT    NOT NULL,
  interpreter       TEXT    NOT NULL,
  sources_tree_hash TEXT    NOT NULL,
  steps             INTEGER NOT NULL CHECK (steps >= 0),
  warmups           INTEGER NOT NULL CHECK ((steps = 0 AND warmups = 0) OR (warmups >= 0 AND warmups < steps)),
  identity          TEXT    NOT NULL CHECK (json_valid(identity)),
  identity_sha256   TEXT    NOT NULL
) STRICT`

	createCases = `CREATE TABLE cases (
  seq        INTEGER NOT NULL UNIQUE,   -- insertion order, 0-based
  run_id     TEXT    NOT NULL REFERENCES runs (id),
  lane       TEXT    NOT NULL,
  id         TEXT    NOT NULL,
  status     TEXT    NOT NULL CHECK (status IN ('PASS', 'FAIL', 'ERROR', 'SKIP')),
  tier       TEXT    CHECK (tier <> ''),
  metrics    TEXT    CHECK (json_valid(metrics) AND json_type(metrics) = 'object'),
  tolerance  TEXT    CHECK (json_valid(tolerance) AND json_type(tolerance) = 'object'),
  duration_s REAL    NOT NULL CHECK (duration_s >= 0),
  message    TEXT    CHECK (message <> ''),
  PRIMARY KEY (lane, id)
) STRICT`

	createMeasurements = `CREATE TABLE measurements (
  seq           INTEGER NOT NULL UNIQUE, -- insertion order, 0-based
  run_id        TEXT    NOT NULL REFERENCES runs (id),
  lane          TEXT    NOT NULL,
  workload      TEXT    NOT NULL,
  phase         TEXT    NOT NULL,
  role          TEXT    NOT NULL CHECK (role IN ('candidate', 'reference')),
  slot          INTEGER NOT NULL CHECK (slot BETWEEN 1 AND 4),
  attempt       INTEGER NOT NULL CHECK (attempt IN (1, 2)),
  outcome       TEXT    NOT NULL CHECK (outcome IN ('ok', 'startup-failure', 'failure', 'timeout', 'wrong-result')),
  steps_s       TEXT    NOT NULL CHECK (json_valid(steps_s) AND json_type(steps_s) = 'array'),
  result_sha256 TEXT    CHECK (result_sha256 <> ''),
  error         TEXT    CHECK (error <> ''),
  PRIMARY KEY (lane, workload, slot, attempt)
) STRICT`
)

// table is one table of the schema.
type table struct {
	name, create string
}

// tables returns the schema's tables in creation order.
func tables() []table {
	return []table{
		{"runs", createRuns},
		{"cases", createCases},
		{"measurements", createMeasurements},
	}
}
