package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/suggest"
	"github.com/pelletier/go-toml/v2"
)

// Error is one problem in a release.toml, located by line and column.
type Error struct {
	File string
	Pos  Position // zero when unknown
	Key  string   // the key path, e.g. "build.step[1].run"
	Msg  string
	Hint string // what to do, when there is something to say
}

// Error formats the problem as FILE:LINE:COL: KEY: MSG (hint: ...). A key
// holding characters that cannot be shown (control, format or invalid
// bytes) is written escaped, so that a message never carries them to a
// terminal.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Pos.Line, e.Pos.Column)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(printable(e.Key) + ": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("\n\thint: " + e.Hint)
	}
	return b.String()
}

// ExitCode is 2: a bad configuration is bad input.
func (e *Error) ExitCode() int { return 2 }

// ErrorList is every problem found in one file, in document order.
type ErrorList []*Error

// Error lists the problems one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap exposes the individual errors to errors.As and errors.Is.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}

// ExitCode is 2: a bad configuration is bad input.
func (l ErrorList) ExitCode() int { return 2 }

// Load reads, decodes strictly and validates the release.toml at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrorList{{File: path, Msg: "no such file",
				Hint: "run mkrelease in the folder holding release.toml, or name it with --config"}}
		}
		return nil, fmt.Errorf("read config: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, dir, data)
}

// Parse decodes and validates release.toml bytes. file names the document in
// messages; dir is the folder its relative paths resolve against.
//
// Every key must be spelt exactly as declared ([CheckKeys]); every string
// is checked for control and format characters before it is interpreted
// (see [TextClass]); then the semantic rules apply.
func Parse(file, dir string, data []byte) (*Config, error) {
	if errs := CheckKeys(file, data, &Config{}); len(errs) > 0 {
		return nil, errs
	}
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, decodeErrors(file, err)
	}
	c.File, c.Dir, c.SHA256 = file, dir, checksum.Bytes(data)
	c.pos = indexPositions(data)
	c.origins = map[string]origin{}
	v := validator{file: file, pos: c.pos, origins: c.origins, bad: map[string]bool{}}
	v.text(reflect.ValueOf(&c).Elem())
	v.from(&c, dir)
	if len(c.MetadataFiles) > 0 {
		v.text(reflect.ValueOf(&c).Elem()) // what the files gave; release.toml's own refusals are not repeated
	}
	v.config(&c)
	if len(v.errs) > 0 {
		sortErrors(file, v.errs)
		return nil, v.errs
	}
	return &c, nil
}

// sortErrors puts the problems of file first and the others (those of the
// pyproject.toml files it reads) after, by file name; each file's in
// document order (those without a position last), keeping the order of the
// checks among equals.
func sortErrors(file string, l ErrorList) {
	sort.SliceStable(l, func(i, j int) bool {
		if fi, fj := l[i].File, l[j].File; fi != fj {
			return fi == file || (fj != file && fi < fj)
		}
		a, b := l[i].Pos, l[j].Pos
		switch {
		case a.Line == 0 || b.Line == 0:
			return a.Line != 0 && b.Line == 0
		case a.Line != b.Line:
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// Errorf returns a problem with key (a key path such as "bundle.changelog"
// or "wheel[0].include[1].from") of this release.toml, placed where the key
// is written (or, when absent, where its closest enclosing table is). Stages
// that find a problem only by reading the project use it so that their
// errors point into release.toml like the loader's own.
//
// A value that a pyproject.toml supplied ([Project.From]) is placed in that
// file, at its own key.
func (c *Config) Errorf(key, hint, format string, args ...any) *Error {
	file, pos, at := locate(c.File, c.pos, c.origins, key)
	return &Error{File: file, Pos: pos, Key: at, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// WrittenIn names the file the value at key was written in, as messages
// name it: release.toml, or the pyproject.toml that supplied it
// ([Project.From], [Wheel.From]). Its relative paths are relative to that
// file's folder.
func (c *Config) WrittenIn(key string) string {
	file, _, _ := locate(c.File, c.pos, c.origins, key)
	return file
}

// printable escapes what a terminal would not show as written.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) || r == utf8.RuneError {
			q := strconv.QuoteToGraphic(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}

func decodeErrors(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var list ErrorList
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, col := de.Position()
			key := []string(de.Key())
			e := &Error{File: file, Pos: Position{row, col}, Key: strings.Join(key, "."),
				Msg: "unknown key"}
			if valid := validKeys(key[:len(key)-1]); len(valid) > 0 {
				if s := suggest.Closest(key[len(key)-1], valid); s != "" {
					e.Hint = fmt.Sprintf("did you mean %q? valid keys here: %s", s, strings.Join(valid, ", "))
				} else {
					e.Hint = "valid keys here: " + strings.Join(valid, ", ")
				}
			}
			list = append(list, e)
		}
		return list
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		e := &Error{File: file, Pos: Position{row, col}, Key: strings.Join(de.Key(), "."), Msg: msg}
		if strings.Contains(msg, "cannot decode") || strings.Contains(msg, "cannot store") {
			e.Msg, e.Hint = typeMessage(msg, de.Key())
		}
		return ErrorList{e}
	}
	return ErrorList{{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}}
}

// typeMessage turns go-toml's Go-flavoured type error into one that speaks
// TOML, naming the type the key takes.
func typeMessage(msg string, key []string) (string, string) {
	found := ""
	if _, rest, ok := strings.Cut(msg, "cannot decode TOML "); ok {
		found, _, _ = strings.Cut(rest, " into ")
	}
	t := fieldType(key)
	switch {
	case t == nil:
		return "wrong type: " + msg, ""
	case found == "":
		return "wrong type", "this key takes " + tomlType(t)
	}
	return "wrong type: found a TOML " + found, "this key takes " + tomlType(t)
}

func tomlType(t reflect.Type) string {
	if t == reflect.TypeOf(Duration{}) {
		return "a duration string such as \"10m\""
	}
	switch t.Kind() {
	case reflect.Pointer:
		return tomlType(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Bool:
		return "true or false"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "an array of tables ([[...]])"
		}
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(tomlType(t.Elem()), "a "), "an ") + "s"
	case reflect.Map:
		return "a table of " + strings.TrimPrefix(strings.TrimPrefix(tomlType(t.Elem()), "a "), "an ") + "s"
	case reflect.Struct:
		return "a table"
	}
	return t.String()
}

// fieldType follows a key path through the Config type.
func fieldType(key []string) reflect.Type {
	t := reflect.TypeOf(Config{})
	for _, k := range key {
		for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			f, ok := fieldByTag(t, k)
			if !ok {
				return nil
			}
			t = f.Type
		case reflect.Map:
			t = t.Elem()
		default:
			return nil
		}
	}
	return t
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag := strings.Split(f.Tag.Get("toml"), ",")[0]; tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// validKeys lists the keys allowed in the table at path.
func validKeys(path []string) []string {
	t := fieldType(path)
	for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer) {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		if tag := strings.Split(t.Field(i).Tag.Get("toml"), ",")[0]; tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	sort.Strings(keys)
	return keys
}
