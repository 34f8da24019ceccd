// Package tomlkeys checks that every key of a TOML document is spelt
// exactly as the Go type it is decoded into declares it.
//
// The decoder mkrelease uses (go-toml/v2) matches a key to a struct field
// case-insensitively when no field has exactly that name, so `Run`, `RUN`
// or `"\u212Aind"` (a Kelvin sign) are read as `run` or `kind`, and a
// second spelling of a key can silently override the reviewed one.
// release.toml, release.lock and the dependency lock (a pylock.toml) are
// checked with [Check] before they are decoded.
package tomlkeys

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/suggest"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Unknown is a key of a document that the Go type does not declare with
// exactly that spelling.
type Unknown struct {
	// Line and Column (1-based) locate the key in the document; zero when
	// the parser gave no position.
	Line, Column int
	// Path is the key's path from the root with array indices, such as
	// "build.step[1].Run". A component that is not ASCII is quoted
	// (strconv.QuoteToASCII), so that a look-alike shows as what it is.
	Path string
	// Msg says what is wrong: "unknown key", "unknown key (keys are
	// case-sensitive)" or "unknown key: declared keys are ASCII".
	Msg string
	// Hint says what to do (the declared spelling, the valid keys); it may
	// be empty.
	Hint string
	// Declared is the declared key this one equals but for case (or
	// Unicode case folding): the key the decoder would have read it as.
	// "" when there is none.
	Declared string
	// Closest is the declared key nearest to a misspelt one, when one is
	// near; "" when Declared is set or none is near.
	Closest string
}

// Check reports every key of the TOML document data that the Go type of v
// does not declare with exactly that spelling, in document order (nil when
// every key is known).
//
// The declared keys of a struct are the names of its `toml` tags (or, for
// an untagged exported field, the field name); fields tagged "-" and
// unexported fields take no key; embedded structs lend theirs, as the
// decoder does. A map takes any key: its keys are the user's (environment
// variables, URL labels, tool tables) and are kept as written. A value
// whose type decodes itself from text (a duration) and an interface value
// take any keys.
//
// A key that differs from a declared one only in case is reported with
// the declared spelling in Hint and, when that spelling is set too, where.
// A document that is not valid TOML yields no findings: the decoder
// reports the syntax error with its own position.
func Check(data []byte, v any) []Unknown {
	w := walker{
		seen:   map[string][2]int{},
		arrays: map[string]int{},
	}
	w.p.Reset(data)
	root := reflect.TypeOf(v)
	table := ""       // path of the current table, with indices
	tableType := root // its Go type; nil when not checked
	for w.p.NextExpression() {
		e := w.p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table, tableType = w.header(e, root)
		case unstable.KeyValue:
			w.keyValue(e, table, tableType)
		}
	}
	if w.p.Error() != nil || len(w.found) == 0 {
		return nil
	}
	for i := range w.found {
		u := &w.found[i]
		if u.Declared == "" {
			continue
		}
		if pos, ok := w.seen[joinPath(w.parents[i], u.Declared)]; ok {
			u.Hint = fmt.Sprintf("did you mean %q? it is set at %d:%d: remove this spelling, only %q is read", u.Declared, pos[0], pos[1], u.Declared)
		}
	}
	return w.found
}

type walker struct {
	p       unstable.Parser
	seen    map[string][2]int // every declared key set, by path: line, column
	arrays  map[string]int    // array-table path (without indices) → elements so far
	found   []Unknown
	parents []string // the table holding found[i]
}

// header follows a [table] or [[array table]] header from the root type and
// returns the path and type of the table it opens.
func (w *walker) header(e *unstable.Node, root reflect.Type) (string, reflect.Type) {
	var parts []string
	var plain []string
	t := root
	it := e.Key()
	for it.Next() {
		n := it.Node()
		k := string(n.Data)
		last := it.IsLast()
		parent := strings.Join(parts, ".")
		if t != nil {
			t = w.child(t, parent, k, n)
		}
		plain = append(plain, k)
		parts = append(parts, k)
		key := strings.Join(plain, "\x00")
		switch {
		case last && e.Kind == unstable.ArrayTable:
			n := w.arrays[key]
			w.arrays[key] = n + 1
			parts[len(parts)-1] += "[" + strconv.Itoa(n) + "]"
			t = elem(t)
		default:
			if n, ok := w.arrays[key]; ok {
				// A component naming an array table seen before is its
				// latest element, as in TOML.
				parts[len(parts)-1] += "[" + strconv.Itoa(n-1) + "]"
				t = elem(t)
			}
		}
	}
	return strings.Join(parts, "."), t
}

