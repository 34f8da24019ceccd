package pep440

import (
	"fmt"
	"strings"
	"unicode"
)

// Specifiers is a parsed, comma-separated set of version clauses such as
// ">=1.0, !=1.3.*, <2". A version is contained in the set when every clause
// matches it. The zero Specifiers is the empty set, which every version
// satisfies (subject to the pre-release rule of [Specifiers.Contains]).
type Specifiers struct {
	clauses []clause
}

type operator uint8

const (
	opCompatible   operator = iota + 1 // ~=
	opEqual                            // ==
	opNotEqual                         // !=
	opLessEqual                        // <=
	opGreaterEqual                     // >=
	opLess                             // <
	opGreater                          // >
	opArbitrary                        // ===
)

func (op operator) String() string {
	switch op {
	case opCompatible:
		return "~="
	case opEqual:
		return "=="
	case opNotEqual:
		return "!="
	case opLessEqual:
		return "<="
	case opGreaterEqual:
		return ">="
	case opLess:
		return "<"
	case opGreater:
		return ">"
	case opArbitrary:
		return "==="
	}
	return "?"
}

// splitOperator splits the operator off the front of a clause. Longer
// operators are tried first so that "===" is not read as "==" and "=".
func splitOperator(s string) (operator, string) {
	for _, op := range [...]operator{
		opArbitrary, opCompatible, opEqual, opNotEqual,
		opLessEqual, opGreaterEqual, opLess, opGreater,
	} {
		if rest, ok := strings.CutPrefix(s, op.String()); ok {
			return op, rest
		}
	}
	return 0, s
}

type clause struct {
	op       operator
	ver      Version // unused for ===
	wildcard bool    // == or != with a trailing ".*"; ver is then release-only
	text     string  // the version text of a === clause, as written
	// impliesPre records whether this clause names a pre-release and so
	// explicitly asks for pre-releases.
	impliesPre bool
}

// InvalidSpecifierError reports a version specifier that cannot be parsed.
type InvalidSpecifierError struct {
	// Input is the string that was given to ParseSpecifiers.
	Input string
	// Clause is the offending comma-separated clause, white space trimmed.
	Clause string
	// Reason says what is wrong with Clause.
	Reason string
	// Hint suggests a valid form; it may be empty.
	Hint string
	// Err is the underlying *InvalidVersionError when the version in
	// Clause could not be parsed, else nil.
	Err error
}

