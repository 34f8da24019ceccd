// Package vm evaluates vexl programs over float64 and float32 vectors.
//
// A [Machine] binds a checked program to an evaluation profile. Every
// profile computes the same function: element i of the output is the
// program applied to element i of each input, with IEEE 754 arithmetic in
// the precision of the buffers (float32 programs round every intermediate
// result to float32; sqrt, exp and log are computed in float64 and rounded).
// Multiplications are always rounded before any following addition: no
// profile contracts a*b+c into a fused multiply-add with a single rounding.
//
// Profiles differ only in how they get there:
//
//   - "baseline" is a straightforward stack interpreter that evaluates the
//     whole program for one element before moving to the next.
package vm

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/vexl-dev/vexl/bytecode"
)

// Profile names an evaluation strategy.
type Profile string

// Baseline is the reference stack interpreter, evaluated element by element.
const Baseline Profile = "baseline"

// Profiles returns the profiles of this build, the default first.
func Profiles() []Profile { return []Profile{Baseline} }

// DefaultProfile returns the profile used when none is chosen.
func DefaultProfile() Profile { return Baseline }

// Errors returned by this package wrap one of these.
var (
	// ErrUnknownProfile reports a profile name this build does not have.
	ErrUnknownProfile = errors.New("unknown profile")
	// ErrInputs reports input or output buffers that do not fit the program.
	ErrInputs = errors.New("bad inputs")
)

// ParseProfile returns the profile called name.
func ParseProfile(name string) (Profile, error) {
	var names []string
	for _, p := range Profiles() {
		if string(p) == name {
			return p, nil
		}
		names = append(names, string(p))
	}
	return "", fmt.Errorf("vm: %w %q (have %s)", ErrUnknownProfile, name, strings.Join(names, ", "))
}

// Machine is a program prepared for evaluation under one profile. It is
// immutable and safe for concurrent use.
type Machine struct {
	prog     *bytecode.Program
	profile  Profile
	consts32 []float32
}

// New checks prog and prepares it for evaluation under profile. The machine
// keeps its own copy of prog.
func New(prog *bytecode.Program, profile Profile) (*Machine, error) {
	if err := bytecode.Check(prog); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	if _, err := ParseProfile(string(profile)); err != nil {
		return nil, err
	}
	m := &Machine{prog: clone(prog), profile: profile}
	m.consts32 = make([]float32, len(prog.Consts))
	for i, c := range prog.Consts {
		m.consts32[i] = float32(c)
	}
	return m, nil
}

func clone(p *bytecode.Program) *bytecode.Program {
	return &bytecode.Program{
		Inputs:   append([]string(nil), p.Inputs...),
		Consts:   append([]float64(nil), p.Consts...),
		NumTemps: p.NumTemps,
		MaxStack: p.MaxStack,
		Code:     append([]bytecode.Instr(nil), p.Code...),
	}
}

// Profile returns the profile the machine evaluates with.
func (m *Machine) Profile() Profile { return m.profile }

// NumInputs returns the number of input vectors the program takes.
func (m *Machine) NumInputs() int { return len(m.prog.Inputs) }

// Inputs returns the names of the program's inputs, in order.
func (m *Machine) Inputs() []string { return append([]string(nil), m.prog.Inputs...) }

// RunF64 evaluates the program over float64 vectors: inputs must hold one
// vector per program input, each as long as out. out may be the same slice
// as an input but must not otherwise overlap one.
func (m *Machine) RunF64(inputs [][]float64, out []float64) error {
	if err := checkBuffers(m.prog, inputs, out); err != nil {
		return err
	}
	run(m, m.prog.Consts, inputs, out)
	return nil
}

// RunF32 is RunF64 for float32 vectors; see the package documentation for
// how float32 evaluation rounds.
func (m *Machine) RunF32(inputs [][]float32, out []float32) error {
	if err := checkBuffers(m.prog, inputs, out); err != nil {
		return err
	}
	run(m, m.consts32, inputs, out)
	return nil
}

