package pep440

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Version is a parsed PEP 440 version. Versions are immutable values; use
// [Version.Compare] to order or compare them (they are not comparable with
// ==). The zero Version is equivalent to the version "0".
type Version struct {
	// All numbers are decimal strings without leading zeros; "" means 0
	// for the epoch and "absent" elsewhere (see pre, hasPost, hasDev).
	epoch   string
	release []string
	pre     preKind
	preN    string
	post    string
	hasPost bool
	dev     string
	hasDev  bool
	// local holds the normalised local segments: lower-case, numeric
	// segments without leading zeros. nil when there is no local label.
	local []string
}

// preKind is the phase of a pre-release, in ascending order.
type preKind uint8

const (
	preNone preKind = iota
	preAlpha
	preBeta
	preRC
)

func (k preKind) label() string {
	switch k {
	case preAlpha:
		return "a"
	case preBeta:
		return "b"
	case preRC:
		return "rc"
	}
	return ""
}

// InvalidVersionError reports a string that is not a valid PEP 440 version.
type InvalidVersionError struct {
	// Input is the string that was given to Parse.
	Input string
	// Offset is the byte offset in Input at which parsing failed.
	Offset int
	// Reason says what is wrong, e.g. `unexpected 'x' at offset 3`.
	Reason string
	// Hint suggests a valid form; it may be empty.
	Hint string
}

