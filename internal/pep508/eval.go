package pep508

import (
	"fmt"
	"maps"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// Environment maps marker variables, by their standard names such as
// "python_version" or "sys_platform", to their values. A variable that is
// not in the map is undefined: [Marker.Evaluate] reports an error for it and
// [Marker.EvaluatePartial] treats it as unknown. The variable "extra" names
// the one extra whose dependencies are being evaluated ("" for none).
type Environment map[string]string

// WithExtra returns a copy of e with the variable "extra" set to the
// normalised extra name ("" evaluates the dependencies outside every
// extra).
func (e Environment) WithExtra(extra string) Environment {
	c := maps.Clone(e)
	if c == nil {
		c = Environment{}
	}
	c["extra"] = pyname.Normalize(extra)
	return c
}

// EvalError reports a marker comparison that cannot be evaluated.
type EvalError struct {
	// Comparison is the canonical text of the comparison, e.g.
	// `sys_platform ~= "linux"`.
	Comparison string
	// Variable is the standard name of the comparison's marker variable.
	Variable string
	// Reason says what is wrong.
	Reason string
}

// Error implements the error interface.
func (e *EvalError) Error() string {
	return fmt.Sprintf("cannot evaluate marker comparison %s: %s", e.Comparison, e.Reason)
}

// Truth is the result of [Marker.EvaluatePartial].
type Truth int8

const (
	// False means the marker is false whatever the unknown variables are.
	False Truth = iota
	// True means the marker is true whatever the unknown variables are.
	True
	// Unknown means the result may depend on the unknown variables.
	Unknown
)

// String returns "false", "true" or "unknown".
func (t Truth) String() string {
	switch t {
	case False:
		return "false"
	case True:
		return "true"
	case Unknown:
		return "unknown"
	}
	return fmt.Sprintf("Truth(%d)", int8(t))
}

// Evaluate reports whether m holds in env. Every comparison is evaluated
// (there is no short-circuiting), so the outcome does not depend on the
// order of the operands of "and" and "or": if any comparison refers to a
// variable that env does not define, or uses an operator that is not defined
// for its values (see the package documentation), Evaluate returns false and
// an *EvalError for the first such comparison. The nil *Marker is true.
func (m *Marker) Evaluate(env Environment) (bool, error) {
	if m == nil {
		return true, nil
	}
	t, err := eval(m.root, env, true)
	if err != nil {
		return false, err
	}
	return t == True, nil
}

// EvaluatePartial evaluates m in an environment in which the variables that
// env does not define are unknown, using three-valued (Kleene) logic: a
// comparison with an unknown variable is [Unknown]; "and" is [False] if any
// operand is False, else Unknown if any is Unknown, else [True]; "or" is the
// dual.
//
// The result is sound: if it is True (False), then for every environment
// that agrees with env on the variables env defines, [Marker.Evaluate]
// returns true (false) or an error. It is not complete: Unknown may be
// returned although every such environment gives the same answer, as for
// `python_version < "3.9" or python_version >= "3.9"` with python_version
// unknown. Errors are reported as by Evaluate, but only for comparisons whose
// variable env defines. The nil *Marker is True.
//
// A typical use is a target that fixes the platform and Python feature
// release but not, say, the kernel release: see [TargetEnvironment].
func (m *Marker) EvaluatePartial(env Environment) (Truth, error) {
	if m == nil {
		return True, nil
	}
	t, err := eval(m.root, env, false)
	if err != nil {
		return False, err
	}
	return t, nil
}

// eval evaluates every comparison of n and returns the combined truth and
// the first error. strict makes undefined variables an error.
func eval(n node, env Environment, strict bool) (Truth, error) {
	if n.kind == nodeCompare {
		return evalComparison(n.cmp, env, strict)
	}
	// and: False dominates, then Unknown; or: True dominates, then Unknown.
	dominant, neutral := False, True
	if n.kind == nodeOr {
		dominant, neutral = True, False
	}
	res := neutral
	var first error
	for _, k := range n.kids {
		t, err := eval(k, env, strict)
		if err != nil && first == nil {
			first = err
		}
		switch {
		case t == dominant:
			res = dominant
		case t == Unknown && res != dominant:
			res = Unknown
		}
	}
	return res, first
}

func evalComparison(c comparison, env Environment, strict bool) (Truth, error) {
	name := c.variable()
	value, ok := env[name]
	if !ok {
		if strict {
			return False, &EvalError{Comparison: c.String(), Variable: name, Reason: fmt.Sprintf("the environment does not define %s", name)}
		}
		return Unknown, nil
	}
	if name == "python_full_version" && strings.HasSuffix(value, "+") {
		// platform.python_version() of an untagged CPython build ends in
		// "+", which is not a valid version; read it as a local version,
		// as pypa/packaging does.
		value += "local"
	}
	l, r := c.left.value, c.right.value
	if c.left.variable != "" {
		l = value
	} else {
		r = value
	}
	ok, reason := compare(variableKind(name), c.op, l, r)
	if reason != "" {
		return False, &EvalError{Comparison: c.String(), Variable: name, Reason: reason}
	}
	if ok {
		return True, nil
	}
	return False, nil
}

// compare applies op to the values l and r of a comparison of a variable of
// the given kind. A non-empty reason means the comparison is undefined.
func compare(kind fieldKind, op cmpOp, l, r string) (result bool, reason string) {
	switch kind {
	case kindExtra:
		l, r = pyname.Normalize(l), pyname.Normalize(r)
		switch op {
		case opEqual:
			return l == r, ""
		case opNotEqual:
			return l != r, ""
		}
		// "Other comparison operations on extra are not defined [...]
		// installation tools SHOULD evaluate them as False."
		return false, ""
	case kindVersion, kindVersionOrString:
		switch op {
		case opIn, opNotIn:
			return compareStrings(op, l, r)
		case opArbitrary:
			return equalFoldASCII(l, r), ""
		}
		if res, ok := compareVersions(op, l, r); ok {
			return res, ""
		}
		return compareStrings(op, l, r)
	}
	switch op {
	case opCompatible, opArbitrary:
		return false, fmt.Sprintf("%q is not defined for a string field", op.String())
	}
	return compareStrings(op, l, r)
}

// compareVersions applies op as a version clause: it reports whether the
// version l is in the pep440 clause op+r, and false for ok when r is not a
// valid version for op or l is not a valid version.
func compareVersions(op cmpOp, l, r string) (result, ok bool) {
	t := strings.TrimSpace(r)
	// r must be a single version, not something that would turn op+r into
	// another operator ("==" + "=1") or a set of clauses ("1, <2").
	if t == "" || !isAlnum(t[0]) || strings.IndexByte(t, ',') >= 0 {
		return false, false
	}
	spec, err := pep440.ParseSpecifiers(op.String() + t)
	if err != nil {
		return false, false
	}
	v, err := pep440.Parse(l)
	if err != nil {
		return false, false
	}
	return spec.Contains(v, true), true
}

// compareStrings applies op with the String field rules.
func compareStrings(op cmpOp, l, r string) (result bool, reason string) {
	switch op {
	case opEqual, opLessEqual, opGreaterEqual:
		return l == r, ""
	case opNotEqual:
		return l != r, ""
	case opLess, opGreater:
		return false, ""
	case opIn:
		return strings.Contains(r, l), ""
	case opNotIn:
		return !strings.Contains(r, l), ""
	}
	return false, fmt.Sprintf("%q needs versions on both sides, and %q and %q are not both valid", op.String(), l, r)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Problem is a comparison that parses and evaluates but that the
// specification says publishing tools SHOULD reject.
type Problem struct {
	// Comparison is the canonical text of the comparison.
	Comparison string
	// Reason says why it is discouraged.
	Reason string
}

// String returns "comparison: reason".
func (p Problem) String() string { return p.Comparison + ": " + p.Reason }

// Lint returns the comparisons of m, in order, that the "Marker
// comparisons" and "Defined environment marker fields" sections ask
// publishing tools to reject:
//
//   - ordered comparisons (<, <=, >, >=), "~=" and "===" on String fields;
//   - "in" and "not in" on Version fields (python_version,
//     python_full_version, implementation_version);
//   - a Version field compared, other than with "===", "in" or "not in",
//     with a string that is not a valid version for the operator;
//   - the extra variable with any operator but "==" ("!=" included), or
//     with a string that is not a valid extra name.
//
// It returns nil when there is nothing to report, and for the nil *Marker.
func (m *Marker) Lint() []Problem {
	if m == nil {
		return nil
	}
	var out []Problem
	walk(m.root, func(c comparison) {
		if reason := lintComparison(c); reason != "" {
			out = append(out, Problem{Comparison: c.String(), Reason: reason})
		}
	})
	return out
}

func lintComparison(c comparison) string {
	name := c.variable()
	literal := c.right.value
	if c.right.variable != "" {
		literal = c.left.value
	}
	switch variableKind(name) {
	case kindString:
		switch c.op {
		case opLess, opLessEqual, opGreater, opGreaterEqual:
			means := "always false"
			if c.op == opLessEqual || c.op == opGreaterEqual {
				means = `"=="`
			}
			return fmt.Sprintf("%s is a string field; ordered comparisons are not meaningful (installers treat %q as %s)",
				name, c.op.String(), means)
		case opCompatible, opArbitrary:
			return fmt.Sprintf("%s is a string field; %q is not defined for it", name, c.op.String())
		}
	case kindVersion:
		switch c.op {
		case opIn, opNotIn:
			return fmt.Sprintf("%s is a version field; %q is not defined for it (use version comparisons)", name, c.op.String())
		case opArbitrary:
			return ""
		}
		// The quoted string must be a version for the operator, whichever
		// side it is on.
		valid := false
		if c.right.variable == "" {
			_, valid = compareVersions(c.op, "0", literal)
		} else {
			_, err := pep440.Parse(literal)
			valid = err == nil
		}
		if !valid {
			return fmt.Sprintf("%q is not a valid version to compare %s with using %q", literal, name, c.op.String())
		}
	case kindExtra:
		if c.op != opEqual {
			return fmt.Sprintf(`only extra == "name" is defined; %q is not`, c.op.String())
		}
		if pyname.Valid(literal) != nil {
			return fmt.Sprintf("%q is not a valid extra name", literal)
		}
	}
	return ""
}
