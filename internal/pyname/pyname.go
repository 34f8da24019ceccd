// Package pyname validates, normalises and escapes Python project names.
//
// It implements the PyPA "Names and normalization" specification
// (https://packaging.python.org/en/latest/specifications/name-normalization/):
// the name format of the core metadata "Name" field (originally PEP 508) in
// [Valid] and the normalised form (originally PEP 503) in [Normalize] and
// [Equal]; and the distribution-name rule of the "Binary distribution
// format" specification's "Escaping and Unicode" section (originally PEP 427
// as amended by PEP 491) in [WheelEscape], which is also the name used for
// ".dist-info" and ".data" directories and sdist file names.
//
// A valid name matches ^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$ ignoring
// ASCII case. Normalisation lower-cases ASCII letters and replaces each run
// of ".", "-" and "_" with a single "-". Only ASCII letters are lower-cased
// (every other byte is kept as is), so the functions are byte-exact and
// total on invalid input too; valid names are pure ASCII, where this is the
// specification's rule.
package pyname

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Normalize returns the normalised form of name: ASCII letters lower-cased
// and every run of ".", "-" and "_" replaced by a single "-", e.g.
// "Friendly_Bard" and "friendly.-bard" both become "friendly-bard".
func Normalize(name string) string {
	return collapse(name, '-')
}

// WheelEscape returns the distribution-name component of a wheel,
// ".dist-info" or ".data" file name: the normalised name with "-" replaced
// by "_", e.g. "foo_bar_baz" for "Foo.Bar-baz". The result contains no "-",
// so it can be joined to the other components with "-". Check the name with
// [Valid] first; WheelEscape does not validate.
func WheelEscape(name string) string {
	return collapse(name, '_')
}

// Equal reports whether a and b are the same project name, i.e. whether
// their normalised forms are equal.
func Equal(a, b string) bool {
	return Normalize(a) == Normalize(b)
}

func isSep(c byte) bool { return c == '-' || c == '_' || c == '.' }

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// collapse lower-cases ASCII letters and replaces runs of separators by sep.
func collapse(name string, sep byte) string {
	var b strings.Builder
	b.Grow(len(name))
	inRun := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isSep(c) {
			if !inRun {
				b.WriteByte(sep)
				inRun = true
			}
			continue
		}
		inRun = false
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// InvalidNameError reports a string that is not a valid project name.
type InvalidNameError struct {
	// Name is the string that was checked.
	Name string
	// Offset is the byte offset of the offending character in Name, or
	// -1 when Name is empty.
	Offset int
	// Char is the offending character, utf8.RuneError for a byte that is
	// not valid UTF-8, or 0 when Name is empty.
	Char rune
	// Reason says what is wrong, e.g. `character ' ' at offset 3 is not allowed`.
	Reason string
	// Hint suggests how to fix the name; it may be empty.
	Hint string
}

// Error implements the error interface.
func (e *InvalidNameError) Error() string {
	msg := fmt.Sprintf("invalid project name %q: %s", e.Name, e.Reason)
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

const rule = `names consist of ASCII letters, digits, ".", "_" and "-" and start and end with a letter or digit`

// Valid returns nil if name is a valid project name and an *InvalidNameError
// naming the first offending character otherwise.
func Valid(name string) error {
	if name == "" {
		return &InvalidNameError{Name: name, Offset: -1, Reason: "name is empty", Hint: rule + `, e.g. "my-project"`}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAlnum(c) {
			continue
		}
		r, size := utf8.DecodeRuneInString(name[i:])
		var what string
		switch {
		case r == utf8.RuneError && size <= 1:
			what = fmt.Sprintf("byte %#02x at offset %d is not valid UTF-8", c, i)
		case !isSep(c):
			what = fmt.Sprintf("character %q at offset %d is not allowed", r, i)
		case i == 0:
			what = fmt.Sprintf("name starts with %q", r)
		case i == len(name)-1:
			what = fmt.Sprintf("name ends with %q", r)
		default:
			continue
		}
		return &InvalidNameError{Name: name, Offset: i, Char: r, Reason: what, Hint: hint(name)}
	}
	return nil
}

// hint suggests a valid spelling of an invalid ASCII name by replacing runs
// of other characters with "-" and trimming separators from the ends.
func hint(name string) string {
	var b strings.Builder
	pending := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			return rule
		}
		switch {
		case isAlnum(c):
			if pending && b.Len() > 0 {
				b.WriteByte('-')
			}
			pending = false
			b.WriteByte(c)
		case isSep(c) && !pending && b.Len() > 0 && i+1 < len(name) && isAlnum(name[i+1]):
			b.WriteByte(c)
		default:
			pending = true
		}
	}
	if s := b.String(); s != "" && s != name {
		return fmt.Sprintf("%s; did you mean %q?", rule, s)
	}
	return rule
}
