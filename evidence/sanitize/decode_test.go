package sanitize

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// kindsOf returns the kinds of findings, in order.
func kindsOf(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

// Runs of base64 and hex digits are found where they are, whatever
// surrounds them, and decoded at the right alignment.
func TestScanDecodesRuns(t *testing.T) {
	s := testPrivate().Scanner()
	gh := "gh" + "p_" + chars(36, 1)
	b64 := base64.StdEncoding.EncodeToString([]byte("token=" + gh))
	url := base64.RawURLEncoding.EncodeToString([]byte("host alice-mbp.local"))
	hx := hex.EncodeToString([]byte("cwd /srv/scratch/mk-1/x"))
	for _, c := range []struct {
		name, in string
		at       int
		kind     string
		decoded  string
	}{
		{"base64", `{"m":"` + b64 + `"}`, 6, KindGitHubToken, "base64"},
		{"base64 after letters", "id" + b64 + " rest", 0, KindGitHubToken, "base64"},
		{"base64 wrapped", "key:\n" + b64[:12] + "\r\n" + b64[12:24] + "\n" + b64[24:] + "\n", 5, KindGitHubToken, "base64"},
		{"base64 wrapped in JSON", `{"m":"` + b64[:16] + `\n` + b64[16:] + `"}`, 6, KindGitHubToken, "base64"},
		{"URL-safe base64", "x=" + url + "&y", 2, KindHostName, "base64"},
		{"hex", "data " + hx, 5, KindPrivatePath, "hex"},
		{"hex upper case after a hex digit", "f" + strings.ToUpper(hx), 0, KindPrivatePath, "hex"},
		{"hex in base64", base64.StdEncoding.EncodeToString([]byte(hx)), 0, KindPrivatePath, "hex in base64"},
		{"base64 in base64", base64.StdEncoding.EncodeToString([]byte(b64)), 0, KindGitHubToken, "base64 in base64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := []Finding{{File: "f", Offset: int64(c.at), Kind: c.kind, Excerpt: map[string]string{KindGitHubToken: "ghp_[redacted]",
				KindHostName: "{host}", KindPrivatePath: "{work}", KindHomePath: "~"}[c.kind], Decoded: c.decoded}}
			for _, chunk := range []int{defaultChunk, 16, 17, 23} {
				if got := scanWith(t, s, c.in, chunk); !reflect.DeepEqual(got, want) {
					t.Fatalf("chunk %d: Scan(%q) =\n%v\nwant\n%v", chunk, c.in, got, want)
				}
			}
		})
	}
}