// keyValue checks the (possibly dotted) key of a key/value pair in the table
// at prefix, then the keys of its value.
func (w *walker) keyValue(kv *unstable.Node, prefix string, t reflect.Type) {
	path := prefix
	it := kv.Key()
	for it.Next() {
		n := it.Node()
		k := string(n.Data)
		if t != nil {
			t = w.child(t, path, k, n)
		}
		path = joinPath(path, k)
	}
	w.value(kv.Value(), path, t)
}

// value checks the keys of inline tables, also inside arrays, against t.
func (w *walker) value(v *unstable.Node, path string, t reflect.Type) {
	if t == nil {
		return
	}
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				w.keyValue(n, path, t)
			}
		}
	case unstable.Array:
		et := elem(t)
		it := v.Children()
		for i := 0; it.Next(); {
			n := it.Node()
			if n.Kind == unstable.Comment {
				continue
			}
			w.value(n, path+"["+strconv.Itoa(i)+"]", et)
			i++
		}
	}
}

// child resolves key k of the table of type t at path parent. It returns the
// key's type, or nil when nothing below it can be checked (an unknown key,
// already reported; a value that is not a table, left to the decoder).
func (w *walker) child(t reflect.Type, parent, k string, n *unstable.Node) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if textType(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Struct:
	default:
		return nil
	}
	keys := structKeys(t)
	line, col := w.position(n)
	if ft, ok := keys[k]; ok {
		if line > 0 {
			path := joinPath(parent, k)
			if _, dup := w.seen[path]; !dup {
				w.seen[path] = [2]int{line, col}
			}
		}
		return ft
	}
	valid := make([]string, 0, len(keys))
	for name := range keys {
		valid = append(valid, name)
	}
	sort.Strings(valid)
	u := Unknown{Line: line, Column: col, Path: joinPath(parent, k), Msg: "unknown key"}
	for _, name := range valid {
		if strings.EqualFold(name, k) || strings.ToLower(k) == name {
			u.Declared = name
			break
		}
	}
	ascii := true
	for i := 0; i < len(k); i++ {
		ascii = ascii && k[i] < utf8.RuneSelf
	}
	switch {
	case !ascii:
		// A look-alike (a Kelvin sign, a Cyrillic letter) prints like the
		// key it imitates: show it escaped.
		u.Path = joinPath(parent, strconv.QuoteToASCII(k))
		u.Msg = "unknown key: declared keys are ASCII"
		if u.Declared != "" {
			u.Hint = fmt.Sprintf("did you mean %q? type it in plain ASCII", u.Declared)
		} else if len(valid) > 0 {
			u.Hint = "valid keys here: " + strings.Join(valid, ", ")
		}
	case u.Declared != "":
		u.Msg = "unknown key (keys are case-sensitive)"
		u.Hint = fmt.Sprintf("did you mean %q? rename it", u.Declared)
	case len(valid) == 0:
	default:
		if s := suggest.Closest(k, valid); s != "" {
			u.Closest = s
			u.Hint = fmt.Sprintf("did you mean %q? valid keys here: %s", s, strings.Join(valid, ", "))
		} else {
			u.Hint = "valid keys here: " + strings.Join(valid, ", ")
		}
	}
	w.found = append(w.found, u)
	w.parents = append(w.parents, parent)
	return nil
}

// position is where node n starts (1-based line and column), or 0, 0.
func (w *walker) position(n *unstable.Node) (int, int) {
	if n == nil || !n.Valid() || n.Raw.Length == 0 {
		return 0, 0
	}
	s := w.p.Shape(n.Raw)
	return s.Start.Line, s.Start.Column
}

// elem is the element type of a slice or array type, through pointers; nil
// for other types (the decoder reports the mismatch).
func elem(t reflect.Type) reflect.Type {
	if t == nil {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return t.Elem()
	case reflect.Interface:
		return t
	}
	return nil
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// textType reports whether values of t decode themselves from a string.
func textType(t reflect.Type) bool {
	return t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

// structKeys maps the keys a struct type declares to their types, following
// embedded structs as the decoder does.
func structKeys(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct && !textType(ft) {
				for k, v := range structKeys(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func joinPath(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}
