// Package bytecode defines the binary program format of vexl and its
// validation.
//
// A program is a straight-line stack machine over one element of each input
// vector at a time: instructions push inputs, constants and temporaries,
// combine the top of the stack, and leave exactly one value, the output.
//
// # Encoding (format version 1)
//
// All integers are little endian.
//
//	magic      4 bytes  "VEXL"
//	version    u16      FormatVersion (1)
//	flags      u16      reserved, must be 0
//	ninputs    u8       1..MaxInputs
//	inputs     ninputs × (u8 length 1..MaxNameLen, identifier bytes)
//	ntemps     u8       0..MaxTemps
//	nconsts    u16      0..MaxConsts
//	consts     nconsts × u64 (IEEE 754 binary64 bits)
//	maxstack   u8       1..MaxStack, the exact maximum stack depth
//	codelen    u32      1..MaxCodeBytes, bytes of code that follow
//	code       codelen bytes: opcode (u8) then 0, 1 or 2 operand bytes
//	crc32      u32      IEEE CRC-32 of every preceding byte
//
// # Rules
//
// [Decode] and [Encode] enforce the same rules, so that every accepted
// program can be evaluated without further checks and so that encoding is
// canonical (Decode followed by Encode reproduces the input bytes):
//
//   - input names are distinct identifiers ([A-Za-z_][A-Za-z0-9_]*);
//   - every opcode is known and every operand is in range;
//   - each temporary is stored exactly once, and loaded only after its store;
//   - the stack never underflows, never exceeds MaxStack, holds exactly one
//     value at the end, and its maximum depth equals the declared maxstack.
//
// Decoding arbitrary bytes never panics: it returns an error wrapping
// [ErrInvalid] or [ErrChecksum].
package bytecode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Format limits and constants.
const (
	// Magic starts every encoded program.
	Magic = "VEXL"
	// FormatVersion is the only format version this package reads and writes.
	FormatVersion = 1
	// MaxInputs is the largest number of input vectors of a program.
	MaxInputs = 16
	// MaxNameLen is the longest input name, in bytes.
	MaxNameLen = 64
	// MaxTemps is the largest number of temporaries of a program.
	MaxTemps = 255
	// MaxConsts is the largest constant pool.
	MaxConsts = 4096
	// MaxStack is the deepest stack a program may use.
	MaxStack = 64
	// MaxCodeBytes is the largest encoded code section.
	MaxCodeBytes = 1 << 16
	// MaxEncodedSize bounds the size of a whole encoded program.
	MaxEncodedSize = 4 + 2 + 2 + 1 + MaxInputs*(1+MaxNameLen) + 1 + 2 + MaxConsts*8 + 1 + 4 + MaxCodeBytes + 4
)

// Sentinel errors. Errors returned by this package wrap exactly one of them.
var (
	// ErrInvalid reports a program that breaks a rule of the format.
	ErrInvalid = errors.New("invalid vexl program")
	// ErrChecksum reports an encoded program whose CRC-32 does not match,
	// which usually means it was truncated or corrupted.
	ErrChecksum = errors.New("vexl program checksum mismatch")
)