// Error implements the error interface.
func (e *InvalidVersionError) Error() string {
	msg := fmt.Sprintf("invalid version %q: %s", e.Input, e.Reason)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Parse parses s as a PEP 440 version, accepting all the alternative
// spellings the specification requires (see the package documentation).
// It returns an *InvalidVersionError if s is not a valid version.
func Parse(s string) (Version, error) {
	lead := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
	t := strings.TrimSpace(s)
	v, err := parseVersion(t, lead)
	if err != nil {
		return Version{}, &InvalidVersionError{
			Input:  s,
			Offset: err.offset,
			Reason: err.reason,
			Hint:   err.hint,
		}
	}
	return v, nil
}

// String returns the normalised form of v, e.g. "1!2.0rc1.post3.dev4+ubuntu.1".
func (v Version) String() string {
	var b strings.Builder
	if v.epoch != "" && v.epoch != "0" {
		b.WriteString(v.epoch)
		b.WriteByte('!')
	}
	b.WriteString(v.releaseString())
	if v.pre != preNone {
		b.WriteString(v.pre.label())
		b.WriteString(num(v.preN))
	}
	if v.hasPost {
		b.WriteString(".post")
		b.WriteString(num(v.post))
	}
	if v.hasDev {
		b.WriteString(".dev")
		b.WriteString(num(v.dev))
	}
	if len(v.local) > 0 {
		b.WriteByte('+')
		b.WriteString(strings.Join(v.local, "."))
	}
	return b.String()
}

func (v Version) releaseString() string {
	if len(v.release) == 0 {
		return "0"
	}
	return strings.Join(v.release, ".")
}

// Compare returns -1, 0 or +1 as v sorts before, equal to or after w in
// PEP 440 order. Release segments are padded with zeros, so "1.0" and
// "1.0.0" compare equal. Compare has the signature slices.SortFunc expects
// when used as the method expression Version.Compare.
func (v Version) Compare(w Version) int {
	if c := cmpNum(v.epoch, w.epoch); c != 0 {
		return c
	}
	if c := cmpRelease(v.release, w.release); c != 0 {
		return c
	}
	if c := cmpPre(v, w); c != 0 {
		return c
	}
	// No post-release sorts before any post-release.
	if c := cmpOptional(v.hasPost, v.post, w.hasPost, w.post, -1); c != 0 {
		return c
	}
	// No development release sorts after any development release.
	if c := cmpOptional(v.hasDev, v.dev, w.hasDev, w.dev, +1); c != 0 {
		return c
	}
	return cmpLocal(v.local, w.local)
}

// IsPrerelease reports whether v is a pre-release or a development release
// (development releases count as pre-releases, also "1.0.post1.dev1").
func (v Version) IsPrerelease() bool {
	return v.pre != preNone || v.hasDev
}

// Public returns v without its local version label.
func (v Version) Public() Version {
	v.local = nil
	return v
}

// Base returns the epoch and release segment of v only, e.g. "1!2.0" for
// "1!2.0rc1.post3+local".
func (v Version) Base() Version {
	return Version{epoch: v.epoch, release: v.release}
}

// Local returns the normalised local version label of v without the
// leading "+", or "" if v has none.
func (v Version) Local() string {
	return strings.Join(v.local, ".")
}

func num(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

// cmpNum compares two normalised decimal strings ("" is 0).
func cmpNum(a, b string) int {
	a, b = num(a), num(b)
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func cmpRelease(a, b []string) int {
	n := max(len(a), len(b))
	for i := range n {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := cmpNum(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// preClass places the pre-release part of v: -1 for a bare development
// release (1.0.dev0, before every pre-release of 1.0), 0 for a pre-release,
// +1 for none (final and post-releases).
func preClass(v Version) int {
	switch {
	case v.pre != preNone:
		return 0
	case v.hasDev && !v.hasPost:
		return -1
	}
	return 1
}

func cmpPre(v, w Version) int {
	cv, cw := preClass(v), preClass(w)
	if cv != cw {
		if cv < cw {
			return -1
		}
		return 1
	}
	if cv != 0 {
		return 0
	}
	if v.pre != w.pre {
		if v.pre < w.pre {
			return -1
		}
		return 1
	}
	return cmpNum(v.preN, w.preN)
}

// cmpOptional compares two optional numbers; absent sorts as absentSign
// (-1: before all numbers, +1: after all numbers).
func cmpOptional(hasA bool, a string, hasB bool, b string, absentSign int) int {
	switch {
	case hasA && hasB:
		return cmpNum(a, b)
	case hasA:
		return -absentSign
	case hasB:
		return absentSign
	}
	return 0
}

func cmpLocal(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		an, bn := isNumeric(a[i]), isNumeric(b[i])
		var c int
		switch {
		case an && bn:
			c = cmpNum(a[i], b[i])
		case an:
			c = 1
		case bn:
			c = -1
		default:
			c = strings.Compare(a[i], b[i])
		}
		if c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func isNumeric(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// incr returns the normalised decimal string for n+1.
func incr(n string) string {
	b := []byte(num(n))
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isSep(c byte) bool { return c == '.' || c == '-' || c == '_' }

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with the lower-case ASCII word,
// ignoring ASCII case.
func hasPrefixFold(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if lower(s[i]) != word[i] {
			return false
		}
	}
	return true
}

// syntaxError is a parse failure at a byte offset of the original input.
type syntaxError struct {
	offset int
	reason string
	hint   string
}

// scanner walks a version string; at returns 0 past the end so that look-ahead
// never needs bounds checks at the call site.
type scanner struct {
	s    string
	i    int
	base int // offset of s in the original input, for messages
}

func (p *scanner) at(i int) byte {
	if i >= 0 && i < len(p.s) {
		return p.s[i]
	}
	return 0
}

// number consumes [0-9]+ and returns it without leading zeros.
func (p *scanner) number() (string, bool) {
	j := p.i
	for j < len(p.s) && isDigit(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	n := strings.TrimLeft(p.s[p.i:j], "0")
	if n == "" {
		n = "0"
	}
	p.i = j
	return n, true
}

// alnum consumes [A-Za-z0-9]+ and returns it normalised as a local segment.
func (p *scanner) alnum() (string, bool) {
	j := p.i
	for j < len(p.s) && isAlnum(p.s[j]) {
		j++
	}
	if j == p.i {
		return "", false
	}
	seg := p.s[p.i:j]
	p.i = j
	if isNumeric(seg) {
		if seg = strings.TrimLeft(seg, "0"); seg == "" {
			seg = "0"
		}
		return seg, true
	}
	b := []byte(seg)
	for i := range b {
		b[i] = lower(b[i])
	}
	return string(b), true
}

// matchPre returns the pre-release phase spelled at the start of s and the
// length of the spelling, trying the spellings in the order of the
// specification's regular expression (longer spellings first).
func matchPre(s string) (preKind, int) {
	for _, c := range [...]struct {
		word string
		kind preKind
	}{
		{"alpha", preAlpha}, {"a", preAlpha},
		{"beta", preBeta}, {"b", preBeta},
		{"preview", preRC}, {"pre", preRC}, {"c", preRC}, {"rc", preRC},
	} {
		if hasPrefixFold(s, c.word) {
			return c.kind, len(c.word)
		}
	}
	return preNone, 0
}

// matchPost returns the length of the post-release spelling at the start of s.
func matchPost(s string) int {
	for _, w := range [...]string{"post", "rev", "r"} {
		if hasPrefixFold(s, w) {
			return len(w)
		}
	}
	return 0
}

const (
	hintGeneric  = `valid versions look like 1.2, 1.2.3rc1, 1.2.post1, 1.2.dev1, 1!2.0 or 1.2+local.7`
	hintLocal    = `a local label is ASCII letters and digits separated by ".", "-" or "_", e.g. 1.0+ubuntu.1`
	hintWildcard = `".*" is only allowed in == and != specifiers, not in a version`
	hintSpace    = `a version cannot contain white space`
	hintImplicit = `an implicit post-release needs a number, e.g. 1.0-1, which means 1.0.post1`
	hintRelease  = `a version starts with an optional "v" and epoch "N!", then a release number such as 1.0`
)

// parseVersion parses a version without surrounding white space; base is
// the offset of s in the caller's input, used in error messages. It never
// looks outside s and never panics.
func parseVersion(s string, base int) (Version, *syntaxError) {
	var v Version
	p := scanner{s: s, base: base}
	if s == "" {
		return v, &syntaxError{base, "empty version", hintRelease}
	}
	if c := p.at(0); c == 'v' || c == 'V' {
		p.i++
	}
	n, ok := p.number()
	if !ok {
		return v, p.fail("expected a release number", hintRelease)
	}
	if p.at(p.i) == '!' {
		p.i++
		v.epoch = n
		if n, ok = p.number(); !ok {
			return v, p.fail(`expected a release number after the epoch "!"`, hintRelease)
		}
	}
	v.release = []string{n}
	for p.at(p.i) == '.' && isDigit(p.at(p.i+1)) {
		p.i++
		n, _ = p.number()
		v.release = append(v.release, n)
	}

	// Pre-release: [-_.]? (alpha|a|beta|b|preview|pre|c|rc) [-_.]? [0-9]*
	j := p.i
	if isSep(p.at(j)) {
		j++
	}
	if kind, l := matchPre(s[j:]); l > 0 {
		j += l
		if isSep(p.at(j)) {
			j++
		}
		p.i = j
		v.pre, v.preN = kind, "0"
		if n, ok := p.number(); ok {
			v.preN = n
		}
	}

	// Post-release: -[0-9]+ | [-_.]? (post|rev|r) [-_.]? [0-9]*
	j = p.i
	if p.at(j) == '-' && isDigit(p.at(j+1)) {
		p.i = j + 1
		v.post, _ = p.number()
		v.hasPost = true
	} else {
		if isSep(p.at(j)) {
			j++
		}
		if l := matchPost(s[j:]); l > 0 {
			j += l
			if isSep(p.at(j)) {
				j++
			}
			p.i = j
			v.post, v.hasPost = "0", true
			if n, ok := p.number(); ok {
				v.post = n
			}
		}
	}

	// Development release: [-_.]? dev [-_.]? [0-9]*
	j = p.i
	if isSep(p.at(j)) {
		j++
	}
	if hasPrefixFold(s[j:], "dev") {
		j += len("dev")
		if isSep(p.at(j)) {
			j++
		}
		p.i = j
		v.dev, v.hasDev = "0", true
		if n, ok := p.number(); ok {
			v.dev = n
		}
	}

	// Local label: + [a-z0-9]+ ([-_.][a-z0-9]+)*
	if p.at(p.i) == '+' {
		p.i++
		seg, ok := p.alnum()
		if !ok {
			return v, p.fail("expected a local version label after \"+\"", hintLocal)
		}
		v.local = []string{seg}
		for isSep(p.at(p.i)) && isAlnum(p.at(p.i+1)) {
			p.i++
			seg, _ = p.alnum()
			v.local = append(v.local, seg)
		}
		if p.i < len(s) {
			return v, p.fail("unexpected "+p.describe()+" in local version label", hintLocal)
		}
	}

	if p.i < len(s) {
		return v, p.fail("unexpected "+p.describe(), p.hint())
	}
	return v, nil
}

// describe quotes the character at the scanner position.
func (p *scanner) describe() string {
	if p.i >= len(p.s) {
		return "end of version"
	}
	r, size := utf8.DecodeRuneInString(p.s[p.i:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte %#02x at offset %d", p.s[p.i], p.base+p.i)
	}
	return fmt.Sprintf("%q at offset %d", r, p.base+p.i)
}

func (p *scanner) fail(reason, hint string) *syntaxError {
	if p.i >= len(p.s) {
		reason += " at end of version"
	} else if !strings.Contains(reason, " at offset ") {
		reason += ", found " + p.describe()
	}
	return &syntaxError{offset: p.base + p.i, reason: reason, hint: hint}
}

// hint picks the most helpful hint for a failure at the scanner position.
func (p *scanner) hint() string {
	rest := p.s[p.i:]
	switch {
	case strings.Contains(p.s, "*"):
		return hintWildcard
	case strings.IndexFunc(p.s, unicode.IsSpace) >= 0:
		return hintSpace
	case rest == "-":
		return hintImplicit
	}
	return hintGeneric
}