// Error implements the error interface.
func (e *InvalidSpecifierError) Error() string {
	msg := fmt.Sprintf("invalid version specifier %q", e.Input)
	if e.Clause != e.Input {
		msg += fmt.Sprintf(" in clause %q", e.Clause)
	}
	msg += ": " + e.Reason
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns Err.
func (e *InvalidSpecifierError) Unwrap() error { return e.Err }

// ParseSpecifiers parses a comma-separated list of version clauses. White
// space is allowed around clauses and between an operator and its version.
// An empty or all-white-space string yields the empty set; an empty clause
// (as in ">=1,,<2" or ">=1,") is an error. It returns an
// *InvalidSpecifierError for invalid input.
func ParseSpecifiers(s string) (Specifiers, error) {
	if strings.TrimSpace(s) == "" {
		return Specifiers{}, nil
	}
	parts := strings.Split(s, ",")
	clauses := make([]clause, 0, len(parts))
	for _, part := range parts {
		c, err := parseClause(strings.TrimSpace(part))
		if err != nil {
			err.Input = s
			return Specifiers{}, err
		}
		clauses = append(clauses, c)
	}
	return Specifiers{clauses: clauses}, nil
}

func parseClause(t string) (clause, *InvalidSpecifierError) {
	fail := func(reason, hint string) (clause, *InvalidSpecifierError) {
		return clause{}, &InvalidSpecifierError{Clause: t, Reason: reason, Hint: hint}
	}
	if t == "" {
		return fail("empty clause", `clauses are separated by single commas, e.g. ">=1.0, <2"`)
	}
	op, rest := splitOperator(t)
	if op == 0 {
		return fail("missing or unknown comparison operator", operatorHint(t))
	}
	text := strings.TrimLeftFunc(rest, unicode.IsSpace)
	if text == "" {
		return fail(fmt.Sprintf("missing version after %q", op.String()), fmt.Sprintf(`e.g. "%s1.0"`, op))
	}
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		return fail("white space inside the version "+fmt.Sprintf("%q", text), "remove it, e.g. "+fmt.Sprintf("%q", op.String()+strings.Join(strings.Fields(text), "")))
	}

	if op == opArbitrary {
		if strings.ContainsAny(text, ";)") {
			return fail(`"===" version contains ";" or ")"`, "these characters end a dependency specifier")
		}
		c := clause{op: op, text: text}
		if v, err := Parse(text); err == nil {
			c.impliesPre = v.IsPrerelease()
		}
		return c, nil
	}

	const starReason = `"*" may only appear in a trailing ".*" after the release numbers of a == or != clause`
	if prefix, ok := strings.CutSuffix(text, ".*"); ok && !strings.Contains(prefix, "*") {
		if op != opEqual && op != opNotEqual {
			return fail(fmt.Sprintf(`prefix matching (".*") is not allowed with %q`, op.String()),
				fmt.Sprintf(`only == and != take ".*"; did you mean %q?`, op.String()+prefix))
		}
		v, verr := parseVersion(prefix, 0)
		if verr != nil {
			return clause{}, versionFailure(t, prefix, verr)
		}
		if v.pre != preNone || v.hasPost || v.hasDev || len(v.local) > 0 {
			return fail(`prefix matching (".*") needs a version made of an optional epoch and release numbers only`,
				fmt.Sprintf("e.g. %q", op.String()+v.Base().String()+".*"))
		}
		return clause{op: op, ver: v, wildcard: true}, nil
	}
	if strings.Contains(text, "*") {
		hint := `e.g. "==1.0.*"`
		if i := strings.Index(text, ".*"); i >= 0 {
			if cand := op.String() + text[:i+2]; cand != t {
				if _, err := parseClause(cand); err == nil {
					hint = fmt.Sprintf("did you mean %q?", cand)
				}
			}
		}
		return fail(starReason, hint)
	}

	v, verr := parseVersion(text, 0)
	if verr != nil {
		return clause{}, versionFailure(t, text, verr)
	}
	if len(v.local) > 0 && op != opEqual && op != opNotEqual {
		return fail(fmt.Sprintf("a local version label is not allowed with %q", op.String()),
			fmt.Sprintf("only == and != take local labels; e.g. %q", op.String()+v.Public().String()))
	}
	if op == opCompatible && len(v.release) < 2 {
		longer := v.Base()
		longer.release = append(append([]string(nil), v.release...), "0")
		return fail(`"~=" needs a version with at least two release numbers`,
			fmt.Sprintf(`e.g. "~=%s", which means >=%[1]s, ==%s.*`, longer, v.Base()))
	}
	return clause{op: op, ver: v, impliesPre: op != opNotEqual && v.IsPrerelease()}, nil
}

func versionFailure(clauseText, text string, verr *syntaxError) *InvalidSpecifierError {
	ve := &InvalidVersionError{Input: text, Offset: verr.offset, Reason: verr.reason, Hint: verr.hint}
	return &InvalidSpecifierError{
		Clause: clauseText,
		Reason: fmt.Sprintf("invalid version %q: %s", text, verr.reason),
		Hint:   verr.hint,
		Err:    ve,
	}
}

func operatorHint(t string) string {
	const ops = "operators are ~=, ==, !=, <=, >=, <, > and ==="
	switch {
	case strings.HasPrefix(t, "=>"):
		return fmt.Sprintf("did you mean %q? %s", ">="+t[2:], ops)
	case strings.HasPrefix(t, "=<"):
		return fmt.Sprintf("did you mean %q? %s", "<="+t[2:], ops)
	case strings.HasPrefix(t, "="):
		return fmt.Sprintf("did you mean %q? %s", "="+t, ops)
	}
	if _, err := Parse(t); err == nil {
		return fmt.Sprintf("did you mean %q? %s", "=="+t, ops)
	}
	return ops
}

