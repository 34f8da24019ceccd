package sanitize

import (
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strings"
)

// Placeholders that stand for this machine's private values in recorded
// text. A caller's Folders bring their own (e.g. "{venv}", "{work}").
const (
	HomePlaceholder = "~"
	TempPlaceholder = "{tmp}"
	UserPlaceholder = "{user}"
	HostPlaceholder = "{host}"
	// Redacted replaces a whole recorded environment value that still
	// holds a private value or a credential once sanitised.
	Redacted = "{redacted}"
)

// Private is what must not be recorded about the machine a run happened
// on. The zero value knows no private values; a Scanner built from it
// still finds credentials and the generic shapes of home and temporary
// paths.
type Private struct {
	// Home is the user's home folder; recorded as "~".
	Home string
	// User is the login name; recorded as "{user}" where it is a whole
	// path component.
	User string
	// Host is the host name; recorded as "{host}" where it is a whole
	// host-name token.
	Host string
	// Temp is the temporary folder ($TMPDIR, else /tmp); recorded as
	// "{tmp}".
	Temp string
	// Folders maps the run's private folders to their placeholders, e.g.
	// "/tmp/mk-123/venv" → "{venv}". A placeholder of "~" or "{tmp}" makes
	// a folder count as a home or temporary path in findings.
	Folders map[string]string
	// Secrets maps the variables of the environment whose names say they
	// hold a secret to their values (see [EnvSecrets]). The Scanner finds
	// a value anywhere, in any encoding it decodes (KindEnvSecret, the
	// excerpt naming the variable only); String leaves it, as it leaves
	// every credential: evidence that holds one is rejected.
	Secrets map[string]string
}

// FromSystem reads this machine's private values: os.UserHomeDir,
// user.Current (else $USER, else $LOGNAME), os.Hostname, os.TempDir and
// the secrets of the environment ([EnvSecrets] of os.Environ). A value
// that cannot be read is left empty. Folders is empty; add the run's own
// folders with [Private.With].
func FromSystem() Private {
	var p Private
	if h, err := os.UserHomeDir(); err == nil {
		p.Home = h
	}
	if u, err := user.Current(); err == nil {
		p.User = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		p.User = v
	} else {
		p.User = os.Getenv("LOGNAME")
	}
	// Windows reports DOMAIN\user.
	if i := strings.LastIndexByte(p.User, '\\'); i >= 0 {
		p.User = p.User[i+1:]
	}
	if h, err := os.Hostname(); err == nil {
		p.Host = h
	}
	p.Temp = os.TempDir()
	p.Secrets = EnvSecrets(os.Environ())
	return p
}

// EnvSecrets returns the variables of environ ("NAME=value" entries)
// whose names say they hold a secret, with their values: names holding
// KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or AUTH, in
// any case, but not only as part of AUTHOR, KEYRING, KEYBOARD, KEYMAP or
// TOKENIZER (GIT_AUTHOR_NAME, PIP_KEYRING_PROVIDER=subprocess and
// TOKENIZERS_PARALLELISM name no secret, and their values are words
// evidence may hold), and MKRELEASE_KEY_PASSWORD. A value shorter than 8
// bytes, or a number or a version, is left out: ordinary text would hold
// it by chance.
func EnvSecrets(environ []string) map[string]string {
	out := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && secretName(k) && isSecretValue(v) {
			out[k] = v
		}
	}
	return out
}

// secretName reports the names of variables that hold secrets.
func secretName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"AUTHOR", "KEYRING", "KEYBOARD", "KEYMAP", "TOKENIZER"} {
		u = strings.ReplaceAll(u, w, "")
	}
	if u == "MKRELEASE_KEY_PASSWORD" {
		return true
	}
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "AUTH"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// With returns a copy of p whose Folders also map path to placeholder. The
// receiver's map is not modified.
func (p Private) With(path, placeholder string) Private {
	folders := make(map[string]string, len(p.Folders)+1)
	for k, v := range p.Folders {
		folders[k] = v
	}
	folders[path] = placeholder
	p.Folders = folders
	return p
}

