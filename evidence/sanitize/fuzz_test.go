package sanitize

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// oracle is an independent reading of the package documentation's
// credential patterns as regular expressions, anchored at a finding's
// offset, with the class the byte before the match must stay out of.
type oracle struct {
	re     *regexp.Regexp
	before string // a character class, "" for none
}

func oracles() map[string]oracle {
	const alnum = `[A-Za-z0-9]`
	return map[string]oracle{
		KindPrivateKey: {re: regexp.MustCompile(`^((?i:-----BEGIN [A-Za-z0-9 ._]{0,64}PRIVATE KEY( BLOCK)?-----)|` +
			`(?s:\x02\x01[\x00\x01]\x30[\x00-\x7f]\x06)|\x02\x01\x00\x02[\x81\x82]|\x02\x01\x01\x04[\x18-\x42]|` +
			`\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d|\x06\x0a\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01|` +
			`openssh-key-v1\x00|PuTTY-User-Key-File-[0-9]|AGE-SECRET-KEY-1[0-9A-Z]{50})`)},
		KindAWSAccessKeyID: {re: regexp.MustCompile(`^(AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}([^A-Za-z0-9]|$)`), before: alnum},
		KindAWSSecretKey: {re: regexp.MustCompile("^(?i:aws_secret_access_key)[ \t\"'`]{0,8}[:=][=>]?[ \t\"'`]{0,8}" +
			`[A-Za-z0-9/+]{40}([^A-Za-z0-9/+=]|$)`)},
		KindGitHubToken:  {re: regexp.MustCompile(`^(gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})`), before: alnum},
		KindGitLabToken:  {re: regexp.MustCompile(`^(glpat|gldt|glrt)-[A-Za-z0-9_-]{20}`), before: alnum},
		KindSlackToken:   {re: regexp.MustCompile(`^xox[abeoprs]-[0-9][A-Za-z0-9-]{19}`), before: alnum},
		KindGoogleAPIKey: {re: regexp.MustCompile(`^AIza[A-Za-z0-9_-]{35}([^A-Za-z0-9_-]|$)`), before: `[A-Za-z0-9_-]`},
		KindBearerToken:  {re: regexp.MustCompile(`^(?i:bearer)[ \t]{1,8}[A-Za-z0-9._~+/-]{20}`), before: alnum},
		KindNPMToken:     {re: regexp.MustCompile(`^npm_[A-Za-z0-9]{36}`), before: alnum},
		KindPyPIToken:    {re: regexp.MustCompile(`^pypi-(AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50}`), before: alnum},
		KindHomePath:     {re: regexp.MustCompile(`^(/home/|/Users/|\\Users\\|/root)`)},
		KindTempPath:     {re: regexp.MustCompile(`^(/private)?(/tmp|/var/tmp/|/var/folders/)`)},
		KindPrivatePath:  {re: regexp.MustCompile(`^(/private)?(/tmp/mk-1/venv|/srv/scratch/mk-1)`)},
		KindUserName:     {re: regexp.MustCompile(`^alice([^A-Za-z0-9]|$)`), before: alnum},
		KindHostName:     {re: regexp.MustCompile(`^(?i:alice-mbp)([^A-Za-z0-9_-]|$)`), before: `[A-Za-z0-9_-]`},
	}
}

// FuzzScan checks that scanning never panics, that a finding's offset
// points at bytes of the input that have the documented shape, that the
// chunk size changes nothing, and that String leaves none of the private
// values behind. Seeds: every case of TestScanFindsEveryKind.
//
//	go test ./evidence/sanitize -run '^$' -fuzz FuzzScan -fuzztime 30s -fuzzminimizetime 20x
func FuzzScan(f *testing.F) {
	for _, c := range hitCases() {
		f.Add([]byte(c.before + c.match + c.after))
	}
	f.Add([]byte("x/tmp/y alice/tmp/x {user}/srv/scratch/mk-1 alice-mbp/home/alice ~alice"))
	for _, c := range splitCases() {
		f.Add([]byte(c.in))
	}
	// The decoders: escapes, runs of digits, JSON lines, an SQLite store.
	for _, c := range normaliseCases {
		f.Add([]byte(c.in))
	}
	gh := "gh" + "p_" + chars(36, 9)
	f.Add([]byte(`{"m":"` + base64.StdEncoding.EncodeToString([]byte("t="+gh)) + `","h":"` + hex.EncodeToString([]byte("/home/alice")) + `"}`))
	f.Add([]byte(`{"id":"a","message":"` + gh[:15] + `"}` + "\n" + `{"id":"b","message":"` + gh[15:] + `"}` + "\n"))
	f.Add([]byte(`[{"k":"on alice-"},{"k":"mbp"},{"k":["\u0067hp_","x"]}]`))
	for _, db := range fuzzDatabases(f) {
		f.Add(db)
	}
	p := testPrivate()
	s := p.Scanner()
	tiny := *s
	tiny.chunk = 2 * lookbehind
	ors := oracles()
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := s.Scan(bytes.NewReader(data), "f")
		if err != nil {
			t.Fatal(err)
		}
		small, err := tiny.Scan(bytes.NewReader(data), "f")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, small) {
			t.Fatalf("findings depend on the chunk size:\n%v\n%v", got, small)
		}
		last := int64(-1)
		for _, fd := range got {
			if fd.Offset < 0 || fd.Offset >= int64(len(data)) || fd.Offset < last {
				t.Fatalf("finding %v: offset out of the input (%d bytes) or out of order", fd, len(data))
			}
			last = fd.Offset
			if !utf8.ValidString(fd.Excerpt) || len(fd.Excerpt) > 100 {
				t.Fatalf("finding %v: excerpt not short valid UTF-8", fd)
			}
			if fd.Decoded != "" {
				// Found in decoded text: checked by the decoders' tests.
				continue
			}
			o, ok := ors[fd.Kind]
			if !ok {
				if fd.Kind != KindTruncated {
					t.Fatalf("finding %v: unknown kind", fd)
				}
				continue
			}
			// A credential split by invisible characters matches once
			// they are taken out.
			if !o.re.Match(data[fd.Offset:]) && !o.re.Match(withoutInvisible(data[fd.Offset:])) {
				t.Fatalf("finding %v: %q does not match %s", fd, data[fd.Offset:min(len(data), int(fd.Offset)+100)], o.re)
			}
			if o.before != "" && fd.Offset > 0 && regexp.MustCompile(o.before).Match(data[fd.Offset-1:fd.Offset]) {
				t.Fatalf("finding %v: preceded by %q", fd, data[fd.Offset-1])
			}
		}

		if small := sizeIndependent(t, s, data); !reflect.DeepEqual(got, small) {
			t.Fatalf("findings depend on the chunk size")
		}
		out := p.String(string(data))
		if again := p.String(out); again != out {
			t.Fatalf("String is not idempotent: %q → %q → %q", data, out, again)
		}
		for _, fd := range s.scanString(out) {
			if decodedFurther(fd) {
				continue // String leaves what only decoding finds: the Scanner rejects it
			}
			switch {
			case fd.Kind == KindUserName, fd.Kind == KindHostName, fd.Kind == KindPrivatePath,
				fd.Excerpt == HomePlaceholder, fd.Excerpt == TempPlaceholder:
				t.Fatalf("String(%q) = %q still holds %v", data, out, fd)
			}
		}
	})
}

