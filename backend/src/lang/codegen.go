package lang

import (
	"fmt"
	"math"

	"github.com/vexl-dev/vexl/bytecode"
)

// generator resolves names and emits bytecode for a parsed program.
type generator struct {
	file     string
	inputs   map[string]int
	inputPos map[string]Pos
	names    []string
	temps    map[string]int
	tempPos  map[string]Pos
	consts   []float64
	constIdx map[uint64]int
	code     []bytecode.Instr
	size     int // encoded code bytes so far
}

func (g *generator) errorf(pos Pos, format string, args ...any) error {
	return &Error{File: g.file, Line: pos.Line, Col: pos.Col, Msg: fmt.Sprintf(format, args...)}
}

// generate turns a parsed program into a checked bytecode program.
func generate(file string, syn *syntax) (*bytecode.Program, error) {
	g := &generator{
		file:     file,
		inputs:   map[string]int{},
		inputPos: map[string]Pos{},
		temps:    map[string]int{},
		tempPos:  map[string]Pos{},
		constIdx: map[uint64]int{},
	}
	var out *stmt
	for i := range syn.stmts {
		s := &syn.stmts[i]
		var err error
		switch s.kind {
		case tokIn:
			err = g.declareInputs(s.names)
		case tokLet:
			err = g.let(s)
		case tokOut:
			out = s
			err = g.statementExpr(s.x)
		}
		if err != nil {
			return nil, err
		}
	}
	if out == nil {
		return nil, g.errorf(syn.end, "missing out statement (a program ends with: out EXPRESSION)")
	}
	if len(g.names) == 0 {
		return nil, g.errorf(out.pos, "no inputs declared (declare them with: in NAME, ...)")
	}
	prog := &bytecode.Program{
		Inputs:   g.names,
		Consts:   g.consts,
		NumTemps: len(g.temps),
		Code:     g.code,
	}
	depth, err := bytecode.StackDepth(prog.Code, len(prog.Inputs), len(prog.Consts), prog.NumTemps)
	if err != nil {
		return nil, fmt.Errorf("%s: internal compiler error: %w", file, err)
	}
	prog.MaxStack = depth
	if err := bytecode.Check(prog); err != nil {
		return nil, fmt.Errorf("%s: internal compiler error: %w", file, err)
	}
	return prog, nil
}

// checkNewName rejects a name that is already declared or names a function.
func (g *generator) checkNewName(name token) error {
	if _, _, ok := builtin(name.text); ok {
		return g.errorf(name.pos, "cannot use function name %s as a variable name", name.text)
	}
	if pos, ok := g.inputPos[name.text]; ok {
		return g.errorf(name.pos, "%s already declared as an input at %d:%d", name.text, pos.Line, pos.Col)
	}
	if pos, ok := g.tempPos[name.text]; ok {
		return g.errorf(name.pos, "%s already declared by let at %d:%d", name.text, pos.Line, pos.Col)
	}
	return nil
}

func (g *generator) declareInputs(names []token) error {
	for _, name := range names {
		if _, dup := g.inputs[name.text]; dup {
			return g.errorf(name.pos, "duplicate input %s", name.text)
		}
		if err := g.checkNewName(name); err != nil {
			return err
		}
		if len(g.names) == bytecode.MaxInputs {
			return g.errorf(name.pos, "too many inputs (limit %d)", bytecode.MaxInputs)
		}
		if len(name.text) > bytecode.MaxNameLen {
			return g.errorf(name.pos, "input name longer than %d bytes", bytecode.MaxNameLen)
		}
		g.inputs[name.text] = len(g.names)
		g.inputPos[name.text] = name.pos
		g.names = append(g.names, name.text)
	}
	return nil
}

func (g *generator) let(s *stmt) error {
	name := s.names[0]
	if err := g.checkNewName(name); err != nil {
		return err
	}
	if len(g.temps) == bytecode.MaxTemps {
		return g.errorf(s.pos, "too many let statements (limit %d)", bytecode.MaxTemps)
	}
	// The expression is compiled before the name exists: let t = t + 1 is an
	// error, not a recursive definition.
	if err := g.statementExpr(s.x); err != nil {
		return err
	}
	idx := len(g.temps)
	g.temps[name.text] = idx
	g.tempPos[name.text] = name.pos
	return g.emit(s.pos, bytecode.OpStore, idx)
}

