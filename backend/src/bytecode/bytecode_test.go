package bytecode_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
)

func in(op bytecode.Op, arg uint16) bytecode.Instr { return bytecode.Instr{Op: op, Arg: arg} }

// sampleProgram computes t = x*y; out t + 2.5*sqrt(abs(x)) - min(x, y)/3.
func sampleProgram() *bytecode.Program {
	return &bytecode.Program{
		Inputs:   []string{"x", "y"},
		Consts:   []float64{2.5, 3},
		NumTemps: 1,
		MaxStack: 3,
		Code: []bytecode.Instr{
			in(bytecode.OpInput, 0), in(bytecode.OpInput, 1), in(bytecode.OpMul, 0), in(bytecode.OpStore, 0),
			in(bytecode.OpLoad, 0), in(bytecode.OpConst, 0), in(bytecode.OpInput, 0), in(bytecode.OpAbs, 0),
			in(bytecode.OpSqrt, 0), in(bytecode.OpMul, 0), in(bytecode.OpAdd, 0), in(bytecode.OpInput, 0),
			in(bytecode.OpInput, 1), in(bytecode.OpMin, 0), in(bytecode.OpConst, 1), in(bytecode.OpDiv, 0),
			in(bytecode.OpSub, 0),
		},
	}
}

func TestRoundTrip(t *testing.T) {
	progs := map[string]*bytecode.Program{
		"sample": sampleProgram(),
		"special constants": {
			Inputs:   []string{"a_1", "B"},
			Consts:   []float64{math.NaN(), math.Inf(-1), math.Copysign(0, -1), math.SmallestNonzeroFloat64},
			MaxStack: 2,
			Code:     []bytecode.Instr{in(bytecode.OpConst, 3), in(bytecode.OpInput, 1), in(bytecode.OpMax, 0)},
		},
	}
	for name, p := range progs {
		t.Run(name, func(t *testing.T) {
			data, err := bytecode.Encode(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bytecode.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			// Compare constants by bits (NaN != NaN), the rest deeply.
			for i := range p.Consts {
				if math.Float64bits(got.Consts[i]) != math.Float64bits(p.Consts[i]) {
					t.Errorf("const %d: got %v, want %v", i, got.Consts[i], p.Consts[i])
				}
			}
			again, err := bytecode.Encode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Errorf("Encode(Decode(data)) differs from data")
			}
			gotRest, wantRest := *got, *p
			gotRest.Consts, wantRest.Consts = nil, nil
			if !reflect.DeepEqual(gotRest, wantRest) {
				t.Errorf("Decode(Encode(p)) = %+v, want %+v", gotRest, wantRest)
			}
		})
	}
}

func TestEncodingLayout(t *testing.T) {
	p := &bytecode.Program{Inputs: []string{"x"}, Consts: []float64{1}, MaxStack: 2,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpConst, 0), in(bytecode.OpAdd, 0)}}
	data, err := bytecode.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("VEXL")
	want = append(want, 1, 0, 0, 0) // version 1, flags 0
	want = append(want, 1, 1, 'x')  // one input "x"
	want = append(want, 0)          // no temps
	want = append(want, 1, 0)       // one constant
	want = binary.LittleEndian.AppendUint64(want, math.Float64bits(1))
	want = append(want, 2)                         // max stack
	want = append(want, 6, 0, 0, 0)                // 6 code bytes
	want = append(want, 0x01, 0, 0x02, 0, 0, 0x10) // in 0; const 0; add
	want = binary.LittleEndian.AppendUint32(want, crc32.ChecksumIEEE(want))
	if !bytes.Equal(data, want) {
		t.Errorf("Encode =\n%x\nwant\n%x", data, want)
	}
}

func TestCorruptionRejected(t *testing.T) {
	data, err := bytecode.Encode(sampleProgram())
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(data)
			bad[i] ^= mask
			if _, err := bytecode.Decode(bad); err == nil {
				t.Fatalf("Decode accepted the program with byte %d xor %#x", i, mask)
			} else if !errors.Is(err, bytecode.ErrInvalid) && !errors.Is(err, bytecode.ErrChecksum) {
				t.Fatalf("byte %d: error %v wraps neither ErrInvalid nor ErrChecksum", i, err)
			}
		}
	}
	for n := 0; n < len(data); n++ {
		if _, err := bytecode.Decode(data[:n]); err == nil {
			t.Fatalf("Decode accepted the program truncated to %d bytes", n)
		}
	}
	if _, err := bytecode.Decode(append(bytes.Clone(data), 0)); err == nil {
		t.Fatal("Decode accepted a trailing byte")
	}
}

// reseal recomputes the checksum of an encoding edited by a test.
func reseal(data []byte) []byte {
	body := data[:len(data)-4]
	return binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.ChecksumIEEE(body))
}