// String returns s with every private value replaced by its placeholder,
// by the rules of the package documentation: at each position the longest
// private value that matches at path-component (or host-name) boundaries
// wins, and replacement continues after it. The boundary before a value
// is judged on the text as sanitised so far, so what String returns holds
// none of p's values by those same rules.
//
// A value is replaced in the text as it is and also where it appears once
// the text is normalised as the Scanner normalises it (escape sequences
// decoded, NFKC, invisible characters taken out): the bytes it was
// decoded from are replaced, so "\u0061lice-mbp" and "alice\u200b-mbp"
// become "{host}". What the Scanner decodes further (runs of base64 or hex
// digits, values joined to their neighbours) is left, and the Scanner
// rejects it. Credentials, secrets and the generic shapes of other
// users' paths are left as they are: the [Scanner] rejects them.
func (p Private) String(s string) string {
	// Recorded strings are short: trying every literal at every position
	// costs less than building a matcher's tables.
	as := anchors(p.privateRules())
	if len(as) == 0 || len(s) < 2 {
		return s
	}
	if !hasNormSpecial(s) {
		return replacePrivate(as, s)
	}
	n := normaliser{exact: true}
	var text []byte
	n.emit = func(seg []byte) { text = append(text, seg...) }
	// The normalised text first, where a value may be longer than what
	// the text as it is shows ("/tmp/mk-1/<ZWSP>venv" is the venv, not the
	// temporary folder); then the text as it is; again until nothing
	// changes, which is at once but for contrived input.
	out := s
	for range 8 {
		n.reset()
		text = text[:0]
		n.write([]byte(out))
		n.close()
		next, _ := replaceNormalised(as, &n, text, out)
		next = replacePrivate(as, next)
		if next == out {
			break
		}
		out = next
	}
	return out
}

// replacePrivate replaces the private values of as found in s as it is.
func replacePrivate(as []anchor, s string) string {
	b := []byte(s)
	var out []byte
	copied := 0 // b[:copied] is in out
	for i := 0; i+1 < len(b); i++ {
		before := b[max(0, i-lookbehind):i]
		if out != nil {
			out = append(out, b[copied:i]...)
			copied = i
			before = out[max(0, len(out)-lookbehind):]
		}
		n, r, _ := firstMatch(as, before, b[i:])
		if n == 0 {
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(s)+16), b[:i]...)
		}
		out = append(out, r.placeholder...)
		copied = i + n
		i += n - 1
	}
	if out == nil {
		return s
	}
	return string(append(out, b[copied:]...))
}

// replaceNormalised replaces in s the bytes of the private values of as
// found in text, s normalised by n, that depend on what normalising
// changed (see normaliser.affected): the others were found in s as it is.
func replaceNormalised(as []anchor, n *normaliser, text []byte, s string) (string, bool) {
	if len(n.regions) == 0 {
		return s, false
	}
	var b strings.Builder
	copied := int64(0)
	for i := 0; i+1 < len(text); i++ {
		m, r, _ := firstMatch(as, text[max(0, i-lookbehind):i], text[i:])
		if m == 0 {
			continue
		}
		if ok, _ := n.affected(int64(i), int64(m)); ok {
			if from, to := n.toIn(int64(i)), n.toInEnd(int64(i+m)); from >= copied && to <= int64(len(s)) {
				b.WriteString(s[copied:from])
				b.WriteString(r.placeholder)
				copied = to
			}
		}
		i += m - 1
	}
	if copied == 0 {
		return s, false
	}
	b.WriteString(s[copied:])
	return b.String(), true
}

