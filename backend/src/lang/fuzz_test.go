package lang_test

import (
	"errors"
	"math"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/lang"
	"github.com/vexl-dev/vexl/vm"
)

// FuzzCompile checks that compiling arbitrary text never panics, that every
// failure is a positioned *lang.Error, and that every compiled program
// survives an encode/decode round trip and runs under every profile with
// identical results.
func FuzzCompile(f *testing.F) {
	for _, tt := range errorTests {
		f.Add(tt.src)
	}
	for _, tt := range codeTests {
		f.Add(tt.src)
	}
	f.Add("in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3\n")
	f.Add("in a, b, c\nlet u = a * b + c\nlet v = c - a * b\nout clamp(u * v - 1, -2, exp(c)) / log(abs(a) + 2)")
	f.Fuzz(func(t *testing.T, src string) {
		prog, err := lang.Compile("f.vx", []byte(src))
		if err != nil {
			var lerr *lang.Error
			if !errors.As(err, &lerr) {
				t.Fatalf("Compile(%q) = %v, not a *lang.Error", src, err)
			}
			if lerr.Line < 1 || lerr.Col < 1 {
				t.Fatalf("Compile(%q): bad position in %v", src, err)
			}
			return
		}
		data, err := bytecode.Encode(prog)
		if err != nil {
			t.Fatalf("Encode(Compile(%q)): %v", src, err)
		}
		back, err := bytecode.Decode(data)
		if err != nil {
			t.Fatalf("Decode(Encode(Compile(%q))): %v", src, err)
		}
		runAll(t, back)
	})
}

// runAll runs p under every profile on a few values and fails unless the
// profiles agree bit for bit (any NaN matches any NaN).
func runAll(t *testing.T, p *bytecode.Program) {
	t.Helper()
	values := []float64{-2.5, 0, 1, 3, math.Inf(-1), math.NaN()}
	inputs := make([][]float64, len(p.Inputs))
	inputs32 := make([][]float32, len(p.Inputs))
	for i := range inputs {
		for j := range values {
			v := values[(i*2+j)%len(values)]
			inputs[i] = append(inputs[i], v)
			inputs32[i] = append(inputs32[i], float32(v))
		}
	}
	var first []float64
	var first32 []float32
	for _, profile := range vm.Profiles() {
		m, err := vm.New(p, profile)
		if err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		out := make([]float64, len(values))
		out32 := make([]float32, len(values))
		if err := m.RunF64(inputs, out); err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if err := m.RunF32(inputs32, out32); err != nil {
			t.Fatalf("%s: %v", profile, err)
		}
		if first == nil {
			first, first32 = out, out32
			continue
		}
		for j := range out {
			if a, b := out[j], first[j]; a != b && !(a != a && b != b) {
				t.Fatalf("%s: f64 element %d = %v, first profile gave %v", profile, j, a, b)
			}
			if a, b := out32[j], first32[j]; a != b && !(a != a && b != b) {
				t.Fatalf("%s: f32 element %d = %v, first profile gave %v", profile, j, a, b)
			}
		}
	}
}
