package config

import (
	"encoding"
	"reflect"

	"github.com/mkrelease/mkrelease/internal/tomlkeys"
)

// CheckKeys reports every key of the TOML document data that the Go type of
// v does not declare with exactly that spelling, as an [ErrorList] naming
// file, line and column (nil when every key is known). The rules are
// [tomlkeys.Check]'s.
//
// Keys are compared exactly, because the decoder (go-toml/v2) falls back to
// a case-insensitive match: without this check `Run`, `RUN` or
// `"\u212Aind"` (a Kelvin sign) would be read as `run` or `kind`, and a
// second spelling of a key could silently override the reviewed one.
func CheckKeys(file string, data []byte, v any) ErrorList {
	found := tomlkeys.Check(data, v)
	if len(found) == 0 {
		return nil
	}
	list := make(ErrorList, len(found))
	for i, u := range found {
		list[i] = &Error{File: file, Pos: Position{Line: u.Line, Column: u.Column}, Key: u.Path, Msg: u.Msg, Hint: u.Hint}
	}
	return list
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// textType reports whether values of t decode themselves from a string.
func textType(t reflect.Type) bool {
	return t.Implements(textUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler)
}

func joinPath(parent, k string) string {
	if parent == "" {
		return k
	}
	return parent + "." + k
}
