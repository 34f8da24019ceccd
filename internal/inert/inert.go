// Package inert makes text safe to print on a terminal: what comes from
// evidence, a wheel, a bundle or a configuration may hold bytes a terminal
// acts on (an escape sequence that moves the cursor, clears a line or
// retitles the window; a carriage return that overwrites a line; a bidi
// override that reorders what is shown), so that a refusal could be drawn
// over by a forged "published". Such text is shown escaped instead, as Go
// quotes strings:
//
//   - the C0 controls but tab and newline, and DEL: \x1b, \r, \x7f …;
//   - the C1 controls U+0080..U+009F (CSI is U+009B): \u009b …;
//   - the bidi embeddings, overrides and isolates (U+202A..U+202E,
//     U+2066..U+2069) and the line and paragraph separators
//     (U+2028, U+2029): \u202e …;
//   - a byte that is not part of valid UTF-8: \xff ….
//
// A backslash is left as it is: escaped text is for a person to read, and
// the bytes that could act on the terminal are gone either way.
package inert

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// escapes reports whether r is shown escaped.
func escapes(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Escape returns s with every byte a terminal would act on escaped.
func Escape(s string) string {
	if clean(s) {
		return s
	}
	return string(appendEscaped(nil, []byte(s)))
}

// clean reports whether s needs no escaping (the common case, checked
// without allocating).
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || escapes(r) {
			return false
		}
		i += n
	}
	return true
}

// appendEscaped appends p to dst with every byte a terminal would act on
// escaped.
func appendEscaped(dst, p []byte) []byte {
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			dst = fmt.Appendf(dst, `\x%02x`, p[i])
		case !escapes(r):
			dst = append(dst, p[i:i+n]...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r < 0x80:
			dst = fmt.Appendf(dst, `\x%02x`, r)
		default:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		}
		i += n
	}
	return dst
}

// Writer escapes what is written through it (see [Escape]) before passing
// it on. A UTF-8 sequence split between two writes is kept back until it
// is whole (or proves not to be), so it is judged as one character.
type Writer struct {
	w    io.Writer
	tail []byte // the start of a UTF-8 sequence the last write ended in
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Underlying is the writer escaped text goes to: for a caller that draws
// on the terminal itself (the progress display) and escapes what it draws.
func (w *Writer) Underlying() io.Writer { return w.w }

// Write escapes p and writes it on; it reports len(p) written when the
// escaped text was.
func (w *Writer) Write(p []byte) (int, error) {
	data := append(w.tail, p...)
	w.tail = nil
	// Keep back an incomplete sequence at the end (at most 3 bytes).
	if cut := incompleteTail(data); cut < len(data) {
		w.tail = append([]byte(nil), data[cut:]...)
		data = data[:cut]
	}
	if len(data) == 0 {
		return len(p), nil
	}
	if _, err := w.w.Write(appendEscaped(make([]byte, 0, len(data)+16), data)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what a write ended in and was kept back: an incomplete
// UTF-8 sequence, escaped byte by byte.
func (w *Writer) Flush() error {
	if len(w.tail) == 0 {
		return nil
	}
	data := w.tail
	w.tail = nil
	_, err := w.w.Write(appendEscaped(nil, data))
	return err
}

// incompleteTail is where a UTF-8 sequence that data ends in before it is
// complete starts, or len(data).
func incompleteTail(data []byte) int {
	for k := 1; k <= 3 && k <= len(data); k++ {
		c := data[len(data)-k]
		if c < 0x80 {
			return len(data) // ASCII: nothing pending
		}
		if c >= 0xc0 { // a leading byte
			var need int
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			default:
				need = 2
			}
			if need > k {
				return len(data) - k
			}
			return len(data)
		}
	}
	return len(data)
}