// Env returns the environment facts worth recording: the variables of
// env named in the default allowlist (LANG, LC_ALL, LC_CTYPE, TZ,
// PYTHONHASHSEED, PYTHONUTF8, SOURCE_DATE_EPOCH) or in keep (the
// project's configured ones, e.g. VEXL_PROFILE), each value sanitised with
// [Private.String]. A value that still holds anything the [Scanner] finds
// (another user's home, a token) is recorded as "{redacted}". Every other
// variable is dropped, and so are the variables that describe the machine
// or the account (PATH, HOME, USER, LOGNAME, USERNAME, HOSTNAME, PWD,
// OLDPWD, TMPDIR, TMP, TEMP, SHELL, MAIL) even when keep names them.
func (p Private) Env(env map[string]string, keep ...string) map[string]string {
	out := map[string]string{}
	var sc *Scanner
	for _, names := range [][]string{defaultEnv(), keep} {
		for _, k := range names {
			v, ok := env[k]
			if !ok || neverRecorded(k) {
				continue
			}
			if _, done := out[k]; done {
				continue
			}
			v = p.String(v)
			if sc == nil {
				sc = p.Scanner()
			}
			if len(sc.scanString(v)) > 0 {
				v = Redacted
			}
			out[k] = v
		}
	}
	return out
}

// defaultEnv is the allowlist of variables Env records without being
// asked: locale, time zone and the interpreter's determinism settings.
func defaultEnv() []string {
	return []string{"LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED", "PYTHONUTF8", "SOURCE_DATE_EPOCH"}
}

// neverRecorded reports the variables that describe the machine or the
// account rather than the run.
func neverRecorded(k string) bool {
	switch k {
	case "PATH", "HOME", "USER", "LOGNAME", "USERNAME", "HOSTNAME", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "SHELL", "MAIL":
		return true
	}
	return false
}

// privateRules returns the rules of p's private values: the caller's
// folders (sorted, so the order never depends on map iteration), the
// temporary folder, the home folder, the user name and the host name.
// newMatcher orders them longest literal first.
func (p Private) privateRules() []*rule {
	var rules []*rule
	keys := make([]string, 0, len(p.Folders))
	for k := range p.Folders {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ph := p.Folders[k]
		kind := KindPrivatePath
		switch ph {
		case HomePlaceholder:
			kind = KindHomePath
		case TempPlaceholder:
			kind = KindTempPath
		}
		rules = append(rules, pathRule(kind, k, ph))
	}
	rules = append(rules, pathRule(KindTempPath, p.Temp, TempPlaceholder))
	rules = append(rules, pathRule(KindHomePath, p.Home, HomePlaceholder))
	rules = append(rules, userRule(p.User))
	rules = append(rules, hostRules(p.Host)...)
	// Drop the rules of values that were empty or too generic to be private.
	kept := rules[:0]
	for _, r := range rules {
		if r != nil {
			kept = append(kept, r)
		}
	}
	return kept
}

// privatePaths returns the literal forms a private folder is searched
// for: the cleaned path without a trailing separator and, for paths under
// /var, /tmp or /etc, the same path under /private (macOS resolves those
// symbolic links, so tools print either). It returns nothing for an empty,
// relative or root path.
func privatePaths(path string) []string {
	if path == "" {
		return nil
	}
	c := filepath.Clean(path)
	if !filepath.IsAbs(c) || c == string(filepath.Separator) || len(c) < 2 {
		return nil
	}
	out := []string{c}
	for _, top := range []string{"/var", "/tmp", "/etc"} {
		if c == top || strings.HasPrefix(c, top+"/") {
			out = append(out, "/private"+c)
		}
	}
	return out
}

// commonName reports the names that are too common to be searched as a
// user name: path components a recorded path is full of, and the
// accounts of CI machines and images, which identify nobody. Such a user
// is still found through the home folder.
func commonName(name string) bool {
	switch name {
	case "bin", "lib", "lib64", "usr", "etc", "opt", "var", "tmp", "src", "share", "include",
		"local", "home", "root", "build", "dist", "work", "app", "data", "test", "tests",
		"python", "site-packages", "user", "users",
		"runner", "ubuntu", "admin", "ec2-user", "vagrant", "jenkins", "docker", "builder",
		"circleci", "gitlab-runner", "travis", "buildkite-agent", "nobody", "runneradmin":
		return true
	}
	return false
}