// statementExpr compiles the expression of a let or out statement.
func (g *generator) statementExpr(x expr) error {
	if need := stackNeed(x); need > bytecode.MaxStack {
		return g.errorf(x.start(), "expression too complex: needs a stack of %d values (limit %d)", need, bytecode.MaxStack)
	}
	return g.expr(x)
}

// stackNeed returns the stack depth needed to evaluate x.
func stackNeed(x expr) int {
	switch x := x.(type) {
	case *negExpr:
		if _, ok := x.x.(*numExpr); ok {
			return 1
		}
		return stackNeed(x.x)
	case *binaryExpr:
		return max(stackNeed(x.x), 1+stackNeed(x.y))
	case *callExpr:
		need := 0
		for i, arg := range x.args {
			need = max(need, i+stackNeed(arg))
		}
		return max(need, 1)
	}
	return 1
}

func (g *generator) emit(pos Pos, op bytecode.Op, arg int) error {
	g.size += 1 + op.ArgSize()
	if g.size > bytecode.MaxCodeBytes {
		return g.errorf(pos, "program too large (more than %d bytes of code)", bytecode.MaxCodeBytes)
	}
	g.code = append(g.code, bytecode.Instr{Op: op, Arg: uint16(arg)})
	return nil
}

func (g *generator) constant(pos Pos, v float64) error {
	bits := math.Float64bits(v)
	idx, ok := g.constIdx[bits]
	if !ok {
		if len(g.consts) == bytecode.MaxConsts {
			return g.errorf(pos, "too many distinct constants (limit %d)", bytecode.MaxConsts)
		}
		idx = len(g.consts)
		g.constIdx[bits] = idx
		g.consts = append(g.consts, v)
	}
	return g.emit(pos, bytecode.OpConst, idx)
}

// isZeroLiteral reports whether x is the literal 0 (possibly negated).
func isZeroLiteral(x expr) bool {
	switch x := x.(type) {
	case *numExpr:
		return x.val == 0
	case *negExpr:
		return isZeroLiteral(x.x)
	}
	return false
}

func binaryOp(k tokKind) bytecode.Op {
	switch k {
	case tokPlus:
		return bytecode.OpAdd
	case tokMinus:
		return bytecode.OpSub
	case tokStar:
		return bytecode.OpMul
	}
	return bytecode.OpDiv
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (g *generator) expr(x expr) error {
	switch x := x.(type) {
	case *numExpr:
		return g.constant(x.pos, x.val)
	case *identExpr:
		if idx, ok := g.inputs[x.name]; ok {
			return g.emit(x.pos, bytecode.OpInput, idx)
		}
		if idx, ok := g.temps[x.name]; ok {
			return g.emit(x.pos, bytecode.OpLoad, idx)
		}
		if _, _, ok := builtin(x.name); ok {
			return g.errorf(x.pos, "%s is a function; call it as %s(...)", x.name, x.name)
		}
		return g.errorf(x.pos, "unknown identifier %s", x.name)
	case *negExpr:
		if num, ok := x.x.(*numExpr); ok {
			// A negative literal is a constant, not a negation.
			return g.constant(x.pos, -num.val)
		}
		if err := g.expr(x.x); err != nil {
			return err
		}
		return g.emit(x.pos, bytecode.OpNeg, 0)
	case *binaryExpr:
		if x.op == tokSlash && isZeroLiteral(x.y) {
			return g.errorf(x.y.start(), "division by literal zero")
		}
		if err := g.expr(x.x); err != nil {
			return err
		}
		if err := g.expr(x.y); err != nil {
			return err
		}
		return g.emit(x.y.start(), binaryOp(x.op), 0)
	case *callExpr:
		op, arity, ok := builtin(x.name)
		if !ok {
			if _, isVar := g.inputs[x.name]; isVar {
				return g.errorf(x.pos, "%s is an input, not a function", x.name)
			}
			if _, isVar := g.temps[x.name]; isVar {
				return g.errorf(x.pos, "%s is a variable, not a function", x.name)
			}
			return g.errorf(x.pos, "unknown function %s", x.name)
		}
		if len(x.args) != arity {
			return g.errorf(x.pos, "%s expects %d argument%s, got %d", x.name, arity, plural(arity), len(x.args))
		}
		for _, arg := range x.args {
			if err := g.expr(arg); err != nil {
				return err
			}
		}
		return g.emit(x.pos, op, 0)
	}
	return fmt.Errorf("internal compiler error: unexpected node %T", x)
}
