package sanitize

import (
	"slices"
	"sort"
	"strings"
)

// Finding kinds. The package documentation gives each pattern.
const (
	// KindPrivateKey is a private key: a PEM header, a DER-encoded key
	// (PKCS #8, PKCS #1, SEC 1, encrypted PKCS #8), an OpenSSH key's
	// binary form, a PuTTY key file or an age secret key.
	KindPrivateKey = "private-key"
	// KindAWSAccessKeyID is an AWS access key id (AKIA…, ASIA…).
	KindAWSAccessKeyID = "aws-access-key-id"
	// KindAWSSecretKey is a value assigned to aws_secret_access_key.
	KindAWSSecretKey = "aws-secret-access-key"
	// KindGitHubToken is a GitHub token (ghp_, gho_, ghu_, ghs_, ghr_,
	// github_pat_).
	KindGitHubToken = "github-token"
	// KindGitLabToken is a GitLab token (glpat-, gldt-, glrt-).
	KindGitLabToken = "gitlab-token"
	// KindSlackToken is a Slack token (xoxb-, xoxp-, …).
	KindSlackToken = "slack-token"
	// KindGoogleAPIKey is a Google API key (AIza…).
	KindGoogleAPIKey = "google-api-key"
	// KindBearerToken is a long token after "Bearer".
	KindBearerToken = "bearer-token"
	// KindNPMToken is an npm access token (npm_…).
	KindNPMToken = "npm-token"
	// KindPyPIToken is a PyPI API token (pypi-AgEIcHlwaS5vcmc…).
	KindPyPIToken = "pypi-token"
	// KindHomePath is this machine's home folder or any machine's
	// /home/NAME, /Users/NAME, C:\Users\NAME or /root.
	KindHomePath = "home-path"
	// KindTempPath is this machine's temporary folder or a path inside
	// any machine's /tmp, /var/tmp or /var/folders.
	KindTempPath = "temp-path"
	// KindPrivatePath is one of the run's private folders.
	KindPrivatePath = "private-path"
	// KindUserName is this machine's user name in a path or identifier.
	KindUserName = "user-name"
	// KindHostName is this machine's host name.
	KindHostName = "host-name"
	// KindEnvSecret is the value of a variable of the environment whose
	// name says it holds a secret (see [Private.Secrets]).
	KindEnvSecret = "environment-secret"
	// KindNotRegular is a staged entry that is neither a folder nor a
	// regular file (a symbolic link, a device, a pipe): it is not scanned
	// and is a finding of its own.
	KindNotRegular = "not-regular-file"
	// KindTruncated stands for the findings of a file past the first
	// maxFindings; its excerpt says how many.
	KindTruncated = "more-findings"
)

// rule is one pattern. The matcher finds one of its literals (the
// anchors) at a position and calls match, which judges the bytes around:
// w.before holds up to lookbehind bytes before the literal (fewer only at
// the start of the input) and w.b the bytes from the literal on, at most
// reach of them (fewer only at the end of the input). So a rule must
// never need more than reach bytes: that bound is what makes a match
// across a chunk boundary come out the same as one inside a chunk.
type rule struct {
	kind string
	lits []string
	fold bool // the literals match in any ASCII case
	// reach bounds the bytes match may read from the start of the literal,
	// the byte after a match that must end at a boundary included.
	reach int
	// match returns the length of the match from the literal's start and
	// its redacted excerpt.
	match func(w window, lit string) (n int, excerpt string, ok bool)
	// For private values: the placeholder String writes instead of the
	// match.
	placeholder string
}

// window is the part of the input a rule may look at; see rule.
type window struct {
	before []byte
	b      []byte
}

// prev returns the k-th byte before the literal (1 is the one just
// before), or -1 before the start of the input.
func (w window) prev(k int) int {
	if k > len(w.before) {
		return -1
	}
	return int(w.before[len(w.before)-k])
}

// at returns the byte at offset j from the literal's start, or -1 past the
// end of the input.
func (w window) at(j int) int {
	if j >= len(w.b) {
		return -1
	}
	return int(w.b[j])
}

// run counts the bytes from offset j on that satisfy class, up to limit.
func (w window) run(j, limit int, class func(byte) bool) int {
	n := 0
	for n < limit && j+n < len(w.b) && class(w.b[j+n]) {
		n++
	}
	return n
}

// Byte classes.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlpha(c byte) bool { c |= 0x20; return 'a' <= c && c <= 'z' }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }

