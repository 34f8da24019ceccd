package pep508

import (
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pyname"
)

// Marker is a parsed environment marker such as
// `python_version >= "3.9" and sys_platform != "win32"`. Markers come from
// [ParseMarker] or [ParseRequirement] (the zero Marker is not a valid
// marker) and are immutable, so they are safe for concurrent use. The nil
// *Marker stands for "no marker": it prints as "" and evaluates to true in
// every environment.
type Marker struct {
	root node
}

type nodeKind uint8

const (
	nodeCompare nodeKind = iota
	nodeAnd
	nodeOr
)

// node is an "and" or "or" of two or more children (never of the same kind
// as the node itself, so that the tree is canonical), or a comparison.
type node struct {
	kind nodeKind
	kids []node
	cmp  comparison
}

// cmpOp is a marker comparison operator.
type cmpOp uint8

const (
	opEqual        cmpOp = iota + 1 // ==
	opNotEqual                      // !=
	opLess                          // <
	opLessEqual                     // <=
	opGreater                       // >
	opGreaterEqual                  // >=
	opCompatible                    // ~=
	opArbitrary                     // ===
	opIn                            // in
	opNotIn                         // not in
)

func (op cmpOp) String() string {
	switch op {
	case opEqual:
		return "=="
	case opNotEqual:
		return "!="
	case opLess:
		return "<"
	case opLessEqual:
		return "<="
	case opGreater:
		return ">"
	case opGreaterEqual:
		return ">="
	case opCompatible:
		return "~="
	case opArbitrary:
		return "==="
	case opIn:
		return "in"
	case opNotIn:
		return "not in"
	}
	return "?"
}

// operand is one side of a comparison: a marker variable (by its standard
// name) or a quoted string's value.
type operand struct {
	variable string // "" for a quoted string
	value    string
}

// comparison has a variable on exactly one side.
type comparison struct {
	left  operand
	op    cmpOp
	right operand
}

// variable returns the name of the comparison's variable.
func (c comparison) variable() string {
	if c.left.variable != "" {
		return c.left.variable
	}
	return c.right.variable
}

// fieldKind is the type of a marker variable ("Marker field types").
type fieldKind uint8

const (
	kindUnknown fieldKind = iota
	kindString
	kindVersion
	kindVersionOrString
	kindExtra
)

// variableKind returns the field type of the standard variable name.
func variableKind(name string) fieldKind {
	switch name {
	case "os_name", "sys_platform", "platform_machine", "platform_python_implementation",
		"platform_system", "implementation_name":
		return kindString
	case "python_version", "python_full_version", "implementation_version":
		return kindVersion
	case "platform_release", "platform_version":
		return kindVersionOrString
	case "extra":
		return kindExtra
	}
	return kindUnknown
}

// canonicalVariable maps a variable as written, including the legacy
// spellings pypa/packaging accepts, to its standard name.
func canonicalVariable(word string) (string, bool) {
	switch word {
	case "os.name":
		return "os_name", true
	case "sys.platform":
		return "sys_platform", true
	case "platform.version":
		return "platform_version", true
	case "platform.machine":
		return "platform_machine", true
	case "platform.python_implementation", "python_implementation":
		return "platform_python_implementation", true
	}
	if variableKind(word) != kindUnknown {
		return word, true
	}
	return "", false
}

// knownVariables lists the standard variable names, for hints.
func knownVariables() []string {
	return []string{
		"implementation_name", "implementation_version", "os_name", "platform_machine",
		"platform_python_implementation", "platform_release", "platform_system",
		"platform_version", "python_full_version", "python_version", "sys_platform", "extra",
	}
}

// ParseMarker parses an environment marker, the part of a dependency
// specifier after the ";". Leading and trailing spaces and tabs are allowed.
// It returns a *ParseError for invalid input.
func ParseMarker(s string) (*Marker, error) {
	p := &parser{s: s, what: "environment marker"}
	n, err := p.marker()
	if err != nil {
		return nil, err
	}
	p.skipWS()
	if !p.eof() {
		return nil, p.unexpectedAfterMarker()
	}
	return &Marker{root: n}, nil
}

// String returns the canonical form of m: comparisons as
// `variable op "value"` (or `"value" op variable`, keeping the side the
// variable was written on), single spaces around operators, "and" and "or",
// and parentheses only around an "or" inside an "and". It returns "" for
// the nil *Marker.
func (m *Marker) String() string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	writeNode(&b, m.root)
	return b.String()
}

func writeNode(b *strings.Builder, n node) {
	switch n.kind {
	case nodeCompare:
		writeOperand(b, n.cmp.left)
		b.WriteByte(' ')
		b.WriteString(n.cmp.op.String())
		b.WriteByte(' ')
		writeOperand(b, n.cmp.right)
	case nodeAnd, nodeOr:
		sep := " and "
		if n.kind == nodeOr {
			sep = " or "
		}
		for i, k := range n.kids {
			if i > 0 {
				b.WriteString(sep)
			}
			if n.kind == nodeAnd && k.kind == nodeOr {
				b.WriteByte('(')
				writeNode(b, k)
				b.WriteByte(')')
			} else {
				writeNode(b, k)
			}
		}
	}
}

func writeOperand(b *strings.Builder, o operand) {
	if o.variable != "" {
		b.WriteString(o.variable)
		return
	}
	// A value never contains both quote characters (the grammar has no
	// escapes), so one of the two always works.
	q := byte('"')
	if strings.IndexByte(o.value, '"') >= 0 {
		q = '\''
	}
	b.WriteByte(q)
	b.WriteString(o.value)
	b.WriteByte(q)
}

func (c comparison) String() string {
	var b strings.Builder
	writeNode(&b, node{kind: nodeCompare, cmp: c})
	return b.String()
}

// Variables returns the standard names of the marker variables m refers
// to, sorted and without duplicates, e.g. ["extra", "python_version"]. It
// returns nil for the nil *Marker.
func (m *Marker) Variables() []string {
	if m == nil {
		return nil
	}
	var names []string
	walk(m.root, func(c comparison) { names = append(names, c.variable()) })
	slices.Sort(names)
	return slices.Compact(names)
}

// walk calls f for every comparison of n, in order.
func walk(n node, f func(comparison)) {
	if n.kind == nodeCompare {
		f(n.cmp)
		return
	}
	for _, k := range n.kids {
		walk(k, f)
	}
}

// join combines the children into an "and" or "or" node, splicing in
// children of the same kind so that the tree stays canonical.
func join(kind nodeKind, kids []node) node {
	if len(kids) == 1 {
		return kids[0]
	}
	flat := make([]node, 0, len(kids))
	for _, k := range kids {
		if k.kind == kind {
			flat = append(flat, k.kids...)
		} else {
			flat = append(flat, k)
		}
	}
	return node{kind: kind, kids: flat}
}

// normalizeExtraComparison rewrites the quoted name compared with the extra
// variable to its normalised form, so that extra == "Foo_Bar" prints and
// compares as extra == "foo-bar".
func normalizeExtraComparison(c comparison) comparison {
	if c.variable() != "extra" {
		return c
	}
	if c.left.variable == "" {
		c.left.value = pyname.Normalize(c.left.value)
	} else {
		c.right.value = pyname.Normalize(c.right.value)
	}
	return c
}
