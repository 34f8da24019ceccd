package lang_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/lang"
)

// errorTests lists sources that must not compile, with the exact message.
var errorTests = []struct {
	name, src, want string
}{
	{"empty", "", "t.vx:1:1: missing out statement (a program ends with: out EXPRESSION)"},
	{"comments only", "# nothing\n", "t.vx:2:1: missing out statement (a program ends with: out EXPRESSION)"},
	{"missing out", "in x\nlet t = x\n", "t.vx:3:1: missing out statement (a program ends with: out EXPRESSION)"},
	{"no inputs", "out 1", "t.vx:1:1: no inputs declared (declare them with: in NAME, ...)"},
	{"unknown identifier", "in x\nout x + y", "t.vx:2:9: unknown identifier y"},
	{"unknown function", "in x\nout foo(x)", "t.vx:2:5: unknown function foo"},
	{"input called", "in x\nout x(1)", "t.vx:2:5: x is an input, not a function"},
	{"temp called", "in x\nlet t = x\nout t(1)", "t.vx:3:5: t is a variable, not a function"},
	{"function as value", "in x\nout sqrt + x", "t.vx:2:5: sqrt is a function; call it as sqrt(...)"},
	{"arity one", "in x\nout sqrt(x, x)", "t.vx:2:5: sqrt expects 1 argument, got 2"},
	{"arity two", "in x\nout  min(x)", "t.vx:2:6: min expects 2 arguments, got 1"},
	{"arity none", "in x\nout max()", "t.vx:2:5: max expects 2 arguments, got 0"},
	{"arity three", "in x\nout clamp(x, 1)", "t.vx:2:5: clamp expects 3 arguments, got 2"},
	{"unexpected token", "in x\nout x + * 2", "t.vx:2:9: unexpected \"*\", expected expression"},
	{"unexpected end", "in x\nout x +", "t.vx:2:8: unexpected end of file, expected expression"},
	{"unexpected end of line", "in x\nout (x +\n)", "t.vx:3:1: unexpected \")\", expected expression"},
	{"unclosed paren", "in x\nout (x + 1", "t.vx:2:11: unexpected end of file, expected \")\""},
	{"extra token", "in x\nout x x", "t.vx:2:7: unexpected name \"x\", expected end of line"},
	{"extra paren", "in x\nout x)", "t.vx:2:6: unexpected \")\", expected end of line"},
	{"bad statement", "in x\n2 + x", "t.vx:2:1: unexpected number 2, expected in, let or out"},
	{"assignment without let", "in x\nt = x", "t.vx:2:1: unexpected name \"t\", expected in, let or out (did you mean let t = ...?)"},
	{"let without name", "in x\nlet = x", "t.vx:2:5: unexpected \"=\", expected name"},
	{"let without equals", "in x\nlet t x", "t.vx:2:7: unexpected name \"x\", expected \"=\""},
	{"keyword as name", "in x, out", "t.vx:1:7: unexpected keyword \"out\", expected input name"},
	{"in without names", "in\nout 1", "t.vx:1:3: unexpected end of line, expected input name"},
	{"call separator", "in x\nout min(x; x)", "t.vx:2:10: unexpected character ';'"},
	{"missing comma", "in x\nout min(x x)", "t.vx:2:11: unexpected name \"x\", expected \",\" or \")\""},
	{"duplicate input", "in x, y\nin x\nout x", "t.vx:2:4: duplicate input x"},
	{"let shadows input", "in x\nlet x = 1\nout x", "t.vx:2:5: x already declared as an input at 1:4"},
	{"let redeclared", "in x\nlet t = x\nlet t = 2\nout t", "t.vx:3:5: t already declared by let at 2:5"},
	{"input after let", "in x\nlet t = x\nin t\nout t", "t.vx:3:4: t already declared by let at 2:5"},
	{"recursive let", "in x\nlet t = t + 1\nout t", "t.vx:2:9: unknown identifier t"},
	{"function name as input", "in exp\nout 1", "t.vx:1:4: cannot use function name exp as a variable name"},
	{"function name as let", "in x\nlet log = x\nout x", "t.vx:2:5: cannot use function name log as a variable name"},
	{"statement after out", "in x\nout x\nlet t = 1", "t.vx:3:1: statement after out (out must be the last statement, see 2:1)"},
	{"two outs", "in x\nout x\nout x", "t.vx:3:1: statement after out (out must be the last statement, see 2:1)"},
	{"division by zero", "in x\nout x / 0", "t.vx:2:9: division by literal zero"},
	{"division by zero float", "in x\nout x / 0.0e5", "t.vx:2:9: division by literal zero"},
	{"division by negative zero", "in x\nout x / (-0)", "t.vx:2:10: division by literal zero"},
	{"malformed number", "in x\nout 1e+", "t.vx:2:5: malformed number \"1e+\""},
	{"number with letters", "in x\nout 2x", "t.vx:2:5: malformed number \"2x\""},
	{"two dots", "in x\nout 1.2.3", "t.vx:2:5: malformed number \"1.2.3\""},
	{"number out of range", "in x\nout x * 1e400", "t.vx:2:9: number 1e400 out of range"},
	{"bad character", "in x\nout x % 2", "t.vx:2:7: unexpected character '%'"},
	{"non-ascii", "in x\nout x + é", "t.vx:2:9: unexpected character 'é'"},
	{"tab counts one column", "in x\n\tout\tx + y", "t.vx:2:10: unknown identifier y"},
	{"too many inputs", "in a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1, b2, b3, b4, b5, b6\nout a0",
		"t.vx:1:68: too many inputs (limit 16)"},
	{"too deep for the stack", "in x\nout " + strings.Repeat("x + (", 64) + "x" + strings.Repeat(")", 64),
		"t.vx:2:5: expression too complex: needs a stack of 65 values (limit 64)"},
	{"nested too deeply", "in x\nout " + strings.Repeat("-", 300) + "x", "t.vx:2:205: expression nested too deeply (limit 200)"},
}

