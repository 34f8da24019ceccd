package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// TextClass says which characters a string may hold. Every string of
// release.toml (map keys included) is checked against the class of its
// field, given by the field's `text` tag; a field without one is a
// [TextLine].
type TextClass int

const (
	// TextLine is a one-line value: a name, version, path, URL, entry point
	// and anything else that reaches a file name, METADATA or a lock. It
	// holds no control character (C0 U+0000–U+001F, DEL, C1
	// U+0080–U+009F), no line or paragraph separator, and no invisible
	// format character (Unicode category Cf: bidi embeddings, overrides,
	// isolates and marks, zero-width spaces and joiners, the BOM, ...).
	TextLine TextClass = iota
	// TextProse is one line of human text that goes into METADATA or the
	// SBOM (a summary, an author's name, a keyword): as [TextLine], but the
	// zero-width joiner and non-joiner (U+200D, U+200C), which some scripts
	// need, are allowed. Bidi controls are not: they can make a value read
	// differently from what it is.
	TextProse
	// TextCommand is an argument of a command or an environment value: it
	// may hold tabs and newlines (a script for `sh -c`), but no other
	// control character (no NUL, which cannot be passed to a process, no
	// carriage return, which hides what precedes it on a terminal) and no
	// format character at all.
	TextCommand
	// TextDocument is the text of a project file that goes into a wheel (the
	// readme): valid UTF-8 with tabs, newlines, form feeds and CRLF line
	// ends, but no NUL, no lone carriage return and no other control
	// character. Format characters are allowed: prose in right-to-left
	// scripts needs them.
	TextDocument
)

// Hint is what a value holding a character the class refuses is told to do.
func (c TextClass) Hint() string {
	switch c {
	case TextProse:
		return "this text goes into the wheels' METADATA and the SBOM: one line with no control characters and no bidi or zero-width format characters; remove it"
	case TextCommand:
		return "commands and environment values may hold tabs and newlines, but no other control character (no NUL, no carriage return) and no bidi or zero-width format character; remove it"
	case TextDocument:
		return "the file goes into the wheels' METADATA as UTF-8 text: tabs, newlines and CRLF line ends only; remove the character"
	}
	return "names, versions, paths, URLs and other one-line values hold no control characters, line breaks or invisible format characters (bidi controls, zero-width spaces); remove it"
}

// CheckText returns the index (in characters, from 0) and the description
// of the first character of s that class c refuses; ok is true when there
// is none.
func CheckText(s string, c TextClass) (at int, what string, ok bool) {
	i := 0
	for off, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[off:]); size == 1 {
				return i, fmt.Sprintf("an invalid UTF-8 byte 0x%02x", s[off]), false
			}
		}
		if refused(r, c, s[off+utf8.RuneLen(r):]) {
			return i, describe(r), false
		}
		i++
	}
	return 0, "", true
}

func refused(r rune, c TextClass, rest string) bool {
	switch {
	case r == '\t' || r == '\n':
		return c == TextLine || c == TextProse
	case r == '\f':
		return c != TextDocument
	case r == '\r':
		return c != TextDocument || !strings.HasPrefix(rest, "\n")
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return true
	case r == '\u2028' || r == '\u2029':
		return c != TextDocument
	case unicode.Is(unicode.Cf, r):
		switch c {
		case TextDocument:
			return false
		case TextProse:
			return r != '\u200c' && r != '\u200d'
		}
		return true
	}
	return false
}

// charNames names the characters a refusal is most likely about.
var charNames = map[rune]string{
	0x00: "NUL", 0x07: "BEL", 0x08: "BACKSPACE", '\t': "TAB", '\n': "LINE FEED", 0x0b: "VERTICAL TAB",
	'\f': "FORM FEED", '\r': "CARRIAGE RETURN", 0x1b: "ESCAPE", 0x7f: "DELETE", 0x85: "NEXT LINE",
	0x00ad: "SOFT HYPHEN", 0x061c: "ARABIC LETTER MARK", 0x180e: "MONGOLIAN VOWEL SEPARATOR",
	0x200b: "ZERO WIDTH SPACE", 0x200c: "ZERO WIDTH NON-JOINER", 0x200d: "ZERO WIDTH JOINER",
	0x200e: "LEFT-TO-RIGHT MARK", 0x200f: "RIGHT-TO-LEFT MARK", 0x2028: "LINE SEPARATOR",
	0x2029: "PARAGRAPH SEPARATOR", 0x202a: "LEFT-TO-RIGHT EMBEDDING", 0x202b: "RIGHT-TO-LEFT EMBEDDING",
	0x202c: "POP DIRECTIONAL FORMATTING", 0x202d: "LEFT-TO-RIGHT OVERRIDE", 0x202e: "RIGHT-TO-LEFT OVERRIDE",
	0x2060: "WORD JOINER", 0x2066: "LEFT-TO-RIGHT ISOLATE", 0x2067: "RIGHT-TO-LEFT ISOLATE",
	0x2068: "FIRST STRONG ISOLATE", 0x2069: "POP DIRECTIONAL ISOLATE", 0xfeff: "ZERO WIDTH NO-BREAK SPACE (BOM)",
}

func describe(r rune) string {
	if n, ok := charNames[r]; ok {
		return fmt.Sprintf("U+%04X %s", r, n)
	}
	switch {
	case r < 0x20 || (r >= 0x7f && r <= 0x9f):
		return fmt.Sprintf("U+%04X, a control character", r)
	case r == 0x2028 || r == 0x2029:
		return fmt.Sprintf("U+%04X, a line break", r)
	}
	return fmt.Sprintf("U+%04X, an invisible format character", r)
}

// textClassOf reads a field's `text` tag.
func textClassOf(f reflect.StructField) TextClass {
	switch f.Tag.Get("text") {
	case "prose":
		return TextProse
	case "command":
		return TextCommand
	}
	return TextLine
}

// text checks every string of the decoded document (struct fields, slice
// elements, map keys and values) against its field's class, recording each
// refused one so that the semantic checks do not report it again.
func (v *validator) text(rv reflect.Value) { v.textValue(rv, "", TextLine) }

func (v *validator) textValue(rv reflect.Value, path string, class TextClass) {
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !rv.IsNil() {
			v.textValue(rv.Elem(), path, class)
		}
	case reflect.Struct:
		t := rv.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if !f.IsExported() || name == "-" || textType(f.Type) {
				continue
			}
			if name == "" {
				name = f.Name
			}
			v.textValue(rv.Field(i), joinPath(path, name), textClassOf(f))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len(); i++ {
			v.textValue(rv.Index(i), fmt.Sprintf("%s[%d]", path, i), class)
		}
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return
		}
		keys := make([]string, 0, rv.Len())
		for _, k := range rv.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			kp := joinPath(path, k)
			if at, what, ok := CheckText(k, TextLine); !ok {
				v.errorf(kp, TextLine.Hint(), "the key holds %s at character %d", what, at+1)
				v.bad[kp] = true
				continue
			}
			v.textValue(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())), kp, class)
		}
	case reflect.String:
		if at, what, ok := CheckText(rv.String(), class); !ok {
			v.errorf(path, class.Hint(), "holds %s at character %d", what, at+1)
			v.bad[path] = true
		}
	}
}
