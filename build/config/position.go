package config

import (
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Position is a 1-based line and column in a release.toml.
type Position struct {
	Line, Column int
}

// positions maps a key path ("project.version", "build.step[1].run",
// "target[0].env.GOOS") to where its value starts in the document, so that
// semantic errors found after decoding can still name a line and column.
type positions map[string]Position

// indexPositions walks the TOML document once with go-toml's AST parser. It
// never fails: on a syntax error the index is simply incomplete (the decoder
// reports the syntax error with its own position).
func indexPositions(data []byte) positions {
	idx := positions{}
	p := unstable.Parser{}
	p.Reset(data)
	arrayCount := map[string]int{} // array-table path → next index
	var table string               // current table path prefix, with indices
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			table = joinKey(resolveTable(keyParts(e), arrayCount))
			idx.set(&p, table, e.Key())
		case unstable.ArrayTable:
			parts := resolveTable(keyParts(e), arrayCount)
			plain := joinKey(parts)
			n := arrayCount[plain]
			arrayCount[plain] = n + 1
			table = plain + "[" + strconv.Itoa(n) + "]"
			idx.set(&p, table, e.Key())
		case unstable.KeyValue:
			idx.keyValue(&p, table, e)
		}
	}
	return idx
}

// resolveTable rewrites a header path so that a component naming an array
// table already seen ("build.step" after [[build.step]]) points at its
// latest element, as TOML does.
func resolveTable(parts []string, arrayCount map[string]int) []string {
	out := make([]string, 0, len(parts))
	for i := range parts {
		out = append(out, parts[i])
		plain := strings.Join(stripIndices(out), ".")
		if n, ok := arrayCount[plain]; ok && i < len(parts)-1 {
			out[len(out)-1] += "[" + strconv.Itoa(n-1) + "]"
		}
	}
	return out
}

func stripIndices(parts []string) []string {
	out := make([]string, len(parts))
	for i, s := range parts {
		if j := strings.IndexByte(s, '['); j >= 0 {
			s = s[:j]
		}
		out[i] = s
	}
	return out
}

func (idx positions) keyValue(p *unstable.Parser, prefix string, kv *unstable.Node) {
	path := joinKey(append(splitKey(prefix), keyParts(kv)...))
	v := kv.Value()
	pos, ok := nodePosition(p, v)
	if !ok {
		it := kv.Key()
		if it.Next() {
			pos, ok = nodePosition(p, it.Node())
		}
	}
	if ok {
		idx[path] = pos
	}
	idx.value(p, path, v)
}

func (idx positions) value(p *unstable.Parser, path string, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			idx.keyValue(p, path, it.Node())
		}
	case unstable.Array:
		it := v.Children()
		i := 0
		for it.Next() {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			elem := path + "[" + strconv.Itoa(i) + "]"
			if pos, ok := nodePosition(p, n); ok {
				idx[elem] = pos
			}
			idx.value(p, elem, n)
			i++
		}
	}
}

func (idx positions) set(p *unstable.Parser, path string, it unstable.Iterator) {
	if it.Next() {
		if pos, ok := nodePosition(p, it.Node()); ok {
			idx[path] = pos
		}
	}
}

func nodePosition(p *unstable.Parser, n *unstable.Node) (Position, bool) {
	if n == nil || !n.Valid() || n.Raw.Length == 0 {
		return Position{}, false
	}
	s := p.Shape(n.Raw)
	return Position{Line: s.Start.Line, Column: s.Start.Column}, true
}

func keyParts(n *unstable.Node) []string {
	var parts []string
	it := n.Key()
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

func joinKey(parts []string) string { return strings.Join(parts, ".") }

func splitKey(path string) []string {
	if path == "" {
		return nil
	}
	return strings.Split(path, ".")
}

// lookup finds the position of path, falling back to its closest ancestor
// that has one (an absent key is reported where its table starts).
func (idx positions) lookup(path string) (Position, bool) {
	for path != "" {
		if pos, ok := idx[path]; ok {
			return pos, true
		}
		switch i := strings.LastIndexAny(path, ".["); {
		case i < 0:
			path = ""
		default:
			path = path[:i]
		}
	}
	return Position{}, false
}