func TestCompileErrors(t *testing.T) {
	for _, tt := range errorTests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := lang.Compile("t.vx", []byte(tt.src))
			if err == nil {
				t.Fatalf("Compile(%q) succeeded:\n%s", tt.src, bytecode.Disassemble(prog))
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Compile(%q) error\n got: %s\nwant: %s", tt.src, got, tt.want)
			}
			var lerr *lang.Error
			if !errors.As(err, &lerr) {
				t.Fatalf("Compile(%q) error %T is not a *lang.Error", tt.src, err)
			}
			if prefix := fmt.Sprintf("%s:%d:%d: ", lerr.File, lerr.Line, lerr.Col); !strings.HasPrefix(tt.want, prefix) || lerr.Msg != strings.TrimPrefix(tt.want, prefix) {
				t.Errorf("fields %+v do not match %q", *lerr, tt.want)
			}
		})
	}
}

func TestSourceTooLarge(t *testing.T) {
	src := "in x\nout x\n" + strings.Repeat("#", lang.MaxSourceSize)
	_, err := lang.Compile("big.vx", []byte(src))
	if err == nil || !strings.HasPrefix(err.Error(), "big.vx:1:1: source is") {
		t.Fatalf("Compile(huge) = %v, want a size error at 1:1", err)
	}
}