// What a run decodes to is normalised too: a home path written with
// escaped slashes in base64 is found (its user name is found as it is).
func TestScanDecodesEscapedTextInRun(t *testing.T) {
	in := base64.StdEncoding.EncodeToString([]byte(`path \/home\/alice\/x`))
	got := scanWith(t, testPrivate().Scanner(), in, defaultChunk)
	want := []Finding{
		{File: "f", Offset: 0, Kind: KindHomePath, Excerpt: "~", Decoded: "escape sequences decoded in base64"},
		{File: "f", Offset: 0, Kind: KindUserName, Excerpt: "{user}", Decoded: "base64"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scan(%q) =\n%v\nwant\n%v", in, got, want)
	}
}

// A run longer than a segment is decoded whole, in overlapping segments:
// a finding at its end and one across a segment boundary are found.
func TestScanDecodesLongRun(t *testing.T) {
	gh := "gh" + "p_" + chars(36, 2)
	var plain strings.Builder
	for plain.Len() < 3*runSegment/4*3 {
		plain.WriteString("lorem ipsum dolor sit amet, ")
	}
	// A token across the first boundary (the first segment decodes to
	// runSegment*3/4 bytes), and one at the end.
	text := plain.String()
	cut := runSegment*3/4 - 20
	text = text[:cut] + " " + gh + " " + text[cut:] + " " + gh
	b64 := base64.StdEncoding.EncodeToString([]byte(text))
	got := scanWith(t, Private{}.Scanner(), "blob: "+b64+"\n", defaultChunk)
	want := []Finding{{File: "f", Offset: 6, Kind: KindGitHubToken, Excerpt: "ghp_[redacted]", Decoded: "base64"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Each token alone, so that neither hides the other in the one
	// finding per offset and kind.
	for _, txt := range []string{text[:cut+len(gh)+5], plain.String() + " " + gh} {
		b := base64.StdEncoding.EncodeToString([]byte(txt))
		if got := scanWith(t, Private{}.Scanner(), b, defaultChunk); len(got) != 1 {
			t.Errorf("%d bytes of base64: %v, want one finding", len(b), got)
		}
	}
}

// Digests, hashes, identifiers and words decode to nothing.
func TestScanRunsClean(t *testing.T) {
	s := testPrivate().Scanner()
	for _, in := range []string{
		strings.Repeat("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", 8),
		"n4bQgYhMfWWaL-qgxVrQFaO_TxsrC4Is0V1sF7DwCgg n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sF7DwCgg==",
		"123e4567-e89b-12d3-a456-426614174000 conv2d/fp32/case-0000001 cpython-312-x86_64-linux-gnu",
		"correctness tolerance max_abs_err site-packages AAAAAAAAAAAAAAAA ================",
		base64.StdEncoding.EncodeToString([]byte("a clean message about /tmpfs and {tmp}/x")),
		hex.EncodeToString([]byte("a clean message about {venv}/bin/python")),
	} {
		if got := scanWith(t, s, in, defaultChunk); len(got) != 0 {
			t.Errorf("Scan(%q) = %v, want none", in, got)
		}
	}
}

// DER-encoded private keys are found, in the bytes and in base64 or hex;
// public keys and certificates are not.
func TestScanFindsDERKeys(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	must := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s := Private{}.Scanner()
	for _, c := range []struct {
		name, excerpt string
		der           []byte
	}{
		{"PKCS #8 RSA", "DER private key (PKCS #8)", must(x509.MarshalPKCS8PrivateKey(rsaKey))},
		{"PKCS #8 EC", "DER private key (PKCS #8)", must(x509.MarshalPKCS8PrivateKey(ecKey))},
		{"PKCS #8 Ed25519", "DER private key (PKCS #8)", must(x509.MarshalPKCS8PrivateKey(edKey))},
		{"PKCS #1 RSA", "DER RSA private key (PKCS #1)", x509.MarshalPKCS1PrivateKey(rsaKey)},
		{"SEC 1 EC", "DER EC private key (SEC 1)", must(x509.MarshalECPrivateKey(ecKey))},
	} {
		for _, enc := range []struct {
			name, decoded string
			text          string
		}{
			{"as it is", "", string(c.der)},
			{"base64", "base64", base64.StdEncoding.EncodeToString(c.der)},
			{"wrapped base64 in JSON", "base64", strings.Join(strings.SplitAfter(base64.StdEncoding.EncodeToString(c.der), "x"), `\n`)},
			{"hex", "hex", hex.EncodeToString(c.der)},
		} {
			// A PKCS #8 key holds the PKCS #1 or SEC 1 key: found too, at
			// its own offset in the bytes as they are. The offset of a key
			// in the bytes is that of its version, after the SEQUENCE
			// header (2 to 4 bytes); of one in a run, the run's.
			got := scanWith(t, s, "k="+enc.text, defaultChunk)
			at := int64(2)
			if enc.decoded == "" {
				at += map[byte]int64{0x81: 3, 0x82: 4}[c.der[1]]
				if c.der[1] < 0x80 {
					at += 2
				}
			}
			if len(got) == 0 || got[0].Offset != at || got[0].Kind != KindPrivateKey || got[0].Excerpt != c.excerpt || got[0].Decoded != enc.decoded {
				t.Errorf("%s %s: %v, want a %q finding at %d (decoded %q)", c.name, enc.name, got, c.excerpt, at, enc.decoded)
			}
		}
	}
	for name, der := range map[string][]byte{
		"RSA public key": must(x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)),
		"EC public key":  must(x509.MarshalPKIXPublicKey(&ecKey.PublicKey)),
		"PKCS #1 public": x509.MarshalPKCS1PublicKey(&rsaKey.PublicKey),
	} {
		for _, text := range []string{string(der), base64.StdEncoding.EncodeToString(der), hex.EncodeToString(der)} {
			if got := scanWith(t, s, text, defaultChunk); len(got) != 0 {
				t.Errorf("%s: %v, want none", name, got)
			}
		}
	}
}

// The key formats that are no PEM block.
func TestScanFindsKeyFiles(t *testing.T) {
	s := Private{}.Scanner()
	for _, c := range []struct{ in, excerpt string }{
		{"openssh-key-v1\x00\x00\x00\x00\x04none", "OpenSSH private key"},
		{base64.StdEncoding.EncodeToString([]byte("openssh-key-v1\x00\x00\x00\x00\x04none\x00\x00")), "OpenSSH private key"},
		{"PuTTY-User-Key-File-3: ssh-ed25519\n", "PuTTY private key"},
		{"AGE-SECRET-KEY-1" + strings.ToUpper(chars(58, 3)), "age secret key"},
	} {
		got := scanWith(t, s, c.in, defaultChunk)
		if len(got) != 1 || got[0].Excerpt != c.excerpt {
			t.Errorf("Scan(%q) = %v, want one %q", c.in, got, c.excerpt)
		}
	}
	for _, in := range []string{"PuTTY-User-Key-File-x", "AGE-SECRET-KEY-1 short", "openssh-key-v1 (no NUL)"} {
		if got := scanWith(t, s, in, defaultChunk); len(got) != 0 {
			t.Errorf("Scan(%q) = %v, want none", in, got)
		}
	}
}

// The secrets of the environment: which variables, and their values
// found anywhere, by pieces when long, never shown.
func TestEnvSecrets(t *testing.T) {
	long := strings.Repeat(chars(40, 5), 10) // 400 bytes
	got := EnvSecrets([]string{
		"MKRELEASE_KEY_PASSWORD=hunter2hunter2", "GITHUB_TOKEN=" + "gh" + "p_" + chars(36, 1), "AWS_SECRET_ACCESS_KEY=" + chars(40, 2),
		"NPM_AUTH=npm-auth-value", "TWINE_PASSWORD=pypi-pass-word", "DB_PASSWD=secretpasswd", "GPG_PASSPHRASE=a long passphrase",
		"GOOGLE_APPLICATION_CREDENTIALS=/home/alice/gcloud.json", "service_api_key=lowercase-name", "BIG_SECRET=" + long,
		// Left out: no secret in the name, too short, a number or a version,
		// an author, no value.
		"PATH=/usr/bin:/bin", "HOME=/home/alice", "API_TOKEN=short", "KEY_ID=123456789", "SIGNING_KEY_VERSION=1.2.3-45",
		"GIT_AUTHOR_NAME=Alice Example", "EMPTY_TOKEN=", "NOEQUALS_TOKEN", "PIP_KEYRING_PROVIDER=subprocess",
		"TOKENIZERS_PARALLELISM=false-ish", "XKB_KEYMAP_FILE=/etc/keymap", "KEYBOARD_LAYOUT=us-intl-altgr",
	})
	want := []string{"AWS_SECRET_ACCESS_KEY", "BIG_SECRET", "DB_PASSWD", "GITHUB_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "GPG_PASSPHRASE",
		"MKRELEASE_KEY_PASSWORD", "NPM_AUTH", "TWINE_PASSWORD", "service_api_key"}
	var names []string
	for k := range got {
		names = append(names, k)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("EnvSecrets names = %v, want %v", names, want)
	}
	s := Private{Secrets: got}.Scanner()
	for _, c := range []struct{ in, excerpt string }{
		{"password hunter2hunter2 in a message", "$MKRELEASE_KEY_PASSWORD=[redacted]"},
		{"xxnpm-auth-valuexx", "$NPM_AUTH=[redacted]"},
		{`{"m":"` + base64.StdEncoding.EncodeToString([]byte("pw=secretpasswd")) + `"}`, "$DB_PASSWD=[redacted]"},
		{"a piece: " + long[150:260], "$BIG_SECRET=[redacted]"},
	} {
		fs := scanWith(t, s, c.in, defaultChunk)
		if len(fs) != 1 || fs[0].Kind != KindEnvSecret || fs[0].Excerpt != c.excerpt {
			t.Errorf("Scan(%q) = %v, want one %s", c.in, fs, c.excerpt)
		}
		for _, v := range got {
			checkRedacted(t, v, Err(fs).Error())
		}
	}
	if fs := scanWith(t, s, "hunter2 and a short piece "+long[:60], defaultChunk); len(fs) != 0 {
		t.Errorf("parts of secrets found: %v", fs)
	}
}

// JSON strings of one key in consecutive records are joined; other
// strings are not.
func TestScanJoinsJSONStrings(t *testing.T) {
	s := testPrivate().Scanner()
	gh := "gh" + "p_" + chars(36, 4)
	b64 := base64.StdEncoding.EncodeToString([]byte("token " + gh + " end"))
	lines := func(vals ...string) string {
		var b strings.Builder
		for i, v := range vals {
			fmt.Fprintf(&b, `{"id":"case-%d","status":"PASS","message":%q,"metrics":{"m%d":1}}`+"\n", i, v, i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, in string
		kind     string
	}{
		{"token in two records", lines("ok", gh[:15], gh[15:], "ok"), KindGitHubToken},
		{"token in three records", lines(gh[:10], gh[10:25], gh[25:]), KindGitHubToken},
		{"host in two records", lines("on alice-", "mbp.local"), KindHostName},
		{"path in two records", lines("cd /srv/scra", "tch/mk-1/x"), KindPrivatePath},
		{"base64 in two records", lines(b64[:21], b64[21:]), KindGitHubToken},
		{"hex in two records", lines(hex.EncodeToString([]byte(gh))[:33], hex.EncodeToString([]byte(gh))[33:]), KindGitHubToken},
		{"token in keys of one object", `{"metrics":{"` + gh[:20] + `":1,"` + gh[20:] + `":2}}`, KindGitHubToken},
		{"token in an array's items", `{"failing":[{"id":"` + gh[:12] + `"},{"id":"` + gh[12:] + `"}]}`, KindGitHubToken},
		{"escaped halves", lines(`\u0067hp_`+chars(10, 4), chars(26, 14)), KindGitHubToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := scanWith(t, s, c.in, defaultChunk)
			if !slices.Contains(kindsOf(got), c.kind) {
				t.Fatalf("Scan(%q) = %v, want a %s", c.in, got, c.kind)
			}
			for _, f := range got {
				if f.Kind == c.kind && !strings.Contains(f.Decoded, "joined") {
					t.Errorf("finding %v not in joined strings", f)
				}
			}
			if small := scanWith(t, s, c.in, 16); !reflect.DeepEqual(small, got) {
				t.Errorf("with chunk 16:\n%v\nwant\n%v", small, got)
			}
		})
	}
	// Different keys, or not JSON: not joined.
	for _, in := range []string{
		`{"a":"` + gh[:15] + `","b":"` + gh[15:] + `"}`,
		"text " + gh[:15] + "\n" + gh[15:] + "\n",
		lines("ok", "case-"+gh[:2], "ok"),
		// A listing of paths spells another machine's home or temporary
		// path at each join: those shapes are not looked for across joins.
		`[{"path":"/home"},{"path":"/lib"},{"path":"/var/tmp"},{"path":"/x"},{"path":"/opt"},{"path":"/cache"}]`,
	} {
		if got := scanWith(t, s, in, defaultChunk); len(got) != 0 {
			t.Errorf("Scan(%q) = %v, want none", in, got)
		}
	}
}
