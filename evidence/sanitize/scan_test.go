package sanitize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hitCase is an input holding exactly one finding: match, at offset
// len(before).
type hitCase struct {
	name                 string
	before, match, after string
	kind, excerpt        string
	// secret is the part that must never show in an excerpt or an error.
	secret string
}

// pemBlock returns a PEM block of type typ. Its body is not a DER key
// (derBlock's is): the PEM header alone is what is found.
func pemBlock(typ string) (block, body string) {
	body = "c2FuaXRpc2UgdGVzdCBib2R5" + chars(40, 1)
	return "-----" + "BEGIN " + typ + "-----\n" + body + "\n-----END " + typ + "-----\n", body
}

func hitCases() []hitCase {
	var cs []hitCase
	for _, typ := range []string{"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY",
		"OPENSSH PRIVATE KEY", "ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY", "PGP PRIVATE KEY BLOCK"} {
		block, body := pemBlock(typ)
		cs = append(cs, hitCase{name: "pem " + typ, before: `{"key": "`, match: block, after: `"}`,
			kind: KindPrivateKey, excerpt: "-----BEGIN " + typ + "-----", secret: body})
	}
	lower, body := pemBlock("rsa private key")
	cs = append(cs, hitCase{name: "pem lower case", match: lower, kind: KindPrivateKey, excerpt: "-----BEGIN RSA PRIVATE KEY-----", secret: body})

	awsID := strings.ToUpper(chars(16, 3))
	awsSecret := chars(20, 4) + "/+" + chars(18, 5)
	for _, c := range []hitCase{
		{name: "aws key id", before: "key=", match: "AKIA" + awsID, after: "\n"},
		{name: "aws sts key id at end", before: `"id": "`, match: "ASIA" + awsID},
		{name: "aws key id at start", match: "AKIA" + awsID, after: " rest"},
	} {
		c.kind, c.excerpt, c.secret = KindAWSAccessKeyID, c.match[:4]+"[redacted]", awsID
		cs = append(cs, c)
	}
	for _, c := range []hitCase{
		{name: "aws secret ini", before: "[default]\n", match: "aws_secret_access_key = " + awsSecret, after: "\n", excerpt: "aws_secret_access_key=[redacted]"},
		{name: "aws secret env", before: "export ", match: "AWS_SECRET_ACCESS_KEY=" + awsSecret, excerpt: "AWS_SECRET_ACCESS_KEY=[redacted]"},
		{name: "aws secret json", before: `{"`, match: `aws_secret_access_key": "` + awsSecret, after: `"}`, excerpt: "aws_secret_access_key=[redacted]"},
	} {
		c.kind, c.secret = KindAWSSecretKey, awsSecret
		cs = append(cs, c)
	}
	for i, prefix := range []string{"gh" + "p_", "gh" + "o_", "gh" + "u_", "gh" + "s_", "gh" + "r_"} {
		body := chars(36, byte(i))
		cs = append(cs, hitCase{name: "github " + prefix, before: "GITHUB_TOKEN=", match: prefix + body, after: "\n",
			kind: KindGitHubToken, excerpt: prefix + "[redacted]", secret: body})
	}
	fine := chars(22, 6) + "_" + chars(59, 7)
	cs = append(cs,
		hitCase{name: "github fine-grained", before: "token: ", match: "github" + "_pat_" + fine,
			kind: KindGitHubToken, excerpt: "github_pat_[redacted]", secret: fine},
		hitCase{name: "gitlab", before: "PRIVATE-TOKEN: ", match: "glpat" + "-" + chars(20, 8), after: "\r\n",
			kind: KindGitLabToken, excerpt: "glpat-[redacted]", secret: chars(20, 8)},
		hitCase{name: "slack bot", before: `"token":"`, match: "xoxb" + "-123456789012-1234567890123-" + chars(24, 9), after: `"`,
			kind: KindSlackToken, excerpt: "xoxb-[redacted]", secret: chars(24, 9)},
		hitCase{name: "slack user", match: "xoxp" + "-41684372915-1320496754-45609968301-" + chars(32, 10),
			kind: KindSlackToken, excerpt: "xoxp-[redacted]", secret: chars(32, 10)},
		hitCase{name: "google api key", before: "key=", match: "AIza" + "Sy" + chars(33, 11), after: "&q=1",
			kind: KindGoogleAPIKey, excerpt: "AIza[redacted]", secret: "Sy" + chars(33, 11)},
		hitCase{name: "bearer header", before: "Authorization: ", match: "Bearer " + "eyJhbGciOiJIUzI1NiJ9." + chars(30, 12), after: "\n",
			kind: KindBearerToken, excerpt: "Bearer [redacted]", secret: chars(30, 12)},
		hitCase{name: "bearer curl lower case", before: "curl -H 'authorization: ", match: "bearer\t" + chars(40, 13), after: "' https://x",
			kind: KindBearerToken, excerpt: "bearer [redacted]", secret: chars(40, 13)},
		hitCase{name: "npm", before: "//registry.npmjs.org/:_authToken=", match: "npm" + "_" + chars(36, 14), after: "\n",
			kind: KindNPMToken, excerpt: "npm_[redacted]", secret: chars(36, 14)},
		hitCase{name: "pypi", before: "password = ", match: "pypi" + "-AgEIcHlwaS5vcmc" + chars(60, 15), after: "\n",
			kind: KindPyPIToken, excerpt: "pypi-AgEIcHlwaS5vcmc[redacted]", secret: chars(60, 15)},
		hitCase{name: "test pypi", match: "pypi" + "-AgENdGVzdC5weXBpLm9yZw" + chars(60, 16),
			kind: KindPyPIToken, excerpt: "pypi-AgENdGVzdC5weXBpLm9yZw[redacted]", secret: chars(60, 16)},

		// This machine's private values.
		hitCase{name: "home", before: `"cwd": "`, match: "/home/alice", after: `/.cache/pip"`, kind: KindHomePath, excerpt: "~", secret: "alice"},
		hitCase{name: "home at end", before: "HOME=", match: "/home/alice", kind: KindHomePath, excerpt: "~", secret: "alice"},
		hitCase{name: "venv in temp", before: "python: ", match: "/tmp/mk-1/venv", after: "/bin/python3\n", kind: KindPrivatePath, excerpt: "{venv}", secret: "mk-1"},
		hitCase{name: "venv macOS private", before: "python: ", match: "/private/tmp/mk-1/venv", after: "/bin/python3\n", kind: KindPrivatePath, excerpt: "{venv}", secret: "mk-1"},
		hitCase{name: "scratch", before: "cd ", match: "/srv/scratch/mk-1", after: " && make", kind: KindPrivatePath, excerpt: "{work}", secret: "mk-1"},
		hitCase{name: "temp bare", before: "TMPDIR=", match: "/tmp", after: "\n", kind: KindTempPath, excerpt: "{tmp}", secret: ""},
		hitCase{name: "user component", before: "data in /mnt/", match: "alice", after: "/datasets", kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "user windows", before: `D:\share\`, match: "alice", after: `\x`, kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "user in a file name", before: "{tmp}/pytest-of-", match: "alice", after: "/pytest-0", kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "user in a dotted name", before: "see ", match: "alice", after: ".log", kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "user assignment at end", before: "USER=", match: "alice", kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "user at start", match: "alice", after: "@example.org", kind: KindUserName, excerpt: "{user}", secret: "alice"},
		hitCase{name: "host fqdn", before: "ssh ", match: "alice-mbp", after: ".local", kind: KindHostName, excerpt: "{host}", secret: "alice-mbp"},
		hitCase{name: "host any case", before: "host=", match: "ALICE-MBP", kind: KindHostName, excerpt: "{host}", secret: "ALICE-MBP"},

		// Any machine's home and temporary paths.
		hitCase{name: "other home", before: "at ", match: "/home/bob", after: "/src/x.py:3", kind: KindHomePath, excerpt: "/home/[redacted]", secret: "bob"},
		hitCase{name: "macOS home", before: `"`, match: "/Users/carol", after: `/Library"`, kind: KindHomePath, excerpt: "/Users/[redacted]", secret: "carol"},
		hitCase{name: "windows home", before: "C:", match: `\Users\dave`, after: `\AppData`, kind: KindHomePath, excerpt: `\Users\[redacted]`, secret: "dave"},
		hitCase{name: "windows home in JSON", before: `"C:\`, match: `\Users\\dave`, after: `\\AppData"`, kind: KindHomePath, excerpt: `\Users\[redacted]`, secret: "dave"},
		hitCase{name: "root home", before: "key ", match: "/root", after: "/.ssh/id_ed25519", kind: KindHomePath, excerpt: "/root"},
		hitCase{name: "root home at end", before: "HOME=", match: "/root", kind: KindHomePath, excerpt: "/root"},
		hitCase{name: "tmp file", before: "wrote ", match: "/tmp/", after: "pip-build-x7/setup.py", kind: KindTempPath, excerpt: "/tmp/…"},
		hitCase{name: "tmp file URL", before: "file://", match: "/tmp/", after: "x.whl", kind: KindTempPath, excerpt: "/tmp/…"},
		hitCase{name: "var tmp", before: "(", match: "/var/tmp/", after: "cache)", kind: KindTempPath, excerpt: "/var/tmp/…"},
		hitCase{name: "macOS temp", before: "=", match: "/var/folders/", after: "xy/abc123/T/x", kind: KindTempPath, excerpt: "/var/folders/…"},
		hitCase{name: "macOS temp resolved", before: "'", match: "/private/var/folders/", after: "xy/abc123/T/x'", kind: KindTempPath, excerpt: "/private/var/folders/…"},
	)
	return cs
}

// scanWith scans in with the given chunk size.
func scanWith(t testing.TB, s *Scanner, in string, chunk int) []Finding {
	t.Helper()
	c := *s
	c.chunk = chunk
	fs, err := c.Scan(strings.NewReader(in), "f")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestScanFindsEveryKind(t *testing.T) {
	s := testPrivate().Scanner()
	for _, c := range hitCases() {
		t.Run(c.name, func(t *testing.T) {
			for _, pre := range []string{"", filler()} {
				in := pre + c.before + c.match + c.after
				want := []Finding{{File: "f", Offset: int64(len(pre) + len(c.before)), Kind: c.kind, Excerpt: c.excerpt}}
				// Every chunk size from the smallest on puts a chunk
				// boundary at every position of the match.
				for _, chunk := range append([]int{defaultChunk}, chunkSizes(len(in))...) {
					got := scanWith(t, s, in, chunk)
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("Scan(%q) with chunk %d = %v, want %v", in, chunk, got, want)
					}
				}
			}
			checkRedacted(t, c.secret, c.excerpt)
		})
	}
}

// chunkSizes returns the chunk sizes from the smallest the scanner
// accepts to one past n.
func chunkSizes(n int) []int {
	var out []int
	for c := 2 * lookbehind; c <= n+1; c++ {
		out = append(out, c)
	}
	return out
}

// checkRedacted fails when secret, or any 8 bytes of it, shows in text.
func checkRedacted(t *testing.T, secret, text string) {
	t.Helper()
	if secret == "" {
		return
	}
	if strings.Contains(text, secret) {
		t.Errorf("%q discloses %q", text, secret)
	}
	for i := 0; i+8 <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+8]) {
			t.Errorf("%q discloses part of a secret: %q", text, secret[i:i+8])
		}
	}
}

func TestScanErrorsRedact(t *testing.T) {
	s := testPrivate().Scanner()
	var all strings.Builder
	var secrets []string
	for _, c := range hitCases() {
		all.WriteString(c.before + c.match + c.after + "\n")
		secrets = append(secrets, c.secret)
	}
	fs := scanWith(t, s, all.String(), defaultChunk)
	if len(fs) < len(hitCases()) {
		t.Fatalf("%d findings in the concatenated cases, want at least %d: %v", len(fs), len(hitCases()), fs)
	}
	err := Err(fs)
	var rej *RejectedError
	if !errors.As(err, &rej) || len(rej.Findings) != len(fs) {
		t.Fatalf("Err = %v, want a *RejectedError with %d findings", err, len(fs))
	}
	msg := err.Error()
	for i, f := range fs {
		if !strings.Contains(msg, f.String()) {
			t.Errorf("the error does not list finding %d, %v", i, f)
		}
	}
	for _, sec := range secrets {
		checkRedacted(t, sec, msg)
	}
	if Err(nil) != nil {
		t.Error("Err(nil) != nil")
	}
}

// TestScanClean lists inputs that look a little like findings and are not.
func TestScanClean(t *testing.T) {
	p := testPrivate()
	p.Temp = "/var/folders/xy/abc123/T" // so that a bare "/tmp" is nobody's
	s := p.Scanner()
	for _, in := range []string{
		"",
		"x",
		// Digests, hashes, identifiers and versions.
		"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		"vexl/_native.so,sha256=n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sF7DwCgg,123456",
		"RECORD hashes: sha256=AKIAabcdefghijklmnopqrstuvwxyz0123456789-_A and sha256=-ghp_abc",
		`"run_id": "123e4567-e89b-12d3-a456-426614174000"`,
		"0.3.0rc1 1!2.0.post3.dev4+local.7 1.0a1",
		"AKIA too short AKIA1234 and ASIA",
		"AKIA" + strings.ToUpper(chars(16, 3)) + "X is too long",
		"xAKIA" + strings.ToUpper(chars(16, 3)),
		"AIza" + chars(36, 1) + " is one too long",
		"gh" + "p_" + chars(35, 1) + " one short",
		"xgh" + "p_" + chars(36, 1) + " inside a word",
		"npm" + "_config_cache",
		"glpat" + "-short",
		"xoxo" + "-indieweb-1.jpg and xoxb-xxxxxxxxx-xxxxxxxxxx",
		"aws_secret_access_key = ${AWS_SECRET}",
		"aws_secret_access_key: " + chars(39, 1),
		"pypi" + "-AgEIcHlwaS5vcmc" + chars(10, 1),
		"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----",
		"the bearer token is short: Bearer abc",
		`f"Bearer {token}" and "Bearer $TOKEN" and Bearer <redacted>`,
		"unbearer" + " " + chars(30, 2),
		// Temporary paths inside words and relative paths.
		"/tmpfs /tmp.old x/tmp/y ../tmp/x ./tmp/z my/tmp/ attmp/ tmp/x",
		"a bare /tmp/ and /var/tmp are no files",
		"/tmp/{work}/x",
		// Placeholders.
		"{tmp}/x ~/x {venv}/bin/python {work}/scratch /home/{user}/x /Users/{user} {host}",
		// Home shapes that are nobody's home, or relative.
		"/Users/Shared/x /home/linuxbrew/.linuxbrew/bin/python3 /home/ /Users/.x C:\\Users\\Public\\x",
		"rootfs /rootfs x/root/y /root.d",
		// The user name inside words, and the host name inside longer names.
		"malice alice said alices /alicea Alice-x (alice) 'alice'",
	} {
		if got := scanWith(t, s, in, defaultChunk); len(got) != 0 {
			t.Errorf("Scan(%q) = %v, want none", in, got)
		}
	}
	// The host name inside longer names (the user name is in these too,
	// so it is left out here).
	host := Private{Host: "alice-mbp"}.Scanner()
	in := "alice-mbp2 xalice-mbp alice-mbp-2 alice-mbp_x"
	if got := scanWith(t, host, in, defaultChunk); len(got) != 0 {
		t.Errorf("Scan(%q) with host alice-mbp = %v, want none", in, got)
	}
	// A host name that is a hex container id, inside digests.
	hex := Private{Host: "3f2a9c1b7d4e"}.Scanner()
	in = "sha256:003f2a9c1b7d4e9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822c"
	if got := scanWith(t, hex, in, defaultChunk); len(got) != 0 {
		t.Errorf("Scan(%q) with host 3f2a9c1b7d4e = %v, want none", in, got)
	}
}

func TestScanTruncates(t *testing.T) {
	in := strings.Repeat("x /home/bob/y\n", maxFindings+50)
	got := scanWith(t, Private{}.Scanner(), in, defaultChunk)
	if len(got) != maxFindings+1 {
		t.Fatalf("%d findings, want %d", len(got), maxFindings+1)
	}
	last := got[maxFindings]
	if last.Kind != KindTruncated || last.Offset != int64(maxFindings*14+2) || last.Excerpt != "50 more findings from here on are not listed" {
		t.Errorf("last finding = %v", last)
	}
}

func TestScanFileAndTree(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	token := "gh" + "p_" + chars(36, 1)
	write("manifest.json", `{"env": {"LANG": "C.UTF-8"}, "python": "{venv}/bin/python"}`+"\n")
	write("correctness/cases.jsonl", `{"id":"a","status":"PASS"}`+"\n"+`{"id":"b","message":"read /home/alice/data"}`+"\n")
	write("correctness/deep/er/log.txt", "token="+token+"\nand /tmp/x\n")
	write("correctness/summary.json", "{}\n")
	write("alice/report.md", "# report\n")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	s := testPrivate().Scanner()

	got, err := s.ScanTree(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{File: "alice", Offset: -1, Kind: KindUserName, Excerpt: "name: {user}"},
		{File: "correctness/cases.jsonl", Offset: 53, Kind: KindHomePath, Excerpt: "~"},
		{File: "correctness/deep/er/log.txt", Offset: 6, Kind: KindGitHubToken, Excerpt: "ghp_[redacted]"},
		// The generic "/tmp/" is longer than this machine's "/tmp", so wins.
		{File: "correctness/deep/er/log.txt", Offset: 51, Kind: KindTempPath, Excerpt: "/tmp/…"},
		{File: "link", Offset: -1, Kind: KindNotRegular, Excerpt: "symbolic link"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScanTree =\n%v\nwant\n%v", got, want)
	}

	fs, err := s.ScanFile(filepath.Join(root, "correctness", "deep", "er", "log.txt"), "log.txt")
	if err != nil || len(fs) != 2 || fs[0].File != "log.txt" {
		t.Errorf("ScanFile = %v, %v", fs, err)
	}
	if _, err := s.ScanFile(filepath.Join(root, "missing"), "missing"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ScanFile(missing) error = %v", err)
	}
	if _, err := s.ScanTree(filepath.Join(root, "manifest.json")); err == nil {
		t.Error("ScanTree(a file) succeeded")
	}
}

// TestScanLargeFile checks offsets past the first chunks and that memory
// does not depend on the file's size.
func TestScanLargeFile(t *testing.T) {
	var b bytes.Buffer
	for b.Len() < 3*defaultChunk {
		b.WriteString(filler())
	}
	off1 := b.Len() - 3 // straddles a chunk boundary somewhere near
	b.Truncate(off1)
	b.WriteString(" /home/bob/x ")
	for b.Len() < 5*defaultChunk+11 {
		b.WriteString(filler())
	}
	b.Truncate(5*defaultChunk + 11)
	block, _ := pemBlock("EC PRIVATE KEY")
	off2 := b.Len() + 1
	b.WriteString("\n" + block)
	s := Private{}.Scanner()
	got := scanWith(t, s, b.String(), defaultChunk)
	want := []Finding{
		{File: "f", Offset: int64(off1 + 1), Kind: KindHomePath, Excerpt: "/home/[redacted]"},
		{File: "f", Offset: int64(off2), Kind: KindPrivateKey, Excerpt: "-----BEGIN EC PRIVATE KEY-----"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Fixed buffers whatever the size: as many allocations with clean
	// text after the file as with four times as much, and a bounded
	// number of them.
	clean := strings.Repeat(filler(), len(b.String())/len(filler()))
	in, longer := b.String()+clean, b.String()+strings.Repeat(clean, 4)
	allocs := testing.AllocsPerRun(3, func() { scanWith(t, s, in, defaultChunk) })
	more := testing.AllocsPerRun(3, func() { scanWith(t, s, longer, defaultChunk) })
	if allocs > 100 || more != allocs {
		t.Errorf("%v allocations per scan, %v with 4 times as much clean text", allocs, more)
	}
}

func TestFindingString(t *testing.T) {
	for _, c := range []struct {
		f    Finding
		want string
	}{
		{Finding{File: "a/b", Offset: 12, Kind: KindNPMToken, Excerpt: "npm_[redacted]"}, "a/b: offset 12: npm-token: npm_[redacted]"},
		{Finding{File: "link", Offset: -1, Kind: KindNotRegular, Excerpt: "symbolic link"}, "link: not-regular-file: symbolic link"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.f, got, c.want)
		}
	}
}

// TestScannerConcurrent runs one Scanner from several goroutines (run
// with -race).
func TestScannerConcurrent(t *testing.T) {
	s := testPrivate().Scanner()
	var in strings.Builder
	for _, c := range hitCases() {
		in.WriteString(c.before + c.match + c.after + "\n")
	}
	want := scanWith(t, s, in.String(), defaultChunk)
	done := make(chan []Finding)
	for range 4 {
		go func() {
			fs, _ := s.Scan(strings.NewReader(in.String()), "f")
			done <- fs
		}()
	}
	for range 4 {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Errorf("concurrent Scan = %v, want %v", got, want)
		}
	}
}