// codeTests pins the code generated for small programs.
var codeTests = []struct {
	name, src string
	inputs    []string
	consts    []float64
	temps     int
	code      string // instructions separated by "; "
}{
	{"identity", "in x\nout x", []string{"x"}, nil, 0, "in 0"},
	{"precedence", "in x, y\nout x + y * 2", []string{"x", "y"}, []float64{2}, 0, "in 0; in 1; const 0; mul; add"},
	{"left associative", "in x\nout x - 1 - 2", []string{"x"}, []float64{1, 2}, 0, "in 0; const 0; sub; const 1; sub"},
	{"parentheses", "in x\nout x - (1 - 2)", []string{"x"}, []float64{1, 2}, 0, "in 0; const 0; const 1; sub; sub"},
	{"negative literal", "in x\nout -2.5 * x", []string{"x"}, []float64{-2.5}, 0, "const 0; in 0; mul"},
	{"negation", "in x\nout -x", []string{"x"}, nil, 0, "in 0; neg"},
	{"unary binds tighter", "in x, y\nout -x * y", []string{"x", "y"}, nil, 0, "in 0; neg; in 1; mul"},
	{"constants shared", "in x\nout x * 3 + 3", []string{"x"}, []float64{3}, 0, "in 0; const 0; mul; const 0; add"},
	{"functions", "in x, y\nout clamp(sqrt(abs(x)), min(x, y), max(exp(y), log(x)))", []string{"x", "y"}, nil, 0,
		"in 0; abs; sqrt; in 0; in 1; min; in 1; exp; in 0; log; max; clamp"},
	{"let", "in x\nlet t = x * x\nlet u = t + 1\nout t / u", []string{"x"}, []float64{1}, 2,
		"in 0; in 0; mul; store 0; load 0; const 0; add; store 1; load 0; load 1; div"},
	{"several in statements", "in b\nin a, c\nout c", []string{"b", "a", "c"}, nil, 0, "in 2"},
	{"continuation in parentheses", "in x\nout (x +\n  1) * min(x,\n x)", []string{"x"}, []float64{1}, 0, "in 0; const 0; add; in 0; in 0; min; mul"},
	{"comments and blank lines", "# head\n\nin x # the input\n\n  out x*1e-3 # tail\n\n", []string{"x"}, []float64{1e-3}, 0, "in 0; const 0; mul"},
	{"numbers", "in x\nout .5 + 2. + 1E3 + 4e+1", []string{"x"}, []float64{.5, 2, 1000, 40}, 0, "const 0; const 1; add; const 2; add; const 3; add"},
	{"division by non-literal zero", "in x\nout x / (1 - 1)", []string{"x"}, []float64{1}, 0, "in 0; const 0; const 0; sub; div"},
	{"unused input", "in x, y\nout y", []string{"x", "y"}, nil, 0, "in 1"},
	{"crlf", "in x\r\nout x\r\n", []string{"x"}, nil, 0, "in 0"},
}

func TestCompileCode(t *testing.T) {
	for _, tt := range codeTests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := lang.Compile("t.vx", []byte(tt.src))
			if err != nil {
				t.Fatalf("Compile(%q): %v", tt.src, err)
			}
			var code []string
			for _, in := range prog.Code {
				code = append(code, in.String())
			}
			if got := strings.Join(code, "; "); got != tt.code {
				t.Errorf("code = %s, want %s", got, tt.code)
			}
			if fmt.Sprint(prog.Inputs) != fmt.Sprint(tt.inputs) {
				t.Errorf("inputs = %v, want %v", prog.Inputs, tt.inputs)
			}
			if fmt.Sprint(prog.Consts) != fmt.Sprint(tt.consts) {
				t.Errorf("consts = %v, want %v", prog.Consts, tt.consts)
			}
			if prog.NumTemps != tt.temps {
				t.Errorf("temps = %d, want %d", prog.NumTemps, tt.temps)
			}
			if err := bytecode.Check(prog); err != nil {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	// 16 inputs and a stack of exactly 64 are allowed.
	var names []string
	for i := 0; i < bytecode.MaxInputs; i++ {
		names = append(names, fmt.Sprintf("v%d", i))
	}
	src := "in " + strings.Join(names, ", ") + "\nout " + strings.Repeat("v0 + (", 63) + "v15" + strings.Repeat(")", 63)
	prog, err := lang.Compile("t.vx", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if prog.MaxStack != bytecode.MaxStack || len(prog.Inputs) != bytecode.MaxInputs {
		t.Errorf("max stack %d, inputs %d", prog.MaxStack, len(prog.Inputs))
	}
}