// sizeIndependent scans data from a reader that does not tell its size
// but is an io.ReaderAt (so buffers of a whole chunk), as Scan does a
// pipe's: the findings must not change.
func sizeIndependent(t *testing.T, s *Scanner, data []byte) []Finding {
	t.Helper()
	got, err := s.Scan(unsized{bytes.NewReader(data)}, "f")
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// unsized hides bytes.Reader's Size.
type unsized struct{ r *bytes.Reader }

func (u unsized) Read(p []byte) (int, error)              { return u.r.Read(p) }
func (u unsized) ReadAt(p []byte, off int64) (int, error) { return u.r.ReadAt(p, off) }

// fuzzDatabases returns small SQLite databases to start from: a store as
// evidence/runner writes it and one with an index, overflow pages, a
// deleted row and free pages.
func fuzzDatabases(tb testing.TB) [][]byte {
	long := strings.Repeat("lorem ipsum /home/alice ", 60)
	return [][]byte{makeDB(tb, "PRAGMA page_size = 512", "CREATE TABLE t (id TEXT PRIMARY KEY, m TEXT)",
		"INSERT INTO t VALUES ('a', "+sqlQuote(long)+"), ('b', 'alice-mbp'), ('c', 'x')", "DELETE FROM t WHERE id = 'a'")}
}

// decodedFurther reports a finding String does not replace: in what a run
// of base64 or hex digits decodes to, across joined values, or in an
// SQLite database's records (String sanitises text, not databases).
func decodedFurther(fd Finding) bool {
	for _, d := range []string{"base64", "hex", "joined", "sqlite"} {
		if strings.Contains(fd.Decoded, d) {
			return true
		}
	}
	return false
}

// withoutInvisible returns b without its invisible characters.
func withoutInvisible(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if n == 1 || !isInvisible(r) {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// FuzzSQLite reads damaged SQLite databases page by page: no panic, no
// error for any bytes of a file, and bounded work: no page is read more
// than six times (freelist, schema, b-tree, overflow, orphan pass; the
// schema's overflow pages, all rows together, once).
//
//	go test ./evidence/sanitize -run '^$' -fuzz FuzzSQLite -fuzztime 30s
func FuzzSQLite(f *testing.F) {
	for _, db := range fuzzDatabases(f) {
		f.Add(db)
	}
	f.Add(makeDB(f, "PRAGMA page_size = 512", "PRAGMA encoding = 'UTF-16be'", "CREATE TABLE t (a TEXT, b BLOB)",
		"CREATE INDEX ta ON t (a)", "INSERT INTO t VALUES ('ghp_x', x'00ff'), ("+sqlQuote(strings.Repeat("x", 2000))+", NULL)"))
	s := testPrivate().Scanner()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < len(sqliteMagic) {
			return
		}
		copy(data, sqliteMagic)
		fs := newFileScan(s, "db")
		fs.write(data)
		fs.close()
		if err := fs.sqlite(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if fs.sqliteReads > 6*fs.sqlitePages+6 {
			t.Fatalf("%d pages read of %d", fs.sqliteReads, fs.sqlitePages)
		}
		for _, fd := range fs.col.result() {
			if fd.Offset < 0 || fd.Offset >= int64(len(data)) {
				t.Fatalf("finding %v out of the file (%d bytes)", fd, len(data))
			}
		}
	})
}