// Program is a decoded, self-contained vexl program.
type Program struct {
	// Inputs names the input vectors, in the order a caller passes them.
	Inputs []string
	// Consts is the constant pool.
	Consts []float64
	// NumTemps is the number of temporaries.
	NumTemps int
	// MaxStack is the maximum stack depth reached by Code. Use
	// [StackDepth] to compute it.
	MaxStack int
	// Code is the instruction sequence.
	Code []Instr
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// ValidName reports whether s may name an input: an ASCII identifier of at
// most MaxNameLen bytes.
func ValidName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// StackDepth simulates code and returns its maximum stack depth. It checks
// the stack rules and the temporary rules (store once, load after store)
// for a program with ntemps temporaries, ninputs inputs and nconsts
// constants.
func StackDepth(code []Instr, ninputs, nconsts, ntemps int) (int, error) {
	if len(code) == 0 {
		return 0, invalidf("empty code")
	}
	stored := make([]bool, ntemps)
	depth, maxDepth := 0, 0
	for pc, in := range code {
		if !in.Op.Valid() {
			return 0, invalidf("instruction %d: unknown opcode %#02x", pc, uint8(in.Op))
		}
		limit := 0
		switch in.Op {
		case OpInput:
			limit = ninputs
		case OpConst:
			limit = nconsts
		case OpLoad, OpStore:
			limit = ntemps
		default:
			if in.Arg != 0 {
				return 0, invalidf("instruction %d: %s takes no operand", pc, in.Op)
			}
		}
		if in.Op.ArgSize() > 0 && int(in.Arg) >= limit {
			return 0, invalidf("instruction %d: %s operand %d out of range (have %d)", pc, in.Op, in.Arg, limit)
		}
		switch in.Op {
		case OpLoad:
			if !stored[in.Arg] {
				return 0, invalidf("instruction %d: temporary %d loaded before it is stored", pc, in.Arg)
			}
		case OpStore:
			if stored[in.Arg] {
				return 0, invalidf("instruction %d: temporary %d stored twice", pc, in.Arg)
			}
			stored[in.Arg] = true
		}
		if depth < in.Op.Pops() {
			return 0, invalidf("instruction %d: %s needs %d stack values, have %d", pc, in.Op, in.Op.Pops(), depth)
		}
		depth += in.Op.Pushes() - in.Op.Pops()
		if depth > MaxStack {
			return 0, invalidf("instruction %d: stack depth %d exceeds %d", pc, depth, MaxStack)
		}
		maxDepth = max(maxDepth, depth)
	}
	if depth != 1 {
		return 0, invalidf("program leaves %d values on the stack, want 1", depth)
	}
	return maxDepth, nil
}

// Check reports whether p obeys every rule of the format (see the package
// documentation), including that p.MaxStack is the exact stack depth.
func Check(p *Program) error {
	if p == nil {
		return invalidf("nil program")
	}
	if n := len(p.Inputs); n < 1 || n > MaxInputs {
		return invalidf("%d inputs, want 1..%d", n, MaxInputs)
	}
	seen := make(map[string]bool, len(p.Inputs))
	for i, name := range p.Inputs {
		if !ValidName(name) {
			return invalidf("input %d: bad name %q", i, name)
		}
		if seen[name] {
			return invalidf("input %d: duplicate name %q", i, name)
		}
		seen[name] = true
	}
	if p.NumTemps < 0 || p.NumTemps > MaxTemps {
		return invalidf("%d temporaries, want 0..%d", p.NumTemps, MaxTemps)
	}
	if len(p.Consts) > MaxConsts {
		return invalidf("%d constants, want at most %d", len(p.Consts), MaxConsts)
	}
	depth, err := StackDepth(p.Code, len(p.Inputs), len(p.Consts), p.NumTemps)
	if err != nil {
		return err
	}
	if depth != p.MaxStack {
		return invalidf("declared max stack %d, code needs %d", p.MaxStack, depth)
	}
	if n := codeBytes(p.Code); n > MaxCodeBytes {
		return invalidf("code is %d bytes, limit %d", n, MaxCodeBytes)
	}
	return nil
}

func codeBytes(code []Instr) int {
	n := 0
	for _, in := range code {
		n += 1 + in.Op.ArgSize()
	}
	return n
}

// Encode checks p and returns its canonical encoding.
func Encode(p *Program) ([]byte, error) {
	if err := Check(p); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(Magic)
	b.Write(binary.LittleEndian.AppendUint16(nil, FormatVersion))
	b.Write([]byte{0, 0}) // flags
	b.WriteByte(byte(len(p.Inputs)))
	for _, name := range p.Inputs {
		b.WriteByte(byte(len(name)))
		b.WriteString(name)
	}
	b.WriteByte(byte(p.NumTemps))
	b.Write(binary.LittleEndian.AppendUint16(nil, uint16(len(p.Consts))))
	for _, c := range p.Consts {
		b.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(c)))
	}
	b.WriteByte(byte(p.MaxStack))
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(codeBytes(p.Code))))
	for _, in := range p.Code {
		b.WriteByte(byte(in.Op))
		switch in.Op.ArgSize() {
		case 1:
			b.WriteByte(byte(in.Arg))
		case 2:
			b.Write(binary.LittleEndian.AppendUint16(nil, in.Arg))
		}
	}
	out := b.Bytes()
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out)), nil
}