func TestDecodeErrors(t *testing.T) {
	good, err := bytecode.Encode(sampleProgram())
	if err != nil {
		t.Fatal(err)
	}
	// Offsets in the sample: names at 9..12, constants at 16..31, max
	// stack at 32, code length at 33..36, code from 37.
	edit := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return reseal(b)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "decode: invalid vexl program: not a vexl program (bad magic)"},
		{"bad magic", []byte("VEXX\x01\x00"), "decode: invalid vexl program: not a vexl program (bad magic)"},
		{"future version", edit(func(b []byte) { b[4] = 2 }), "decode: invalid vexl program: unsupported format version 2 (this build reads version 1)"},
		{"bad checksum", append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0), "decode: vexl program checksum mismatch"},
		{"flags", edit(func(b []byte) { b[6] = 1 }), "decode: invalid vexl program: reserved flags 0x0001 set"},
		{"bad name", edit(func(b []byte) { b[10] = '9' }), `decode: invalid vexl program: input 0: bad name "9"`},
		{"duplicate name", edit(func(b []byte) { b[12] = 'x' }), `decode: invalid vexl program: input 1: duplicate name "x"`},
		{"max stack", edit(func(b []byte) { b[32] = 4 }), "decode: invalid vexl program: declared max stack 4, code needs 3"},
		{"unknown opcode", edit(func(b []byte) { b[37] = 0x7f }), "decode: invalid vexl program: code byte 0: unknown opcode 0x7f"},
		{"input out of range", edit(func(b []byte) { b[38] = 2 }), "decode: invalid vexl program: instruction 0: in operand 2 out of range (have 2)"},
		{"load before store", edit(func(b []byte) { b[37], b[38] = byte(bytecode.OpLoad), 0 }), "decode: invalid vexl program: instruction 0: temporary 0 loaded before it is stored"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := bytecode.Decode(tt.data)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("Decode error = %v\nwant prefix %s", err, tt.want)
			}
		})
	}
}

// checkTests lists programs that break one rule each.
var checkTests = []struct {
	name string
	prog *bytecode.Program
	want string
}{
	{"nil", nil, "nil program"},
	{"no inputs", &bytecode.Program{MaxStack: 1, Code: []bytecode.Instr{in(bytecode.OpConst, 0)}, Consts: []float64{1}}, "0 inputs, want 1..16"},
	{"too many inputs", &bytecode.Program{Inputs: strings.Fields("a b c d e f g h i j k l m n o p q"), MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0)}}, "17 inputs, want 1..16"},
	{"long name", &bytecode.Program{Inputs: []string{strings.Repeat("n", 65)}, MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0)}}, "input 0: bad name"},
	{"empty code", &bytecode.Program{Inputs: []string{"x"}}, "empty code"},
	{"underflow", &bytecode.Program{Inputs: []string{"x"}, MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpAdd, 0)}}, "instruction 1: add needs 2 stack values, have 1"},
	{"leftover", &bytecode.Program{Inputs: []string{"x"}, MaxStack: 2,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpInput, 0)}}, "program leaves 2 values on the stack, want 1"},
	{"nothing left", &bytecode.Program{Inputs: []string{"x"}, NumTemps: 1, MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpStore, 0)}}, "program leaves 0 values on the stack, want 1"},
	{"stored twice", &bytecode.Program{Inputs: []string{"x"}, NumTemps: 1, MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpStore, 0), in(bytecode.OpInput, 0), in(bytecode.OpStore, 0), in(bytecode.OpInput, 0)}},
		"instruction 3: temporary 0 stored twice"},
	{"const out of range", &bytecode.Program{Inputs: []string{"x"}, MaxStack: 1,
		Code: []bytecode.Instr{in(bytecode.OpConst, 0)}}, "instruction 0: const operand 0 out of range (have 0)"},
	{"operand on add", &bytecode.Program{Inputs: []string{"x"}, MaxStack: 2,
		Code: []bytecode.Instr{in(bytecode.OpInput, 0), in(bytecode.OpInput, 0), in(bytecode.OpAdd, 1)}}, "instruction 2: add takes no operand"},
	{"stack overflow", &bytecode.Program{Inputs: []string{"x"}, MaxStack: 65,
		Code: append(make([]bytecode.Instr, 65), make([]bytecode.Instr, 64)...)}, "instruction 64: stack depth 65 exceeds 64"},
}

func TestCheck(t *testing.T) {
	// The overflow program: 65 pushes then 64 adds.
	for i := range checkTests[len(checkTests)-1].prog.Code {
		op := bytecode.OpInput
		if i >= 65 {
			op = bytecode.OpAdd
		}
		checkTests[len(checkTests)-1].prog.Code[i] = in(op, 0)
	}
	for _, tt := range checkTests {
		t.Run(tt.name, func(t *testing.T) {
			err := bytecode.Check(tt.prog)
			if err == nil || !errors.Is(err, bytecode.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check = %v, want ErrInvalid containing %q", err, tt.want)
			}
			if _, err := bytecode.Encode(tt.prog); err == nil {
				t.Errorf("Encode accepted the program")
			}
		})
	}
}

func TestOpNames(t *testing.T) {
	for op := 0; op < 256; op++ {
		o := bytecode.Op(op)
		if o.Valid() == strings.HasPrefix(o.String(), "op(") {
			t.Errorf("Op(%#x): Valid() = %v, String() = %q", op, o.Valid(), o)
		}
	}
	if got := in(bytecode.OpConst, 7).String(); got != "const 7" {
		t.Errorf("Instr.String() = %q", got)
	}
}

func TestDisassemble(t *testing.T) {
	got := bytecode.Disassemble(sampleProgram())
	for _, want := range []string{
		"vexl bytecode v1\n",
		"inputs:    x, y\n",
		"  c0    2.5\n",
		"  0000  in     0     ; x\n",
		"  0003  store  0     ; t0\n",
		"  0005  const  0     ; 2.5\n",
		"  0016  sub\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Disassemble output lacks %q:\n%s", want, got)
		}
	}
}
