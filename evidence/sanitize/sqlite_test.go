package sanitize

import (
	"bytes"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// makeDB creates an SQLite database with the statements given and returns
// its bytes.
func makeDB(t testing.TB, stmts ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite3")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sqlQuote quotes s as an SQL string literal.
func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// scanDB scans an SQLite database's bytes.
func scanDB(t *testing.T, s *Scanner, data []byte) []Finding {
	t.Helper()
	fs, err := s.Scan(bytes.NewReader(data), "db")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// decodedBySQLite returns the findings of kind found only by reading the
// database's pages.
func decodedBySQLite(fs []Finding, kind string) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Kind == kind && strings.Contains(f.Decoded, "sqlite") {
			out = append(out, f)
		}
	}
	return out
}

// A value that continues on overflow pages is read whole: a token cut by
// a page boundary (and its overflow page number) is found.
func TestSQLiteOverflow(t *testing.T) {
	gh := "gh" + "p_" + chars(36, 7)
	// Pages of 1024 bytes: the local part of a long row is a few hundred
	// bytes, then the payload goes on 1020 bytes per overflow page. Put
	// the token across every offset near the first boundaries.
	filler := strings.Repeat("lorem ipsum ", 400)
	var stmts []string
	stmts = append(stmts, "PRAGMA page_size = 1024", "CREATE TABLE log (id INTEGER PRIMARY KEY, msg TEXT)")
	for i := range 40 {
		msg := filler[:200+i*37] + " " + gh + " " + filler[:3000]
		stmts = append(stmts, "INSERT INTO log (msg) VALUES ("+sqlQuote(msg)+")")
	}
	data := makeDB(t, stmts...)
	fs := scanDB(t, Private{}.Scanner(), data)
	found := 0
	for _, f := range fs {
		if f.Kind == KindGitHubToken {
			found++
			if !bytes.HasPrefix(data[f.Offset:], []byte(gh[:4])) && !strings.Contains(f.Decoded, "sqlite page") {
				t.Errorf("finding %v: not at the token", f)
			}
		}
	}
	if found != 40 {
		t.Errorf("%d of 40 tokens found: %v", found, fs)
	}
	if len(decodedBySQLite(fs, KindGitHubToken)) == 0 {
		t.Error("no token was cut by a page boundary: the test does not test overflow pages")
	}
	for _, f := range decodedBySQLite(fs, KindGitHubToken) {
		if !strings.Contains(f.Decoded, "table log column msg") {
			t.Errorf("finding %v does not name the table and column", f)
		}
	}
}

// A database in UTF-16 keeps its text in UTF-16: it is turned into UTF-8
// to be scanned.
func TestSQLiteUTF16(t *testing.T) {
	for _, enc := range []string{"UTF-16le", "UTF-16be"} {
		data := makeDB(t, "PRAGMA encoding = '"+enc+"'", "CREATE TABLE t (m TEXT)",
			"INSERT INTO t VALUES ('ran on alice-mbp.local'), ('in /srv/scratch/mk-1/x'), ('ok 😀 fine')")
		fs := scanDB(t, testPrivate().Scanner(), data)
		if len(decodedBySQLite(fs, KindHostName)) != 1 || len(decodedBySQLite(fs, KindPrivatePath)) != 1 || len(fs) != 2 {
			t.Errorf("%s: %v, want the host name and the scratch path", enc, fs)
		}
	}
}

// Values of one column in consecutive rows are joined, in key order, in
// tables and in indexes; the names in findings are only those that hide
// nothing.
func TestSQLiteJoinsRows(t *testing.T) {
	gh := "gh" + "p_" + chars(36, 8)
	data := makeDB(t, "CREATE TABLE cases (seq INTEGER, id TEXT, note TEXT, PRIMARY KEY (id))",
		"INSERT INTO cases VALUES (1, 'a', 'first '), (2, 'b', "+sqlQuote(gh[:17])+"), (3, 'c', "+sqlQuote(gh[17:]+" tail")+"), (4, 'd', 'x')",
		"CREATE TABLE alice_mbp (v TEXT)", "INSERT INTO alice_mbp VALUES ('on alice-'), ('mbp now')")
	fs := scanDB(t, testPrivate().Scanner(), data)
	var joined []string
	for _, f := range fs {
		if strings.Contains(f.Decoded, "joined") {
			joined = append(joined, f.Kind+": "+f.Decoded)
		}
	}
	want := []string{
		"github-token: sqlite values of cases column note in consecutive rows joined",
		"host-name: sqlite values of at page 4 column v in consecutive rows joined", // a table named after the host is not named
	}
	for _, w := range want {
		ok := false
		for _, j := range joined {
			ok = ok || strings.HasPrefix(j, w)
		}
		if !ok {
			t.Errorf("no finding %q in %v", w, joined)
		}
	}
}

// A clean database has no finding; a database read from no file cannot
// be read page by page.
func TestSQLiteClean(t *testing.T) {
	data := makeDB(t, "CREATE TABLE t (id TEXT PRIMARY KEY, sha TEXT, msg TEXT)",
		"INSERT INTO t VALUES ('conv2d/fp32/case-0001', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08', 'ok {venv}/lib/x.py'),"+
			" ('conv2d/fp32/case-0002', 'n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sF7DwCgg', 'in {tmp}/x and ~/.cache'),"+
			" ('conv2d/fp32/case-0003', '/home', '/var/tmp'), ('conv2d/fp32/case-0004', '/lib', '/x')")
	if fs := scanDB(t, testPrivate().Scanner(), data); len(fs) != 0 {
		t.Errorf("clean database: %v", fs)
	}
	if _, err := testPrivate().Scanner().Scan(struct{ *bytes.Buffer }{bytes.NewBuffer(data)}, "db"); err == nil ||
		!strings.Contains(err.Error(), "db") || !strings.Contains(err.Error(), "page by page") {
		t.Errorf("Scan of a database from a plain reader: %v", err)
	}
}

// A damaged database is read as far as it makes sense, without a panic
// and in bounded time: pages that point to themselves, to each other,
// out of the file; lengths past the page.
func TestSQLiteDamaged(t *testing.T) {
	good := makeDB(t, "PRAGMA page_size = 512", "CREATE TABLE t (m TEXT)",
		"INSERT INTO t VALUES ("+sqlQuote(strings.Repeat("lorem ipsum ", 300))+"), ('alice-mbp')")
	s := testPrivate().Scanner()
	for i := 100; i < len(good); i += 5 {
		for _, b := range []byte{0x00, 0x05, 0x0D, 0x80, 0xFF} {
			bad := bytes.Clone(good)
			bad[i] = b
			if _, err := s.Scan(bytes.NewReader(bad), "db"); err != nil {
				t.Fatalf("byte %d = %#x: %v", i, b, err)
			}
		}
	}
	for _, n := range []int{16, 99, 100, 511, 513, len(good) - 1} {
		if _, err := s.Scan(bytes.NewReader(good[:n]), "db"); err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
	}
}