// reader is a bounds-checked little-endian cursor over an encoded program.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = invalidf("truncated at byte %d reading %s", r.off, what)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8(what string) int {
	if s := r.take(1, what); s != nil {
		return int(s[0])
	}
	return 0
}

func (r *reader) u16(what string) int {
	if s := r.take(2, what); s != nil {
		return int(binary.LittleEndian.Uint16(s))
	}
	return 0
}

func (r *reader) u32(what string) int64 {
	if s := r.take(4, what); s != nil {
		return int64(binary.LittleEndian.Uint32(s))
	}
	return 0
}

// Decode parses and checks an encoded program. It never retains data: the
// returned Program shares no memory with it, so data may be freed or reused.
func Decode(data []byte) (*Program, error) {
	p, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return p, nil
}

func decode(data []byte) (*Program, error) {
	if len(data) > MaxEncodedSize {
		return nil, invalidf("%d bytes, larger than any valid program (%d)", len(data), MaxEncodedSize)
	}
	if len(data) < len(Magic) || string(data[:len(Magic)]) != Magic {
		return nil, invalidf("not a vexl program (bad magic)")
	}
	r := &reader{b: data, off: len(Magic)}
	if v := r.u16("version"); r.err == nil && v != FormatVersion {
		return nil, invalidf("unsupported format version %d (this build reads version %d)", v, FormatVersion)
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(data) < r.off+4 {
		return nil, invalidf("truncated: %d bytes", len(data))
	}
	body := data[:len(data)-4]
	if want, got := binary.LittleEndian.Uint32(data[len(body):]), crc32.ChecksumIEEE(body); want != got {
		return nil, fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, want, got)
	}
	r.b = body
	if flags := r.u16("flags"); flags != 0 {
		return nil, invalidf("reserved flags %#04x set", flags)
	}
	p := &Program{}
	ninputs := r.u8("input count")
	for i := 0; i < ninputs && r.err == nil; i++ {
		n := r.u8("input name length")
		p.Inputs = append(p.Inputs, string(r.take(n, "input name")))
	}
	p.NumTemps = r.u8("temporary count")
	nconsts := r.u16("constant count")
	if r.err == nil && nconsts > MaxConsts {
		return nil, invalidf("%d constants, want at most %d", nconsts, MaxConsts)
	}
	if raw := r.take(8*nconsts, "constants"); raw != nil {
		p.Consts = make([]float64, nconsts)
		for i := range p.Consts {
			p.Consts[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	}
	p.MaxStack = r.u8("max stack")
	codeLen := r.u32("code length")
	if r.err == nil && (codeLen < 1 || codeLen > MaxCodeBytes) {
		return nil, invalidf("code length %d, want 1..%d", codeLen, MaxCodeBytes)
	}
	code := r.take(int(codeLen), "code")
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(body) {
		return nil, invalidf("%d bytes of trailing data after code", len(body)-r.off)
	}
	for i := 0; i < len(code); {
		op := Op(code[i])
		if !op.Valid() {
			return nil, invalidf("code byte %d: unknown opcode %#02x", i, code[i])
		}
		n := op.ArgSize()
		if len(code)-i-1 < n {
			return nil, invalidf("code byte %d: truncated operand of %s", i, op)
		}
		in := Instr{Op: op}
		switch n {
		case 1:
			in.Arg = uint16(code[i+1])
		case 2:
			in.Arg = binary.LittleEndian.Uint16(code[i+1:])
		}
		p.Code = append(p.Code, in)
		i += 1 + n
	}
	if err := Check(p); err != nil {
		return nil, err
	}
	return p, nil
}
