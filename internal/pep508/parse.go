package pep508

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/suggest"
)

// ParseError reports a dependency specifier or environment marker that
// cannot be parsed.
type ParseError struct {
	// Input is the string that was given to ParseRequirement or ParseMarker.
	Input string
	// Offset is the byte offset in Input at which the problem was found;
	// len(Input) when the input ended too early.
	Offset int
	// Reason says what is wrong, e.g. `unknown marker variable "python_versoin"`.
	Reason string
	// Hint suggests a fix; it may be empty.
	Hint string
	// Err is the underlying error from package pep440 or pyname, if any.
	Err error

	what string // "dependency specifier" or "environment marker"
}

// Error implements the error interface.
func (e *ParseError) Error() string {
	what := e.what
	if what == "" {
		what = "dependency specifier"
	}
	msg := fmt.Sprintf("invalid %s %q at offset %d: %s", what, e.Input, e.Offset, e.Reason)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns Err.
func (e *ParseError) Unwrap() error { return e.Err }

// maxDepth bounds the nesting of parentheses in markers, so that recursion
// stays shallow on any input.
const maxDepth = 64

type parser struct {
	s     string
	pos   int
	depth int
	what  string
}

func (p *parser) fail(off int, reason, hint string) *ParseError {
	return &ParseError{Input: p.s, Offset: off, Reason: reason, Hint: hint, what: p.what}
}

func (p *parser) eof() bool { return p.pos >= len(p.s) }

func (p *parser) peek() byte {
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

func isWS(c byte) bool { return c == ' ' || c == '\t' }

func (p *parser) skipWS() {
	for p.pos < len(p.s) && isWS(p.s[p.pos]) {
		p.pos++
	}
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isNameChar(c byte) bool { return isAlnum(c) || c == '-' || c == '_' || c == '.' }

// isWordChar reports whether c can continue a marker variable or keyword.
func isWordChar(c byte) bool { return isAlnum(c) || c == '_' || c == '.' }

// describe names the character at offset off for a message.
func (p *parser) describe(off int) string {
	if off >= len(p.s) {
		return "end of input"
	}
	r, size := utf8.DecodeRuneInString(p.s[off:])
	if r == utf8.RuneError && size <= 1 {
		return fmt.Sprintf("byte %#02x", p.s[off])
	}
	return fmt.Sprintf("%q", r)
}

// charHint explains why common stray characters are not allowed.
func (p *parser) charHint(off int) string {
	if off >= len(p.s) {
		return ""
	}
	switch c := p.s[off]; {
	case c == '\n' || c == '\r':
		return "a dependency specifier is a single line"
	case c == '#':
		return "comments are not part of the dependency specifier syntax"
	case c == '\\':
		return "line continuations and escapes are not part of the dependency specifier syntax"
	}
	if r, _ := utf8.DecodeRuneInString(p.s[off:]); unicode.IsSpace(r) {
		return "only spaces and tabs may separate the parts"
	}
	return ""
}

// identifier reads a project or extra name at p.pos; what is "project
// name" or "extra name".
func (p *parser) identifier(what string) (string, error) {
	start := p.pos
	for p.pos < len(p.s) && isNameChar(p.s[p.pos]) {
		p.pos++
	}
	run := p.s[start:p.pos]
	if run == "" {
		hint := p.charHint(start)
		if hint == "" {
			hint = `names consist of ASCII letters, digits, ".", "_" and "-" and start and end with a letter or digit`
		}
		article := "a"
		if strings.HasPrefix(what, "e") {
			article = "an"
		}
		return "", p.fail(start, fmt.Sprintf("expected %s %s, found %s", article, what, p.describe(start)), hint)
	}
	if err := pyname.Valid(run); err != nil {
		var ne *pyname.InvalidNameError
		if errors.As(err, &ne) && ne.Offset >= 0 {
			return "", &ParseError{Input: p.s, Offset: start + ne.Offset, Reason: fmt.Sprintf("invalid %s %q: %s", what, run, ne.Reason), Hint: ne.Hint, Err: err, what: p.what}
		}
		return "", &ParseError{Input: p.s, Offset: start, Reason: err.Error(), Err: err, what: p.what}
	}
	return run, nil
}

// extras reads "[a, b]" at p.pos and returns the normalised names, sorted
// and without duplicates.
func (p *parser) extras() ([]string, error) {
	open := p.pos
	p.pos++ // '['
	p.skipWS()
	if p.peek() == ']' {
		p.pos++
		return nil, nil
	}
	var out []string
	for {
		name, err := p.identifier("extra name")
		if err != nil {
			return nil, err
		}
		out = append(out, pyname.Normalize(name))
		p.skipWS()
		switch c := p.peek(); {
		case c == ',':
			p.pos++
			p.skipWS()
			if p.peek() == ']' {
				return nil, p.fail(p.pos, "missing extra name after ','", "remove the trailing comma")
			}
		case c == ']':
			p.pos++
			return normalizeExtras(out), nil
		case p.eof():
			return nil, p.fail(p.pos, "missing ']'", fmt.Sprintf("close the '[' at offset %d", open))
		case isNameChar(c):
			return nil, p.fail(p.pos, "missing ',' between extra names", `e.g. "name[a,b]"`)
		default:
			hint := p.charHint(p.pos)
			if hint == "" {
				hint = `extras are names separated by commas, e.g. "name[a,b]"`
			}
			return nil, p.fail(p.pos, fmt.Sprintf("unexpected %s in extras", p.describe(p.pos)), hint)
		}
	}
}

// matchVersionOp returns the version comparison operator at the start of
// s, or "".
func matchVersionOp(s string) string {
	for _, op := range [...]string{"===", "==", "!=", "<=", ">=", "~=", "<", ">"} {
		if strings.HasPrefix(s, op) {
			return op
		}
	}
	return ""
}

func isOpStart(c byte) bool {
	return c == '<' || c == '>' || c == '=' || c == '!' || c == '~'
}

func isVersionChar(c byte) bool {
	return isAlnum(c) || c == '-' || c == '_' || c == '.' || c == '*' || c == '+' || c == '!'
}

const opsHint = "operators are ~=, ==, !=, <=, >=, <, > and ==="

// specifier reads a version specifier, optionally in parentheses, at p.pos.
func (p *parser) specifier() (pep440.Specifiers, error) {
	open := p.pos
	paren := p.peek() == '('
	if paren {
		p.pos++
	}
	var clauses []string
	for {
		p.skipWS()
		start := p.pos
		op := matchVersionOp(p.s[p.pos:])
		if op == "" {
			c := p.peek()
			terminator := p.eof() || c == ';' || paren && c == ')'
			switch {
			case len(clauses) > 0 && terminator:
				// A trailing comma is allowed.
			case len(clauses) == 0 && paren && c == ')':
				return pep440.Specifiers{}, p.fail(start, "empty parentheses", "remove them or put a version specifier inside, e.g. \"(>=1.0)\"")
			case c == '=':
				return pep440.Specifiers{}, p.fail(start, `unknown operator "="`, `did you mean "=="? `+opsHint)
			case len(clauses) > 0:
				return pep440.Specifiers{}, p.fail(start, fmt.Sprintf("expected a version clause after ',', found %s", p.describe(start)), opsHint)
			default:
				return pep440.Specifiers{}, p.fail(start, fmt.Sprintf("expected a version comparison operator, found %s", p.describe(start)), opsHint)
			}
			break
		}
		p.pos += len(op)
		p.skipWS()
		vstart := p.pos
		for p.pos < len(p.s) && isVersionChar(p.s[p.pos]) {
			p.pos++
		}
		if p.pos == vstart {
			return pep440.Specifiers{}, p.fail(vstart, fmt.Sprintf("missing version after %q, found %s", op, p.describe(vstart)), fmt.Sprintf(`e.g. "%s1.0"`, op))
		}
		text := op + p.s[vstart:p.pos]
		if _, err := pep440.ParseSpecifiers(text); err != nil {
			return pep440.Specifiers{}, p.specifierError(err, start, vstart, p.pos)
		}
		clauses = append(clauses, text)
		p.skipWS()
		if p.peek() != ',' {
			break
		}
		p.pos++
	}
	if paren {
		p.skipWS()
		if p.peek() != ')' {
			reason := fmt.Sprintf("expected ',' or ')', found %s", p.describe(p.pos))
			return pep440.Specifiers{}, p.fail(p.pos, reason, fmt.Sprintf("close the '(' at offset %d", open))
		}
		p.pos++
	}
	spec, err := pep440.ParseSpecifiers(strings.Join(clauses, ","))
	if err != nil { // cannot happen: every clause parsed on its own
		return pep440.Specifiers{}, p.fail(open, err.Error(), "")
	}
	return spec, nil
}

// specifierError turns a pep440 error for the clause at start, whose
// version spans vstart..vend, into a *ParseError.
func (p *parser) specifierError(err error, start, vstart, vend int) error {
	pe := &ParseError{Input: p.s, Offset: start, Reason: err.Error(), Err: err, what: p.what}
	var se *pep440.InvalidSpecifierError
	if errors.As(err, &se) {
		pe.Reason, pe.Hint = se.Reason, se.Hint
	}
	var ve *pep440.InvalidVersionError
	if errors.As(err, &ve) && ve.Offset >= 0 && vstart+ve.Offset <= vend {
		pe.Offset = vstart + ve.Offset
	}
	return pe
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// isURLChar reports whether c may appear in an RFC 3986 URI reference:
// unreserved, reserved or "%".
func isURLChar(c byte) bool {
	if isAlnum(c) {
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0
}

// url reads the URL of a direct reference at p.pos, up to white space or
// the end.
func (p *parser) url() (string, error) {
	start := p.pos
	for p.pos < len(p.s) && !isWS(p.s[p.pos]) {
		c := p.s[p.pos]
		if !isURLChar(c) {
			hint := p.charHint(p.pos)
			switch {
			case strings.IndexByte(p.s[start:p.pos], ';') >= 0:
				hint = `a marker after a URL needs white space before the ";", e.g. "name @ https://example.com/name.whl ; python_version < '3.9'"`
			case hint == "":
				hint = "percent-encode it, e.g. %20 for a space"
			}
			return "", p.fail(p.pos, fmt.Sprintf("%s is not allowed in a URL", p.describe(p.pos)), hint)
		}
		if c == '%' && (p.pos+2 >= len(p.s) || !isHex(p.s[p.pos+1]) || !isHex(p.s[p.pos+2])) {
			return "", p.fail(p.pos, `"%" in a URL must be followed by two hexadecimal digits`, `write "%25" for a literal "%"`)
		}
		p.pos++
	}
	u := p.s[start:p.pos]
	if u == "" {
		hint := p.charHint(p.pos)
		if hint == "" {
			hint = `e.g. "name @ https://example.com/name-1.0-py3-none-any.whl"`
		}
		return "", p.fail(p.pos, fmt.Sprintf("expected a URL after '@', found %s", p.describe(p.pos)), hint)
	}
	for i := 0; i < len(u); i++ {
		if u[i] != ';' {
			continue
		}
		if _, err := ParseMarker(u[i+1:]); err == nil {
			return "", p.fail(start+i, `the ";" inside the URL is followed by an environment marker`,
				fmt.Sprintf("put white space before the \";\": %q", u[:i]+" ;"+u[i+1:]))
		}
	}
	return u, nil
}

// marker reads a marker expression (marker_or) at p.pos.
func (p *parser) marker() (node, error) {
	var kids []node
	for {
		n, err := p.and()
		if err != nil {
			return node{}, err
		}
		kids = append(kids, n)
		save := p.pos
		p.skipWS()
		if !p.keyword("or") {
			p.pos = save
			return join(nodeOr, kids), nil
		}
	}
}

func (p *parser) and() (node, error) {
	var kids []node
	for {
		n, err := p.atom()
		if err != nil {
			return node{}, err
		}
		kids = append(kids, n)
		save := p.pos
		p.skipWS()
		if !p.keyword("and") {
			p.pos = save
			return join(nodeAnd, kids), nil
		}
	}
}

// keyword consumes the word w at p.pos if it is not the start of a longer
// word.
func (p *parser) keyword(w string) bool {
	if !strings.HasPrefix(p.s[p.pos:], w) {
		return false
	}
	if end := p.pos + len(w); end < len(p.s) && isWordChar(p.s[end]) {
		return false
	}
	p.pos += len(w)
	return true
}

func (p *parser) atom() (node, error) {
	p.skipWS()
	if p.peek() != '(' {
		c, err := p.comparison()
		if err != nil {
			return node{}, err
		}
		return node{kind: nodeCompare, cmp: c}, nil
	}
	open := p.pos
	if p.depth >= maxDepth {
		return node{}, p.fail(open, fmt.Sprintf("parentheses nested more than %d deep", maxDepth), "simplify the marker")
	}
	p.depth++
	p.pos++
	n, err := p.marker()
	if err != nil {
		return node{}, err
	}
	p.skipWS()
	if p.peek() != ')' {
		reason := fmt.Sprintf(`expected "and", "or" or ')', found %s`, p.describe(p.pos))
		hint := fmt.Sprintf("close the '(' at offset %d", open)
		if h := p.charHint(p.pos); h != "" && !p.eof() {
			hint = h
		}
		return node{}, p.fail(p.pos, reason, hint)
	}
	p.pos++
	p.depth--
	return n, nil
}

func (p *parser) comparison() (comparison, error) {
	start := p.pos
	left, err := p.operand()
	if err != nil {
		return comparison{}, err
	}
	p.skipWS()
	op, err := p.markerOp(left)
	if err != nil {
		return comparison{}, err
	}
	p.skipWS()
	right, err := p.operand()
	if err != nil {
		return comparison{}, err
	}
	switch {
	case left.variable == "" && right.variable == "":
		return comparison{}, p.fail(start, "comparison of two quoted strings",
			"one side of a comparison must be a marker variable such as python_version")
	case left.variable != "" && right.variable != "":
		return comparison{}, p.fail(start, "comparison of two marker variables",
			`one side of a comparison must be a quoted string, e.g. python_version >= "3.9"`)
	}
	return normalizeExtraComparison(comparison{left: left, op: op, right: right}), nil
}

func (p *parser) markerOp(left operand) (cmpOp, error) {
	start := p.pos
	if op := matchVersionOp(p.s[p.pos:]); op != "" {
		p.pos += len(op)
		switch op {
		case "==":
			return opEqual, nil
		case "!=":
			return opNotEqual, nil
		case "<":
			return opLess, nil
		case "<=":
			return opLessEqual, nil
		case ">":
			return opGreater, nil
		case ">=":
			return opGreaterEqual, nil
		case "~=":
			return opCompatible, nil
		default:
			return opArbitrary, nil
		}
	}
	if p.keyword("in") {
		return opIn, nil
	}
	if p.keyword("not") {
		p.skipWS()
		if p.pos == start+len("not") || !p.keyword("in") {
			return 0, p.fail(p.pos, fmt.Sprintf(`expected "in" after "not", found %s`, p.describe(p.pos)), `write "not in" with white space between the words`)
		}
		return opNotIn, nil
	}
	const allOps = "operators are ==, !=, <, <=, >, >=, ~=, ===, in and not in"
	hint := allOps
	switch {
	case p.peek() == '=':
		hint = `did you mean "=="? ` + allOps
	case strings.HasPrefix(p.s[p.pos:], "is"):
		hint = `use "==" or "!=" rather than "is"; ` + allOps
	case p.eof() && left.variable != "":
		hint = fmt.Sprintf(`e.g. %s == "value"`, left.variable)
	case p.charHint(p.pos) != "":
		hint = p.charHint(p.pos)
	}
	return 0, p.fail(start, fmt.Sprintf("expected a comparison operator, found %s", p.describe(start)), hint)
}

func (p *parser) operand() (operand, error) {
	start := p.pos
	c := p.peek()
	switch {
	case c == '"' || c == '\'':
		v, err := p.quoted()
		return operand{value: v}, err
	case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_':
		for p.pos < len(p.s) && isWordChar(p.s[p.pos]) {
			p.pos++
		}
		word := p.s[start:p.pos]
		if name, ok := canonicalVariable(word); ok {
			return operand{variable: name}, nil
		}
		return operand{}, p.unknownVariable(start, word)
	case '0' <= c && c <= '9':
		end := start
		for end < len(p.s) && !isWS(p.s[end]) && p.s[end] != ')' && p.s[end] != ';' {
			end++
		}
		return operand{}, p.fail(start, "expected a marker variable or a quoted string, found an unquoted value",
			fmt.Sprintf("quote it: %q", p.s[start:end]))
	}
	hint := p.charHint(start)
	if hint == "" {
		hint = `e.g. python_version >= "3.9"`
	}
	return operand{}, p.fail(start, fmt.Sprintf("expected a marker variable or a quoted string, found %s", p.describe(start)), hint)
}

func (p *parser) unknownVariable(start int, word string) error {
	switch word {
	case "extras", "dependency_groups":
		return p.fail(start, fmt.Sprintf("the marker variable %q is only defined in lock files", word),
			`in dependency metadata use extra == "name"`)
	case "and", "or", "not", "in":
		return p.fail(start, fmt.Sprintf("expected a marker variable or a quoted string, found %q", word),
			`e.g. python_version >= "3.9"`)
	}
	reason := fmt.Sprintf("unknown marker variable %q", word)
	if best := suggest.Closest(strings.ToLower(word), knownVariables()); best != "" {
		return p.fail(start, reason, fmt.Sprintf("did you mean %s?", best))
	}
	return p.fail(start, reason, fmt.Sprintf("if it is a value, quote it: %q; the variables are %s",
		word, strings.Join(knownVariables(), ", ")))
}

// quoted reads a quoted string at p.pos and returns its contents.
func (p *parser) quoted() (string, error) {
	start := p.pos
	q := p.s[p.pos]
	p.pos++
	for {
		if p.eof() {
			return "", p.fail(start, "unterminated string", fmt.Sprintf("close it with %c", q))
		}
		c := p.s[p.pos]
		switch {
		case c == q:
			v := p.s[start+1 : p.pos]
			p.pos++
			return v, nil
		case c == '\\':
			return "", p.fail(p.pos, "backslash in a quoted string", "escapes are not supported; a value may contain the other kind of quote, e.g. '\"'")
		case c == '\n' || c == '\r':
			return "", p.fail(p.pos, "line break in a quoted string", fmt.Sprintf("close the string that starts at offset %d with %c", start, q))
		case c < utf8.RuneSelf:
			if c < ' ' && c != '\t' || c == 0x7f {
				return "", p.fail(p.pos, fmt.Sprintf("control character %s in a quoted string", p.describe(p.pos)), "")
			}
			p.pos++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail(p.pos, fmt.Sprintf("%s in a quoted string is not valid UTF-8", p.describe(p.pos)), "")
			}
			if !unicode.IsGraphic(r) {
				return "", p.fail(p.pos, fmt.Sprintf("character %s is not allowed in a quoted string", p.describe(p.pos)), "")
			}
			p.pos += size
		}
	}
}

// unexpectedAfterMarker reports trailing text after a complete marker.
func (p *parser) unexpectedAfterMarker() error {
	reason := fmt.Sprintf(`expected "and", "or" or the end of the marker, found %s`, p.describe(p.pos))
	hint := p.charHint(p.pos)
	switch {
	case hint != "":
	case p.s[p.pos] == ')':
		hint = "this ')' has no matching '('"
	case isOpStart(p.s[p.pos]):
		hint = `comparisons cannot be chained; write two comparisons joined by "and"`
	default:
		hint = `join comparisons with "and" or "or"`
	}
	return p.fail(p.pos, reason, hint)
}
