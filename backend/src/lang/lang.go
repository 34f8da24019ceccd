// Package lang compiles vexl source text to bytecode.
//
// A vexl program is a list of statements, one per line:
//
//	# comment
//	in x, y            # named input vectors (1..16 in all)
//	let t = x * y      # a temporary, defined once
//	out t + 2.5 * sqrt(abs(x)) - min(x, y) / 3
//
// `in` declares input vectors (it may appear more than once; the order of
// declaration is the order in which callers pass the vectors). `let` names a
// temporary. The single `out` statement is the last statement and gives the
// result. Expressions use + - * / and unary minus with the usual precedence
// and left associativity, parentheses, number literals (2, 2.5, .5, 1e-3) and
// the functions sqrt, abs, exp, log (one argument), min, max (two) and
// clamp(x, lo, hi) = min(max(x, lo), hi). A line break inside parentheses
// continues the expression. Arithmetic follows IEEE 754 (x/0 is ±Inf at run
// time, log(-1) is NaN); only a division by a literal zero is refused.
//
// Compile errors are [*Error] values printed as FILE:LINE:COL: message,
// with 1-based lines and byte columns.
package lang

import (
	"fmt"

	"github.com/vexl-dev/vexl/bytecode"
)

// MaxSourceSize is the largest source text Compile accepts, in bytes.
const MaxSourceSize = 1 << 20

// maxNesting bounds the nesting of parentheses, calls and unary operators.
const maxNesting = 200

// Pos is a source position: 1-based line and byte column.
type Pos struct {
	Line, Col int
}

// Error is a compile error at a source position.
type Error struct {
	// File is the name the source was compiled under.
	File string
	// Line and Col locate the error: 1-based line, 1-based byte column.
	Line, Col int
	// Msg describes the error.
	Msg string
}

// Error formats the error as FILE:LINE:COL: message.
func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Compile compiles the vexl source src, read from the file named file (the
// name only appears in error messages), to a checked bytecode program. A
// source error is returned as an *Error.
func Compile(file string, src []byte) (*bytecode.Program, error) {
	if len(src) > MaxSourceSize {
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("source is %d bytes, limit %d", len(src), MaxSourceSize)}
	}
	toks, err := lex(file, src)
	if err != nil {
		return nil, err
	}
	p := &parser{file: file, toks: toks}
	prog, err := p.parseProgram()
	if err != nil {
		return nil, err
	}
	return generate(file, prog)
}

// builtin describes a function of the language.
func builtin(name string) (op bytecode.Op, arity int, ok bool) {
	switch name {
	case "sqrt":
		return bytecode.OpSqrt, 1, true
	case "abs":
		return bytecode.OpAbs, 1, true
	case "exp":
		return bytecode.OpExp, 1, true
	case "log":
		return bytecode.OpLog, 1, true
	case "min":
		return bytecode.OpMin, 2, true
	case "max":
		return bytecode.OpMax, 2, true
	case "clamp":
		return bytecode.OpClamp, 3, true
	}
	return 0, 0, false
}