// RunF64 evaluates prog over float64 vectors with the default profile.
func RunF64(prog *bytecode.Program, inputs [][]float64, out []float64) error {
	m, err := New(prog, DefaultProfile())
	if err != nil {
		return err
	}
	return m.RunF64(inputs, out)
}

// RunF32 evaluates prog over float32 vectors with the default profile.
func RunF32(prog *bytecode.Program, inputs [][]float32, out []float32) error {
	m, err := New(prog, DefaultProfile())
	if err != nil {
		return err
	}
	return m.RunF32(inputs, out)
}

// float is the element type of a vector.
type float interface{ ~float32 | ~float64 }

func checkBuffers[T float](p *bytecode.Program, inputs [][]T, out []T) error {
	if len(inputs) != len(p.Inputs) {
		return fmt.Errorf("vm: %w: program takes %d inputs (%s), got %d",
			ErrInputs, len(p.Inputs), strings.Join(p.Inputs, ", "), len(inputs))
	}
	for i, in := range inputs {
		if len(in) != len(out) {
			return fmt.Errorf("vm: %w: input %d (%s) has %d elements, output has %d",
				ErrInputs, i, p.Inputs[i], len(in), len(out))
		}
	}
	return nil
}

// run evaluates with the machine's profile.
func run[T float](m *Machine, consts []T, inputs [][]T, out []T) {
	runBaseline(m.prog, consts, inputs, out)
}

// runBaseline is the reference interpreter: for each element, run the whole
// program on a small stack.
func runBaseline[T float](p *bytecode.Program, consts []T, inputs [][]T, out []T) {
	stack := make([]T, p.MaxStack)
	temps := make([]T, p.NumTemps)
	for i := range out {
		sp := 0
		for _, in := range p.Code {
			switch in.Op {
			case bytecode.OpInput:
				stack[sp] = inputs[in.Arg][i]
				sp++
			case bytecode.OpConst:
				stack[sp] = consts[in.Arg]
				sp++
			case bytecode.OpLoad:
				stack[sp] = temps[in.Arg]
				sp++
			case bytecode.OpStore:
				sp--
				temps[in.Arg] = stack[sp]
			case bytecode.OpNeg, bytecode.OpSqrt, bytecode.OpAbs, bytecode.OpExp, bytecode.OpLog:
				stack[sp-1] = apply1(in.Op, stack[sp-1])
			case bytecode.OpClamp:
				sp -= 2
				stack[sp-1] = clamp(stack[sp-1], stack[sp], stack[sp+1])
			default:
				sp--
				stack[sp-1] = apply2(in.Op, stack[sp-1], stack[sp])
			}
		}
		out[i] = stack[0]
	}
}

// apply1 applies a one-operand operation.
func apply1[T float](op bytecode.Op, a T) T {
	switch op {
	case bytecode.OpNeg:
		return -a
	case bytecode.OpSqrt:
		return T(math.Sqrt(float64(a)))
	case bytecode.OpAbs:
		return T(math.Abs(float64(a)))
	case bytecode.OpExp:
		return T(math.Exp(float64(a)))
	case bytecode.OpLog:
		return T(math.Log(float64(a)))
	}
	panic(fmt.Sprintf("vm: apply1 of %v", op))
}

// apply2 applies a two-operand operation. The explicit conversion after the
// multiplication forces rounding, so the compiler never fuses it with a
// following addition.
func apply2[T float](op bytecode.Op, a, b T) T {
	switch op {
	case bytecode.OpAdd:
		return a + b
	case bytecode.OpSub:
		return a - b
	case bytecode.OpMul:
		return T(a * b)
	case bytecode.OpDiv:
		return a / b
	case bytecode.OpMin:
		return min(a, b)
	case bytecode.OpMax:
		return max(a, b)
	}
	panic(fmt.Sprintf("vm: apply2 of %v", op))
}

// clamp returns min(max(a, lo), hi).
func clamp[T float](a, lo, hi T) T { return min(max(a, lo), hi) }
