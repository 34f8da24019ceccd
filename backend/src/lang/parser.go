package lang

import "fmt"

// expr is a node of the expression syntax tree.
type expr interface {
	// start returns the position of the first token of the expression.
	start() Pos
}

type (
	numExpr struct {
		pos  Pos
		text string
		val  float64
	}
	identExpr struct {
		pos  Pos
		name string
	}
	negExpr struct {
		pos Pos
		x   expr
	}
	binaryExpr struct {
		op   tokKind // tokPlus, tokMinus, tokStar or tokSlash
		x, y expr
	}
	callExpr struct {
		pos  Pos
		name string
		args []expr
	}
)

func (e *numExpr) start() Pos    { return e.pos }
func (e *identExpr) start() Pos  { return e.pos }
func (e *negExpr) start() Pos    { return e.pos }
func (e *binaryExpr) start() Pos { return e.x.start() }
func (e *callExpr) start() Pos   { return e.pos }

// stmt is one statement: `in`, `let` or `out`.
type stmt struct {
	kind  tokKind // tokIn, tokLet or tokOut
	pos   Pos     // position of the keyword
	names []token // tokIn: the declared inputs; tokLet: the one name
	x     expr    // tokLet and tokOut: the expression
}

// syntax is a parsed program.
type syntax struct {
	stmts []stmt
	end   Pos // position of the end of file
}

// parser is a recursive-descent parser over the token list.
type parser struct {
	file  string
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) errorf(pos Pos, format string, args ...any) error {
	return &Error{File: p.file, Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) unexpected(t token, want string) error {
	return p.errorf(t.pos, "unexpected %s, expected %s", t.describe(), want)
}

// parseProgram parses the whole token list.
func (p *parser) parseProgram() (*syntax, error) {
	prog := &syntax{}
	var out *stmt
	for {
		t := p.peek()
		switch t.kind {
		case tokEOF:
			prog.end = t.pos
			return prog, nil
		case tokNewline:
			p.next()
			continue
		}
		if out != nil {
			return nil, p.errorf(t.pos, "statement after out (out must be the last statement, see %d:%d)", out.pos.Line, out.pos.Col)
		}
		s, err := p.parseStmt()
		if err != nil {
			return nil, err
		}
		if t := p.peek(); t.kind != tokNewline && t.kind != tokEOF {
			return nil, p.unexpected(t, "end of line")
		}
		prog.stmts = append(prog.stmts, s)
		if s.kind == tokOut {
			out = &prog.stmts[len(prog.stmts)-1]
		}
	}
}

func (p *parser) parseStmt() (stmt, error) {
	t := p.next()
	s := stmt{kind: t.kind, pos: t.pos}
	switch t.kind {
	case tokIn:
		for {
			name := p.next()
			if name.kind != tokIdent {
				return s, p.unexpected(name, "input name")
			}
			s.names = append(s.names, name)
			if p.peek().kind != tokComma {
				return s, nil
			}
			p.next()
		}
	case tokLet:
		name := p.next()
		if name.kind != tokIdent {
			return s, p.unexpected(name, "name")
		}
		s.names = []token{name}
		if eq := p.next(); eq.kind != tokAssign {
			return s, p.unexpected(eq, `"="`)
		}
		x, err := p.parseExpr()
		s.x = x
		return s, err
	case tokOut:
		x, err := p.parseExpr()
		s.x = x
		return s, err
	case tokIdent:
		if p.peek().kind == tokAssign {
			return s, p.errorf(t.pos, "unexpected %s, expected in, let or out (did you mean let %s = ...?)", t.describe(), t.text)
		}
	}
	return s, p.unexpected(t, "in, let or out")
}

// enter tracks the nesting depth of the expression being parsed.
func (p *parser) enter(pos Pos) error {
	p.depth++
	if p.depth > maxNesting {
		return p.errorf(pos, "expression nested too deeply (limit %d)", maxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseExpr parses a sum: term { (+|-) term }.
func (p *parser) parseExpr() (expr, error) {
	x, err := p.parseTerm()
	for err == nil && (p.peek().kind == tokPlus || p.peek().kind == tokMinus) {
		op := p.next()
		var y expr
		y, err = p.parseTerm()
		x = &binaryExpr{op: op.kind, x: x, y: y}
	}
	return x, err
}

// parseTerm parses a product: unary { (*|/) unary }.
func (p *parser) parseTerm() (expr, error) {
	x, err := p.parseUnary()
	for err == nil && (p.peek().kind == tokStar || p.peek().kind == tokSlash) {
		op := p.next()
		var y expr
		y, err = p.parseUnary()
		x = &binaryExpr{op: op.kind, x: x, y: y}
	}
	return x, err
}

// parseUnary parses { - } primary.
func (p *parser) parseUnary() (expr, error) {
	t := p.peek()
	if t.kind != tokMinus {
		return p.parsePrimary()
	}
	p.next()
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.parseUnary()
	return &negExpr{pos: t.pos, x: x}, err
}

// parsePrimary parses a number, a name, a call or a parenthesised
// expression.
func (p *parser) parsePrimary() (expr, error) {
	t := p.next()
	switch t.kind {
	case tokNumber:
		return &numExpr{pos: t.pos, text: t.text, val: t.num}, nil
	case tokIdent:
		if p.peek().kind != tokLParen {
			return &identExpr{pos: t.pos, name: t.text}, nil
		}
		p.next()
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		call := &callExpr{pos: t.pos, name: t.text}
		if p.peek().kind == tokRParen {
			p.next()
			return call, nil
		}
		for {
			arg, err := p.parseExpr()
			if err != nil {
				return nil, err
			}
			call.args = append(call.args, arg)
			switch sep := p.next(); sep.kind {
			case tokRParen:
				return call, nil
			case tokComma:
			default:
				return nil, p.unexpected(sep, `"," or ")"`)
			}
		}
	case tokLParen:
		if err := p.enter(t.pos); err != nil {
			return nil, err
		}
		defer p.leave()
		x, err := p.parseExpr()
		if err != nil {
			return nil, err
		}
		if r := p.next(); r.kind != tokRParen {
			return nil, p.unexpected(r, `")"`)
		}
		return x, nil
	}
	return nil, p.unexpected(t, "expression")
}
