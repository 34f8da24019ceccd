package config

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

// CheckKeys reports every key of the TOML document data that the Go type of
// v does not declare with exactly that spelling, as an [ErrorList] naming
// file, line and column (nil when every key is known).
//
// The declared keys of a struct are the names of its `toml` tags (or, for
// an untagged exported field, the field name); fields tagged "-" and
// unexported fields take no key. A map takes any key: its keys are the
// user's (environment variables, URL labels, entry points) and are kept as
// written. A value whose type decodes itself from text (a duration) takes
// no keys.
//
// Keys are compared exactly, because the decoder (go-toml/v2) falls back to
// a case-insensitive match: without this check `Run`, `RUN` or
// `"\u212Aind"` (a Kelvin sign) would be read as `run` or `kind`, and a
// second spelling of a key could silently override the reviewed one. A key
// that differs from a declared one only in case is reported with the
// declared spelling and, when that spelling is set too, where.
//
// A document that is not valid TOML yields no findings: the decoder
// reports the syntax error with its own position.
func CheckKeys(file string, data []byte, v any) ErrorList {
	w := keyWalker{
		file:   file,
		seen:   map[string]Position{},
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
	if w.p.Error() != nil {
		return nil
	}
	if len(w.errs) == 0 {
		return nil
	}
	for _, u := range w.errs {
		if u.fold == "" {
			continue
		}
		if pos, ok := w.seen[joinPath(u.parent, u.fold)]; ok {
			u.err.Hint = fmt.Sprintf("did you mean %q? it is set at %d:%d: remove this spelling, only %q is read", u.fold, pos.Line, pos.Column, u.fold)
		}
	}
	list := make(ErrorList, len(w.errs))
	for i, u := range w.errs {
		list[i] = u.err
	}
	return list
}

type keyWalker struct {
	file   string
	p      unstable.Parser
	seen   map[string]Position // every declared key set, by path
	arrays map[string]int      // array-table path (without indices) → elements so far
	errs   []*unknownKey
}

type unknownKey struct {
	err    *Error
	parent string // the table holding the key
	fold   string // the declared key it equals but for case, if any
}

// header follows a [table] or [[array table]] header from the root type and
// returns the path and type of the table it opens.
func (w *keyWalker) header(e *unstable.Node, root reflect.Type) (string, reflect.Type) {
	var parts []string
	var plain []string
	t := root
	it := e.Key()
	for i := 0; it.Next(); i++ {
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
func (w *keyWalker) keyValue(kv *unstable.Node, prefix string, t reflect.Type) {
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
func (w *keyWalker) value(v *unstable.Node, path string, t reflect.Type) {
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
func (w *keyWalker) child(t reflect.Type, parent, k string, n *unstable.Node) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if textType(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Interface:
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	keys := structKeys(t)
	if ft, ok := keys[k]; ok {
		if pos, ok := nodePosition(&w.p, n); ok {
			path := joinPath(parent, k)
			if _, dup := w.seen[path]; !dup {
				w.seen[path] = pos
			}
		}
		return ft
	}
	pos, _ := nodePosition(&w.p, n)
	valid := make([]string, 0, len(keys))
	for name := range keys {
		valid = append(valid, name)
	}
	sort.Strings(valid)
	e := &Error{File: w.file, Pos: pos, Key: joinPath(parent, k), Msg: "unknown key"}
	u := &unknownKey{err: e, parent: parent}
	for _, name := range valid {
		if strings.EqualFold(name, k) || strings.ToLower(k) == name {
			u.fold = name
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
		e.Key = joinPath(parent, strconv.QuoteToASCII(k))
		e.Msg = "unknown key: declared keys are ASCII"
		if u.fold != "" {
			e.Hint = fmt.Sprintf("did you mean %q? type it in plain ASCII", u.fold)
		} else if len(valid) > 0 {
			e.Hint = "valid keys here: " + strings.Join(valid, ", ")
		}
	case u.fold != "":
		e.Msg = "unknown key (keys are case-sensitive)"
		e.Hint = fmt.Sprintf("did you mean %q? rename it", u.fold)
	case len(valid) == 0:
	default:
		if s := suggest.Closest(k, valid); s != "" {
			e.Hint = fmt.Sprintf("did you mean %q? valid keys here: %s", s, strings.Join(valid, ", "))
		} else {
			e.Hint = "valid keys here: " + strings.Join(valid, ", ")
		}
	}
	w.errs = append(w.errs, u)
	return nil
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
