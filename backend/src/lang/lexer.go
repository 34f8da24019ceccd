package lang

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tokEOF tokKind = iota
	tokNewline
	tokIdent
	tokNumber
	tokIn
	tokLet
	tokOut
	tokComma
	tokAssign
	tokPlus
	tokMinus
	tokStar
	tokSlash
	tokLParen
	tokRParen
)

// token is one lexical token with its position.
type token struct {
	kind tokKind
	text string
	pos  Pos
	num  float64 // value of a tokNumber
}

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokNewline:
		return "end of line"
	case tokIn, tokLet, tokOut:
		return fmt.Sprintf("keyword %q", t.text)
	case tokIdent:
		return fmt.Sprintf("name %q", t.text)
	case tokNumber:
		return fmt.Sprintf("number %s", t.text)
	}
	return strconv.Quote(t.text)
}

// keyword returns the kind of a reserved word.
func keyword(s string) (tokKind, bool) {
	switch s {
	case "in":
		return tokIn, true
	case "let":
		return tokLet, true
	case "out":
		return tokOut, true
	}
	return tokIdent, false
}

// punct returns the kind of a one-byte punctuation token.
func punct(c byte) (tokKind, bool) {
	switch c {
	case ',':
		return tokComma, true
	case '=':
		return tokAssign, true
	case '+':
		return tokPlus, true
	case '-':
		return tokMinus, true
	case '*':
		return tokStar, true
	case '/':
		return tokSlash, true
	case '(':
		return tokLParen, true
	case ')':
		return tokRParen, true
	}
	return tokEOF, false
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// lex splits src into tokens. Newlines inside parentheses are skipped, so an
// expression may continue on the next line while a parenthesis is open.
// Columns count bytes from 1.
func lex(file string, src []byte) ([]token, error) {
	var toks []token
	line, lineStart, depth := 1, 0, 0
	errAt := func(off int, format string, args ...any) error {
		return &Error{File: file, Line: line, Col: off - lineStart + 1, Msg: fmt.Sprintf(format, args...)}
	}
	for i := 0; i < len(src); {
		c := src[i]
		pos := Pos{Line: line, Col: i - lineStart + 1}
		switch {
		case c == '\n':
			if depth == 0 && len(toks) > 0 && toks[len(toks)-1].kind != tokNewline {
				toks = append(toks, token{kind: tokNewline, text: "\n", pos: pos})
			}
			i++
			line, lineStart = line+1, i
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isLetter(c):
			j := i
			for j < len(src) && (isLetter(src[j]) || isDigit(src[j])) {
				j++
			}
			text := string(src[i:j])
			kind, _ := keyword(text)
			toks = append(toks, token{kind: kind, text: text, pos: pos})
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := scanNumber(src, i)
			text := string(src[i:j])
			if j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == '.') {
				for j < len(src) && (isLetter(src[j]) || isDigit(src[j]) || src[j] == '.' ||
					(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E')) {
					j++
				}
				return nil, errAt(i, "malformed number %q", src[i:j])
			}
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return nil, errAt(i, "number %s out of range", text)
			}
			toks = append(toks, token{kind: tokNumber, text: text, pos: pos, num: v})
			i = j
		default:
			kind, ok := punct(c)
			if !ok {
				r, _ := utf8.DecodeRune(src[i:])
				return nil, errAt(i, "unexpected character %q", r)
			}
			switch kind {
			case tokLParen:
				depth++
			case tokRParen:
				if depth > 0 {
					depth--
				}
			}
			toks = append(toks, token{kind: kind, text: string(c), pos: pos})
			i++
		}
	}
	toks = append(toks, token{kind: tokEOF, pos: Pos{Line: line, Col: len(src) - lineStart + 1}})
	return toks, nil
}

// scanNumber returns the end of the number literal starting at src[i]:
// digits, an optional fraction and an optional exponent (1, 2.5, .5, 1e-3).
func scanNumber(src []byte, i int) int {
	digits := func(j int) int {
		for j < len(src) && isDigit(src[j]) {
			j++
		}
		return j
	}
	j := digits(i)
	if j < len(src) && src[j] == '.' {
		j = digits(j + 1)
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(src[k]) {
			j = digits(k)
		}
		// Otherwise the 'e' is left for the malformed-number check.
	}
	return j
}