// String returns the normalised form of s: clauses in their original order,
// each an operator directly followed by the normalised version, joined by
// "," without spaces, e.g. ">=1.0,!=1.3.*,<2". A "===" clause keeps its
// version text as written. The empty set is "".
func (s Specifiers) String() string {
	var b strings.Builder
	for i, c := range s.clauses {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c.op.String())
		switch {
		case c.op == opArbitrary:
			b.WriteString(c.text)
		case c.wildcard:
			b.WriteString(c.ver.String())
			b.WriteString(".*")
		default:
			b.WriteString(c.ver.String())
		}
	}
	return b.String()
}

// Contains reports whether v satisfies every clause of s.
//
// Pre-releases (including development releases) are excluded unless
// allowPre is true or some clause of s explicitly names a pre-release (for
// example ">=2.0b1"; "!=" clauses and ".*" prefixes do not count). The
// specification's remaining pre-release rules depend on what else is
// available and are left to the caller: to accept a pre-release only when
// nothing else satisfies s, call Contains with allowPre false over all
// candidates first and, if none match, again with allowPre true.
func (s Specifiers) Contains(v Version, allowPre bool) bool {
	if !allowPre && v.IsPrerelease() && !s.impliesPre() {
		return false
	}
	for _, c := range s.clauses {
		if !c.matches(v) {
			return false
		}
	}
	return true
}

func (s Specifiers) impliesPre() bool {
	for _, c := range s.clauses {
		if c.impliesPre {
			return true
		}
	}
	return false
}

// matches applies one clause to v, ignoring the pre-release policy.
func (c clause) matches(v Version) bool {
	switch c.op {
	case opCompatible:
		// ~=V.N is >=V.N, ==V.* (suffixes of V.N ignored for the prefix).
		return v.Compare(c.ver) >= 0 && hasPrefix(v, c.ver.epoch, c.ver.release[:len(c.ver.release)-1])
	case opEqual:
		return c.equal(v)
	case opNotEqual:
		return !c.equal(v)
	case opLessEqual:
		return v.Public().Compare(c.ver) <= 0
	case opGreaterEqual:
		return v.Compare(c.ver) >= 0
	case opLess:
		// <V must not match a pre-release of V unless V is one: when V is
		// final or a post-release, everything from V.dev0 up is excluded.
		bound := c.ver
		if !bound.IsPrerelease() {
			bound.dev, bound.hasDev = "0", true
		}
		return v.Compare(bound) < 0
	case opGreater:
		return c.greater(v)
	case opArbitrary:
		return equalFoldASCII(v.String(), c.text)
	}
	return false
}

func (c clause) equal(v Version) bool {
	switch {
	case c.wildcard:
		return hasPrefix(v, c.ver.epoch, c.ver.release)
	case len(c.ver.local) > 0:
		return v.Compare(c.ver) == 0
	}
	// A public version in the clause ignores the candidate's local label.
	return v.Public().Compare(c.ver) == 0
}

// greater implements >V, which must match neither V's local versions nor its
// post-releases (unless V is itself a post-release).
func (c clause) greater(v Version) bool {
	spec := c.ver
	switch {
	case spec.hasDev:
		// Development releases have no post-releases; the next version
		// after V and all its local versions is V with dev+1.
		next := spec
		next.dev = incr(spec.dev)
		return v.Compare(next) >= 0
	case spec.hasPost:
		// The next version after V.postN and its local versions is
		// V.post(N+1).dev0.
		next := spec
		next.post = incr(spec.post)
		next.dev, next.hasDev = "0", true
		return v.Compare(next) >= 0
	}
	if v.Compare(spec) <= 0 {
		return false
	}
	// Now v > V, where V has no post- or development segment. Every such v
	// with V's epoch, release and pre-release is V+local or a V.postN (with
	// or without .devM or a local label), and those are excluded.
	sameRelease := cmpNum(v.epoch, spec.epoch) == 0 && cmpRelease(v.release, spec.release) == 0 &&
		v.pre == spec.pre && cmpNum(v.preN, spec.preN) == 0
	return !sameRelease
}

// hasPrefix reports whether v has the given epoch and its release, padded
// with zeros, starts with prefix.
func hasPrefix(v Version, epoch string, prefix []string) bool {
	if cmpNum(v.epoch, epoch) != 0 {
		return false
	}
	for i, p := range prefix {
		var r string
		if i < len(v.release) {
			r = v.release[i]
		}
		if cmpNum(r, p) != 0 {
			return false
		}
	}
	return true
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}