func isUpperAlnum(c byte) bool { return isDigit(c) || 'A' <= c && c <= 'Z' }
func isWord(c byte) bool       { return isAlnum(c) || c == '_' }
func isB64URL(c byte) bool     { return isAlnum(c) || c == '_' || c == '-' }
func isB64Std(c byte) bool     { return isAlnum(c) || c == '+' || c == '/' }
func isSlack(c byte) bool      { return isAlnum(c) || c == '-' }
func isToken68(c byte) bool    { return isAlnum(c) || strings.IndexByte("-._~+/", c) >= 0 }
func isHostByte(c byte) bool   { return isAlnum(c) || c == '-' || c == '_' }
func isQuoteSpace(c byte) bool { return strings.IndexByte(" \t\"'`", c) >= 0 }
func isBlank(c byte) bool      { return c == ' ' || c == '\t' }
func isTextByte(c byte) bool   { return c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r' }
func isHeaderByte(c byte) bool { return isAlnum(c) || c == ' ' || c == '.' || c == '_' }

// isNameByte reports the bytes that may continue a file name: a path
// value only matches where the byte after it is not one, so "/tmp" is not
// found in "/tmpfs" or "/tmp.old".
func isNameByte(c byte) bool {
	return isAlnum(c) || c >= 0x80 || strings.IndexByte("._-+@~", c) >= 0
}

// not reports whether byte c (-1: none) is absent or outside class.
func not(c int, class func(byte) bool) bool { return c < 0 || !class(byte(c)) }

// pathStart reports whether an absolute path may start where w's literal
// does: at the start of the input, or after a byte that cannot be part of
// a file name or a relative path ("x/tmp" and "../tmp" are relative), or
// after the "://" of a URL ("file:///tmp/x").
func pathStart(w window) bool {
	switch c := w.prev(1); {
	case c < 0:
		return true
	case c == '/':
		return w.prev(2) == '/' && w.prev(3) == ':'
	case c == '\\':
		return false
	default:
		return !isNameByte(byte(c))
	}
}

// tokenSpec describes a token that is a fixed prefix and a body.
type tokenSpec struct {
	kind string
	lits []string
	body func(byte) bool // the body's bytes
	n    int             // the body's length: at least n, exactly n if exact
	// exact: the byte after the n body bytes must not be a body byte.
	exact bool
	// word: the byte before the prefix must not be one of these (and,
	// with exact, nor the byte after the body).
	word func(byte) bool
}

func tokenRule(s tokenSpec) *rule {
	reach := 0
	for _, l := range s.lits {
		reach = max(reach, len(l)+s.n+1)
	}
	return &rule{kind: s.kind, lits: s.lits, reach: reach,
		match: func(w window, lit string) (int, string, bool) {
			if !not(w.prev(1), s.word) || w.run(len(lit), s.n, s.body) < s.n {
				return 0, "", false
			}
			if s.exact {
				if c := w.at(len(lit) + s.n); !not(c, s.body) || !not(c, s.word) {
					return 0, "", false
				}
			}
			return len(lit) + s.n, lit + "[redacted]", true
		}}
}

// credentialRules returns the credential patterns; the package
// documentation lists them with their sources.
func credentialRules() []*rule {
	return []*rule{
		privateKeyRule(),
		derKeyRule(),
		encryptedDERKeyRule(),
		keyFileRule(),
		tokenRule(tokenSpec{kind: KindAWSAccessKeyID, lits: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
			body: isUpperAlnum, n: 16, exact: true, word: isAlnum}),
		awsSecretRule(),
		tokenRule(tokenSpec{kind: KindGitHubToken, lits: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
			body: isAlnum, n: 36, word: isAlnum}),
		tokenRule(tokenSpec{kind: KindGitHubToken, lits: []string{"github_pat_"},
			body: isWord, n: 82, word: isAlnum}),
		tokenRule(tokenSpec{kind: KindGitLabToken, lits: []string{"glpat-", "gldt-", "glrt-"},
			body: isB64URL, n: 20, word: isAlnum}),
		slackRule(),
		tokenRule(tokenSpec{kind: KindGoogleAPIKey, lits: []string{"AIza"},
			body: isB64URL, n: 35, exact: true, word: isB64URL}),
		bearerRule(),
		tokenRule(tokenSpec{kind: KindNPMToken, lits: []string{"npm_"},
			body: isAlnum, n: 36, word: isAlnum}),
		tokenRule(tokenSpec{kind: KindPyPIToken, lits: []string{"pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"},
			body: isB64URL, n: 50, word: isAlnum}),
	}
}

// privateKeyRule: "-----BEGIN ", then up to 64 letters, digits, spaces, dots
// and underscores
// ending in "PRIVATE KEY" or "PRIVATE KEY BLOCK", then "-----". The
// excerpt is the header line, which names the key type and holds no
// secret.
func privateKeyRule() *rule {
	const maxType = 64
	return &rule{kind: KindPrivateKey, lits: []string{"-----BEGIN "}, fold: true, reach: len("-----BEGIN ") + maxType + len("-----"),
		match: func(w window, lit string) (int, string, bool) {
			n := w.run(len(lit), maxType, isHeaderByte)
			typ := strings.ToUpper(string(w.b[len(lit) : len(lit)+n]))
			if !strings.HasSuffix(typ, "PRIVATE KEY") && !strings.HasSuffix(typ, "PRIVATE KEY BLOCK") {
				return 0, "", false
			}
			end := len(lit) + n
			if end+5 > len(w.b) || string(w.b[end:end+5]) != "-----" {
				return 0, "", false
			}
			return end + 5, "-----BEGIN " + typ + "-----", true
		}}
}

// derSequenceBefore reports whether the bytes just before w's literal
// end a DER SEQUENCE header (30 and a short or long form length), as the
// start of a DER-encoded key does.
func derSequenceBefore(w window) bool {
	switch {
	case w.prev(2) == 0x30 && w.prev(1) >= 0 && w.prev(1) < 0x80:
		return true
	case w.prev(3) == 0x30 && w.prev(2) == 0x81:
		return true
	case w.prev(4) == 0x30 && w.prev(3) == 0x82:
		return true
	case w.prev(5) == 0x30 && w.prev(4) == 0x83:
		return true
	}
	return false
}

// keyAlgorithms are the DER contents of the object identifiers of the
// key algorithms a PKCS #8 private key names: rsaEncryption, RSASSA-PSS,
// id-ecPublicKey, id-dsa, X25519, Ed25519, X448, Ed448.
var keyAlgorithms = []string{
	"\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", "\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0a",
	"\x2a\x86\x48\xce\x3d\x02\x01", "\x2a\x86\x48\xce\x38\x04\x01",
	"\x2b\x65\x6e", "\x2b\x65\x70", "\x2b\x65\x6f", "\x2b\x65\x71",
}

// derKeyRule finds DER-encoded private keys by the start of their
// structure, after the outer SEQUENCE header:
//
//	PKCS #8   02 01 00|01 (version) 30 LL 06 LL <key algorithm OID>
//	PKCS #1   02 01 00 (version) 02 81|82 LL.. 00 (the modulus, high bit set)
//	SEC 1     02 01 01 (version) 04 LL (the key, 24 to 66 bytes) .. A0|A1
//
// The excerpt names the format.
func derKeyRule() *rule {
	const pkcs8v1, pkcs8v2, pkcs1, sec1 = "\x02\x01\x00\x30", "\x02\x01\x01\x30", "\x02\x01\x00\x02", "\x02\x01\x01\x04"
	return &rule{kind: KindPrivateKey, lits: []string{pkcs8v1, pkcs8v2, pkcs1, sec1}, reach: 5 + 0x42 + 2,
		match: func(w window, lit string) (int, string, bool) {
			if !derSequenceBefore(w) {
				return 0, "", false
			}
			switch lit {
			case pkcs8v1, pkcs8v2:
				if l := w.at(4); l < 0 || l >= 0x80 || w.at(5) != 0x06 {
					return 0, "", false
				}
				n := w.at(6)
				if n < 3 || 7+n > len(w.b) {
					return 0, "", false
				}
				for _, oid := range keyAlgorithms {
					if string(w.b[7:7+n]) == oid {
						return 7 + n, "DER private key (PKCS #8)", true
					}
				}
			case pkcs1:
				first := 0
				switch w.at(4) {
				case 0x81:
					first = 6
				case 0x82:
					first = 7
				default:
					return 0, "", false
				}
				if w.at(first) == 0x00 && w.at(first+1) >= 0x80 {
					return first + 2, "DER RSA private key (PKCS #1)", true
				}
			case sec1:
				n := w.at(4)
				if n < 0x18 || n > 0x42 {
					return 0, "", false
				}
				if t := w.at(5 + n); t == 0xA0 || t == 0xA1 {
					return 5 + n + 1, "DER EC private key (SEC 1)", true
				}
			}
			return 0, "", false
		}}
}

// encryptedDERKeyRule finds a DER-encoded encrypted private key
// (PKCS #8 EncryptedPrivateKeyInfo) by the object identifier of its
// encryption, PBES2 or a PKCS #12 password-based scheme, as the first
// thing in the key: after the headers of the outer SEQUENCE and of the
// algorithm's.
func encryptedDERKeyRule() *rule {
	const pbes2, pkcs12 = "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d", "\x06\x0a\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01"
	return &rule{kind: KindPrivateKey, lits: []string{pbes2, pkcs12}, reach: len(pkcs12) + 1,
		match: func(w window, lit string) (int, string, bool) {
			if w.prev(2) != 0x30 || w.prev(1) < 0 || w.prev(1) >= 0x80 {
				return 0, "", false
			}
			switch {
			case w.prev(4) == 0x30 && w.prev(3) >= 0 && w.prev(3) < 0x80,
				w.prev(5) == 0x30 && w.prev(4) == 0x81,
				w.prev(6) == 0x30 && w.prev(5) == 0x82,
				w.prev(7) == 0x30 && w.prev(6) == 0x83:
				return len(lit), "DER encrypted private key (PKCS #8)", true
			}
			return 0, "", false
		}}
}

// keyFileRule finds the key formats that are no PEM block: an OpenSSH
// private key's binary form ("openssh-key-v1" and a NUL, what its PEM
// body decodes to), a PuTTY key file ("PuTTY-User-Key-File-" and a
// version digit) and an age secret key ("AGE-SECRET-KEY-1" and at least
// 50 more of its upper-case Bech32 characters).
func keyFileRule() *rule {
	const openssh, putty, age = "openssh-key-v1\x00", "PuTTY-User-Key-File-", "AGE-SECRET-KEY-1"
	return &rule{kind: KindPrivateKey, lits: []string{openssh, putty, age}, reach: len(age) + 50 + 1,
		match: func(w window, lit string) (int, string, bool) {
			switch lit {
			case openssh:
				return len(lit), "OpenSSH private key", true
			case putty:
				if c := w.at(len(lit)); c >= 0 && isDigit(byte(c)) {
					return len(lit) + 1, "PuTTY private key", true
				}
			case age:
				if w.run(len(lit), 50, isUpperAlnum) == 50 {
					return len(lit) + 50, "age secret key", true
				}
			}
			return 0, "", false
		}}
}

// secretRules returns a rule per secret of the environment (name →
// value, see [Private.Secrets]): the value is found anywhere, whatever
// the bytes around it. A value longer than 2·secretPiece bytes is found
// by any of its pieces of secretPiece bytes (the first maxSecretPieces
// of them and the last). The excerpt names the variable, never the
// value.
func secretRules(secrets map[string]string) []*rule {
	names := make([]string, 0, len(secrets))
	for k := range secrets {
		names = append(names, k)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	var rules []*rule
	for _, name := range names {
		var lits []string
		reach := 0
		for _, l := range secretPieces(secrets[name]) {
			if !seen[l] {
				seen[l] = true
				lits = append(lits, l)
				reach = max(reach, len(l)+1)
			}
		}
		if len(lits) == 0 {
			continue
		}
		excerpt := "$" + name[:min(len(name), 64)] + "=[redacted]"
		rules = append(rules, &rule{kind: KindEnvSecret, lits: lits, reach: reach,
			match: func(_ window, lit string) (int, string, bool) { return len(lit), excerpt, true }})
	}
	return rules
}

// Secrets shorter than minSecret bytes are not searched (they would be
// found in ordinary text); longer ones by pieces.
const (
	minSecret       = 8
	secretPiece     = 64
	maxSecretPieces = 16
)

// secretPieces returns what a secret value is searched for.
func secretPieces(v string) []string {
	if !isSecretValue(v) {
		return nil
	}
	if len(v) <= 2*secretPiece {
		return []string{v}
	}
	var out []string
	for i := 0; i+secretPiece <= len(v) && len(out) < maxSecretPieces; i += secretPiece {
		out = append(out, v[i:i+secretPiece])
	}
	return append(out, v[len(v)-secretPiece:])
}

// isSecretValue reports whether v is worth searching as a secret: at
// least minSecret bytes, and not a number or a version (digits, dots,
// dashes, blanks), which ordinary evidence is full of.
func isSecretValue(v string) bool {
	if len(v) < minSecret {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && c != '.' && c != '-' && c != '+' && c != ' ' && c != ':' {
			return true
		}
	}
	return false
}

// awsSecretRule: "aws_secret_access_key" in any case, then optional quotes
// and blanks, ":" or "=" (or ":=", "=>", "=="), optional quotes and blanks,
// then exactly 40 bytes of [A-Za-z0-9/+] not followed by another of them
// or "=".
func awsSecretRule() *rule {
	const lit0, pad, secret = "aws_secret_access_key", 8, 40
	return &rule{kind: KindAWSSecretKey, lits: []string{lit0}, fold: true, reach: len(lit0) + pad + 2 + pad + secret + 1,
		match: func(w window, lit string) (int, string, bool) {
			j := len(lit)
			j += w.run(j, pad, isQuoteSpace)
			if c := w.at(j); c != ':' && c != '=' {
				return 0, "", false
			}
			j++
			if c := w.at(j); c == '=' || c == '>' {
				j++
			}
			j += w.run(j, pad, isQuoteSpace)
			if w.run(j, secret, isB64Std) < secret {
				return 0, "", false
			}
			if c := w.at(j + secret); c == '=' || !not(c, isB64Std) {
				return 0, "", false
			}
			return j + secret, string(w.b[:len(lit)]) + "=[redacted]", true
		}}
}

// slackRule: "xox" and one of a b e o p r s, "-", a digit, then at least 19
// more of [A-Za-z0-9-]; not preceded by a letter or digit.
func slackRule() *rule {
	var lits []string
	for _, c := range "abeoprs" {
		lits = append(lits, "xox"+string(c)+"-")
	}
	const n = 20
	return &rule{kind: KindSlackToken, lits: lits, reach: 5 + n,
		match: func(w window, lit string) (int, string, bool) {
			if !not(w.prev(1), isAlnum) || w.run(len(lit), 1, isDigit) == 0 || w.run(len(lit), n, isSlack) < n {
				return 0, "", false
			}
			return len(lit) + n, lit + "[redacted]", true
		}}
}

// bearerRule: "bearer" in any case, not preceded by a letter or digit,
// one to eight blanks, then at least 20 bytes of an RFC 6750 token68
// ([A-Za-z0-9-._~+/]).
func bearerRule() *rule {
	const blanks, n = 8, 20
	return &rule{kind: KindBearerToken, lits: []string{"bearer"}, fold: true, reach: len("bearer") + blanks + n,
		match: func(w window, lit string) (int, string, bool) {
			if !not(w.prev(1), isAlnum) {
				return 0, "", false
			}
			j := len(lit)
			s := w.run(j, blanks, isBlank)
			if s == 0 || w.run(j+s, n, isToken68) < n {
				return 0, "", false
			}
			return j + s + n, string(w.b[:len(lit)]) + " [redacted]", true
		}}
}

// genericRules returns the shapes of home and temporary paths of any
// machine.
func genericRules() []*rule {
	const maxName = 64
	temp := &rule{kind: KindTempPath,
		lits: []string{"/tmp/", "/var/tmp/", "/var/folders/", "/private/tmp/", "/private/var/tmp/", "/private/var/folders/"},
		match: func(w window, lit string) (int, string, bool) {
			if !pathStart(w) || not(w.at(len(lit)), isNameByte) {
				return 0, "", false
			}
			return len(lit), lit + "…", true
		}}
	temp.reach = len("/private/var/folders/") + 1
	home := &rule{kind: KindHomePath, lits: []string{"/home/", "/Users/", `\Users\`}, reach: len("/Users/") + 1 + maxName + 1,
		match: func(w window, lit string) (int, string, bool) {
			j := len(lit)
			if lit[0] == '\\' {
				// C:\Users\name, or C:\\Users\\name escaped in JSON.
				if !not(w.prev(1), isNameByte) {
					return 0, "", false
				}
				if w.at(j) == '\\' {
					j++
				}
			} else if !pathStart(w) {
				return 0, "", false
			}
			if c := w.at(j); c < 0 || !isWord(byte(c)) {
				return 0, "", false
			}
			n := w.run(j, maxName+1, isNameByte)
			name := string(w.b[j : j+n])
			switch {
			case lit == "/home/" && name == "linuxbrew",
				lit == "/Users/" && name == "Shared",
				lit == `\Users\` && (name == "Public" || name == "Default"):
				return 0, "", false // system folders, nobody's home
			}
			return j + min(n, maxName), lit + "[redacted]", true
		}}
	root := &rule{kind: KindHomePath, lits: []string{"/root"}, reach: len("/root") + 1,
		match: func(w window, lit string) (int, string, bool) {
			if !pathStart(w) || !not(w.at(len(lit)), isNameByte) {
				return 0, "", false
			}
			return len(lit), lit, true
		}}
	return []*rule{temp, home, root}
}

// pathRule matches a private folder at path boundaries; nil when path is
// not a usable private path.
func pathRule(kind, path, placeholder string) *rule {
	lits := privatePaths(path)
	if len(lits) == 0 {
		return nil
	}
	reach := 0
	for _, l := range lits {
		reach = max(reach, len(l)+1)
	}
	return &rule{kind: kind, lits: lits, reach: reach, placeholder: placeholder,
		match: func(w window, lit string) (int, string, bool) {
			if !pathStart(w) || !not(w.at(len(lit)), isNameByte) {
				return 0, "", false
			}
			return len(lit), placeholder, true
		}}
}

// userRule matches the user name as a whole token that is part of a
// path, a file name or an identifier: neither neighbour is a letter or a
// digit, and at least one is one of / \ - _ . @ ~ = : ("/home/alice",
// "pytest-of-alice", "alice@host", "USER=alice"), so never inside another
// word ("malice") nor as a word of prose ("alice said"). nil for names
// shorter than three bytes, names holding a separator or a blank, and
// common path components or account names, which identify nobody.
func userRule(name string) *rule {
	if len(name) < 3 || strings.ContainsAny(name, "/\\ \t\n") || commonName(name) {
		return nil
	}
	return &rule{kind: KindUserName, lits: []string{name}, reach: len(name) + 1, placeholder: UserPlaceholder,
		match: func(w window, lit string) (int, string, bool) {
			before, after := w.prev(1), w.at(len(lit))
			if !not(before, isAlnum) || !not(after, isAlnum) || !isPathPunct(before) && !isPathPunct(after) ||
				before == '{' && after == '}' {
				return 0, "", false
			}
			return len(lit), UserPlaceholder, true
		}}
}

// isPathPunct reports the bytes that join a user name into a path, a file
// name or an identifier.
func isPathPunct(c int) bool { return c >= 0 && strings.IndexByte(`/\-_.@~=:`, byte(c)) >= 0 }

// hostRules returns the rules of the host name: the full name and, for a
// dotted name, its first label (the short host name). Each is searched in
// any ASCII case, as a whole host-name label: neither neighbour is a byte
// of one ([A-Za-z0-9_-]), and no dot follows a short name, which then
// begins another name.
//
// A distinctive name (at least five bytes and not a common word, such as
// "alice-mbp" or "fv-az123-456") is found wherever it is a whole label,
// dots around it allowed, so in its FQDN and the FQDN in a longer one. A
// short or common name ("ci", "dev", "node", "build", "ubuntu": see
// commonHostName) would also be found in prose ("a dev build") and in
// other names, so it is found only where it is used as a host or a
// folder name:
//   - after "user@" (a user name, or its placeholder "{user}", before the
//     "@"): "alice@ci:~$";
//   - after "://": "ssh://ci:22", "http://dev:8080/";
//   - as a whole path component, after "/" or "\" and followed by the end,
//     "/", "\" or a byte that cannot continue a file name: "/srv/ci/x",
//     "C:\ci\x", but not "/ci.log" or "/ci-cache". A common path
//     component (see commonName: "build", "src", …) is not searched there,
//     nor a standard top-level folder ("dev", "proc", "sys", …) as the
//     first component of an absolute path ("/dev/null", "file:///dev/x").
//
// Names shorter than two bytes and "localhost" are ignored. The
// placeholder "{host}" itself is never a match.
func hostRules(host string) []*rule {
	var broad, strict []string
	for _, h := range []string{host, strings.SplitN(host, ".", 2)[0]} {
		lh := strings.ToLower(h)
		if len(h) < 2 || lh == "localhost" || strings.HasPrefix(lh, "localhost.") || strings.ContainsAny(h, "/\\ \t\n@:") ||
			slices.Contains(broad, h) || slices.Contains(strict, h) {
			continue
		}
		if len(h) < 5 || commonHostName(lh) {
			strict = append(strict, h)
		} else {
			broad = append(broad, h)
		}
	}
	var rules []*rule
	if len(broad) > 0 {
		reach := 0
		for _, l := range broad {
			reach = max(reach, len(l)+1)
		}
		rules = append(rules, &rule{kind: KindHostName, lits: broad, fold: true, reach: reach, placeholder: HostPlaceholder,
			match: func(w window, lit string) (int, string, bool) {
				before, after := w.prev(1), w.at(len(lit))
				if !not(before, isHostByte) || !not(after, isHostByte) || before == '{' && after == '}' {
					return 0, "", false
				}
				return len(lit), HostPlaceholder, true
			}})
	}
	if len(strict) > 0 {
		reach := 0
		for _, l := range strict {
			reach = max(reach, len(l)+1)
		}
		rules = append(rules, &rule{kind: KindHostName, lits: strict, fold: true, reach: reach, placeholder: HostPlaceholder,
			match: func(w window, lit string) (int, string, bool) {
				if !shortHostAt(w, lit) {
					return 0, "", false
				}
				return len(lit), HostPlaceholder, true
			}})
	}
	return rules
}

// shortHostAt reports whether the short or common host name lit, found
// in w, is used as a host or a folder name there (see hostRules).
//
// It is text that uses a name so: the byte after the name and the four
// bytes before it (as many as there are, at the start of the input) are
// printable ASCII or white space. In binary data (the pages of an SQLite
// store) two random bytes spell a two-letter host name every few hundred
// kilobytes, after a "/" or a name byte and "@" often enough to refuse
// good evidence; the same bytes in text context are about a hundred times
// rarer. A value the store holds as text is in the records it is built
// from as well, which are text and scanned too.
func shortHostAt(w window, lit string) bool {
	after := w.at(len(lit))
	if !not(after, isHostByte) || after == '.' || after >= 0 && !isTextByte(byte(after)) {
		return false
	}
	for k := 1; k <= 5; k++ {
		if c := w.prev(k); c >= 0 && !isTextByte(byte(c)) {
			return false
		}
	}
	switch w.prev(1) {
	case '@': // user@host
		c := w.prev(2)
		return c >= 0 && (isNameByte(byte(c)) || c == '}')
	case '/', '\\':
		if w.prev(1) == '/' && w.prev(2) == '/' && w.prev(3) == ':' {
			return true // scheme://host
		}
		if !not(after, isNameByte) {
			return false // "/ci.log", "/ci+x": a longer file name
		}
		name := strings.ToLower(lit)
		if commonName(name) {
			return false
		}
		return !(topLevelFolder(name) && atPathRoot(w))
	}
	return false
}

// atPathRoot reports whether w's literal, which follows a "/", is the first
// component of an absolute path: the "/" starts the input or follows a
// byte that cannot be part of a path, or is the third "/" of "file:///".
func atPathRoot(w window) bool {
	switch c := w.prev(2); {
	case c < 0:
		return true
	case c == '/':
		return w.prev(3) == '/' && w.prev(4) == ':'
	case c == '\\':
		return false
	default:
		return !isNameByte(byte(c))
	}
}

// topLevelFolder reports the standard folders of a file system's root
// (Linux's and macOS's), which a short host name may be spelled like.
func topLevelFolder(name string) bool {
	switch name {
	case "bin", "boot", "cdrom", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt",
		"nix", "opt", "proc", "root", "run", "sbin", "snap", "srv", "sys", "tmp", "usr", "var",
		"applications", "cores", "library", "network", "private", "system", "users", "volumes":
		return true
	}
	return false
}

// commonHostName reports host names that are also common words, or that
// many machines share, and so are searched only where they are used as a
// host or a folder name (see hostRules): the common names of commonName
// and generic machine names.
func commonHostName(name string) bool {
	if commonName(name) {
		return true
	}
	switch name {
	case "server", "worker", "master", "laptop", "desktop", "client", "agent", "debian", "fedora", "centos",
		"alpine", "archlinux", "raspberrypi", "buildkitsandbox", "container", "machine", "default", "develop",
		"staging", "production", "primary", "replica", "gateway", "router", "vagrant", "sandbox":
		return true
	}
	return false
}
