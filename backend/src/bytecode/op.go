package bytecode

import "fmt"

// Op is a bytecode operation code. Each instruction is one opcode byte,
// followed by an operand of ArgSize bytes (little endian) for the few
// operations that take one.
type Op uint8

// The operations of format version 1. Values are part of the format and must
// never be renumbered.
const (
	// OpInput pushes element i of input Arg (u8 operand).
	OpInput Op = 0x01
	// OpConst pushes constant Arg of the constant pool (u16 operand).
	OpConst Op = 0x02
	// OpLoad pushes temporary Arg (u8 operand); the temporary must have
	// been stored earlier in the program.
	OpLoad Op = 0x03
	// OpStore pops a value into temporary Arg (u8 operand); each temporary
	// is stored exactly once.
	OpStore Op = 0x04

	// OpAdd pops b, a and pushes a + b.
	OpAdd Op = 0x10
	// OpSub pops b, a and pushes a - b.
	OpSub Op = 0x11
	// OpMul pops b, a and pushes a * b.
	OpMul Op = 0x12
	// OpDiv pops b, a and pushes a / b.
	OpDiv Op = 0x13
	// OpNeg pops a and pushes -a.
	OpNeg Op = 0x14

	// OpSqrt pops a and pushes sqrt(a).
	OpSqrt Op = 0x20
	// OpAbs pops a and pushes |a|.
	OpAbs Op = 0x21
	// OpExp pops a and pushes e**a.
	OpExp Op = 0x22
	// OpLog pops a and pushes the natural logarithm of a.
	OpLog Op = 0x23
	// OpMin pops b, a and pushes min(a, b) (NaN if either is NaN).
	OpMin Op = 0x24
	// OpMax pops b, a and pushes max(a, b) (NaN if either is NaN).
	OpMax Op = 0x25
	// OpClamp pops hi, lo, a and pushes min(max(a, lo), hi).
	OpClamp Op = 0x26
)

// opInfo describes the static shape of an operation.
type opInfo struct {
	name    string
	argSize int // operand bytes after the opcode
	pops    int
	pushes  int
}

// info returns the description of op, and false if op is not an operation
// of this format version.
func (op Op) info() (opInfo, bool) {
	switch op {
	case OpInput:
		return opInfo{"in", 1, 0, 1}, true
	case OpConst:
		return opInfo{"const", 2, 0, 1}, true
	case OpLoad:
		return opInfo{"load", 1, 0, 1}, true
	case OpStore:
		return opInfo{"store", 1, 1, 0}, true
	case OpAdd:
		return opInfo{"add", 0, 2, 1}, true
	case OpSub:
		return opInfo{"sub", 0, 2, 1}, true
	case OpMul:
		return opInfo{"mul", 0, 2, 1}, true
	case OpDiv:
		return opInfo{"div", 0, 2, 1}, true
	case OpNeg:
		return opInfo{"neg", 0, 1, 1}, true
	case OpSqrt:
		return opInfo{"sqrt", 0, 1, 1}, true
	case OpAbs:
		return opInfo{"abs", 0, 1, 1}, true
	case OpExp:
		return opInfo{"exp", 0, 1, 1}, true
	case OpLog:
		return opInfo{"log", 0, 1, 1}, true
	case OpMin:
		return opInfo{"min", 0, 2, 1}, true
	case OpMax:
		return opInfo{"max", 0, 2, 1}, true
	case OpClamp:
		return opInfo{"clamp", 0, 3, 1}, true
	}
	return opInfo{}, false
}

// Valid reports whether op is an operation of this format version.
func (op Op) Valid() bool {
	_, ok := op.info()
	return ok
}

// String returns the mnemonic of op, or "op(0xNN)" for an unknown opcode.
func (op Op) String() string {
	if in, ok := op.info(); ok {
		return in.name
	}
	return fmt.Sprintf("op(%#02x)", uint8(op))
}

// ArgSize returns the number of operand bytes that follow the opcode in the
// encoded form (0, 1 or 2).
func (op Op) ArgSize() int {
	in, _ := op.info()
	return in.argSize
}

// Pops returns how many values op takes from the stack.
func (op Op) Pops() int {
	in, _ := op.info()
	return in.pops
}

// Pushes returns how many values op leaves on the stack.
func (op Op) Pushes() int {
	in, _ := op.info()
	return in.pushes
}

// Instr is one decoded instruction.
type Instr struct {
	// Op is the operation.
	Op Op
	// Arg is the operand of OpInput, OpConst, OpLoad and OpStore, and zero
	// for every other operation.
	Arg uint16
}

// String formats the instruction as its mnemonic followed by its operand,
// if any.
func (in Instr) String() string {
	if in.Op.ArgSize() == 0 {
		return in.Op.String()
	}
	return fmt.Sprintf("%s %d", in.Op, in.Arg)
}
