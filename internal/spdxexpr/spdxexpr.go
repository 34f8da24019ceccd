// Package spdxexpr checks SPDX license expressions (SPDX specification
// 2.3, Annex D) as core metadata's License-Expression (PEP 639) and SPDX
// documents use them.
//
// The grammar: an expression is a simple expression, a compound of two
// expressions joined by AND or OR (AND binds tighter), a simple expression
// WITH an exception, or a parenthesised expression. A simple expression is
// a license id (letters, digits, "-" and "."), optionally followed by "+",
// or LicenseRef-<id>, or DocumentRef-<id>:LicenseRef-<id>. Operators must
// be written in upper case (PEP 639 requires it). Whether an id is on the
// SPDX license list is not checked here: the list changes faster than a
// release tool should.
package spdxexpr

import (
	"fmt"
	"strings"
)

// Error is an invalid expression, with the byte offset of the problem.
type Error struct {
	Expr   string
	Offset int
	Msg    string
}

// Error describes the problem and where it is.
func (e *Error) Error() string {
	return fmt.Sprintf("license expression %q: %s at offset %d (write e.g. \"Apache-2.0\", \"MIT OR Apache-2.0\", \"GPL-2.0-only WITH Classpath-exception-2.0\")", e.Expr, e.Msg, e.Offset)
}

type token struct {
	text string
	off  int
}

func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == '(' || c == ')':
			toks = append(toks, token{string(c), i})
			i++
		case isIDChar(c):
			j := i
			for j < len(s) && (isIDChar(s[j]) || s[j] == ':') {
				j++
			}
			if j < len(s) && s[j] == '+' {
				j++
			}
			toks = append(toks, token{s[i:j], i})
			i = j
		default:
			return nil, &Error{Expr: s, Offset: i, Msg: fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return toks, nil
}

func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

type parser struct {
	expr string
	toks []token
	pos  int
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{}, false
}

func (p *parser) fail(msg string) error {
	off := len(p.expr)
	if t, ok := p.peek(); ok {
		off = t.off
	}
	return &Error{Expr: p.expr, Offset: off, Msg: msg}
}

// Check returns nil when expr is a valid SPDX license expression.
func Check(expr string) error {
	if strings.TrimSpace(expr) == "" {
		return &Error{Expr: expr, Msg: "empty expression"}
	}
	toks, err := tokenize(expr)
	if err != nil {
		return err
	}
	p := &parser{expr: expr, toks: toks}
	if err := p.or(0); err != nil {
		return err
	}
	if _, ok := p.peek(); ok {
		return p.fail("unexpected " + p.toks[p.pos].text)
	}
	return nil
}

func (p *parser) or(depth int) error {
	if err := p.and(depth); err != nil {
		return err
	}
	for {
		t, ok := p.peek()
		if !ok || !isOp(t.text, "OR") {
			return nil
		}
		p.pos++
		if err := p.and(depth); err != nil {
			return err
		}
	}
}

func (p *parser) and(depth int) error {
	if err := p.with(depth); err != nil {
		return err
	}
	for {
		t, ok := p.peek()
		if !ok || !isOp(t.text, "AND") {
			return nil
		}
		p.pos++
		if err := p.with(depth); err != nil {
			return err
		}
	}
}

func (p *parser) with(depth int) error {
	if err := p.primary(depth); err != nil {
		return err
	}
	t, ok := p.peek()
	if !ok || !isOp(t.text, "WITH") {
		return nil
	}
	p.pos++
	t, ok = p.peek()
	if !ok || t.text == "(" || t.text == ")" || isKeyword(t.text) || strings.HasSuffix(t.text, "+") {
		return p.fail("expected an exception id after WITH")
	}
	p.pos++
	return nil
}

func (p *parser) primary(depth int) error {
	if depth > 64 {
		return p.fail("too deeply nested")
	}
	t, ok := p.peek()
	switch {
	case !ok:
		return p.fail("expected a license id")
	case t.text == "(":
		p.pos++
		if err := p.or(depth + 1); err != nil {
			return err
		}
		if t, ok := p.peek(); !ok || t.text != ")" {
			return p.fail("expected )")
		}
		p.pos++
		return nil
	case t.text == ")" || isKeyword(t.text):
		return p.fail("expected a license id, found " + t.text)
	}
	if err := checkID(t.text); err != nil {
		return &Error{Expr: p.expr, Offset: t.off, Msg: err.Error()}
	}
	p.pos++
	return nil
}

func isKeyword(s string) bool {
	switch strings.ToUpper(s) {
	case "AND", "OR", "WITH":
		return true
	}
	return false
}

// isOp matches an operator; a lower-case operator is an error reported by
// checkID when it lands where an id is expected, and here it does not match.
func isOp(s, op string) bool { return s == op }

func checkID(id string) error {
	base := strings.TrimSuffix(id, "+")
	if isKeyword(base) {
		return fmt.Errorf("operator %q must be upper case", id)
	}
	if doc, ref, ok := strings.Cut(base, ":"); ok {
		if !strings.HasPrefix(doc, "DocumentRef-") || len(doc) == len("DocumentRef-") || !strings.HasPrefix(ref, "LicenseRef-") || len(ref) == len("LicenseRef-") || strings.Contains(ref, ":") {
			return fmt.Errorf("%q: want DocumentRef-<id>:LicenseRef-<id>", id)
		}
		return nil
	}
	if base == "" || base == "LicenseRef-" {
		return fmt.Errorf("%q is not a license id", id)
	}
	return nil
}
