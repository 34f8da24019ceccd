package bytecode_test

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/vm"
)

// fuzzInputs are the element values every decoded program is run on.
var fuzzInputs = []float64{-1.5, 0, 2, math.Inf(1), math.NaN(), 1e-300, -7}

// FuzzDecode checks that decoding arbitrary bytes never panics, that every
// accepted program re-encodes to the same bytes, and that every accepted
// program runs under every profile with the same results.
func FuzzDecode(f *testing.F) {
	good, err := bytecode.Encode(sampleProgram())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(reseal(append(bytes.Clone(good[:len(good)-4]), 0, 0, 0, 0)))
	f.Add([]byte("VEXL"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, data)
		// Most mutations only break the checksum; resealing lets the
		// fuzzer reach the structural checks too.
		if len(data) >= 4 {
			checkDecode(t, reseal(data))
		}
	})
}

func checkDecode(t *testing.T, data []byte) {
	p, err := bytecode.Decode(data)
	if err != nil {
		if !errors.Is(err, bytecode.ErrInvalid) && !errors.Is(err, bytecode.ErrChecksum) {
			t.Fatalf("error %v wraps neither ErrInvalid nor ErrChecksum", err)
		}
		return
	}
	again, err := bytecode.Encode(p)
	if err != nil {
		t.Fatalf("Encode of a decoded program: %v", err)
	}
	if !bytes.Equal(again, data) {
		t.Fatalf("Encode(Decode(data)) != data")
	}
	checkProfilesAgree(t, p)
}

// checkProfilesAgree runs p under every profile, in both precisions, and
// fails unless all profiles give bit-identical results (any NaN matches any
// NaN).
func checkProfilesAgree(t *testing.T, p *bytecode.Program) {
	t.Helper()
	n := len(fuzzInputs)
	in64 := make([][]float64, len(p.Inputs))
	in32 := make([][]float32, len(p.Inputs))
	for i := range in64 {
		in64[i] = make([]float64, n)
		in32[i] = make([]float32, n)
		for j := range in64[i] {
			v := fuzzInputs[(i+j)%n]
			in64[i][j], in32[i][j] = v, float32(v)
		}
	}
	var ref64 []float64
	var ref32 []float32
	for _, profile := range vm.Profiles() {
		m, err := vm.New(p, profile)
		if err != nil {
			t.Fatalf("%s: New: %v", profile, err)
		}
		out64 := make([]float64, n)
		out32 := make([]float32, n)
		if err := m.RunF64(in64, out64); err != nil {
			t.Fatalf("%s: RunF64: %v", profile, err)
		}
		if err := m.RunF32(in32, out32); err != nil {
			t.Fatalf("%s: RunF32: %v", profile, err)
		}
		if ref64 == nil {
			ref64, ref32 = out64, out32
			continue
		}
		for j := range out64 {
			if a, b := out64[j], ref64[j]; a != b && !(a != a && b != b) {
				t.Fatalf("%s: f64 element %d = %v, first profile gave %v", profile, j, a, b)
			}
			if a, b := out32[j], ref32[j]; a != b && !(a != a && b != b) {
				t.Fatalf("%s: f32 element %d = %v, first profile gave %v", profile, j, a, b)
			}
		}
	}
}
