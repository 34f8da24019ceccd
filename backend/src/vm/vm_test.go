package vm_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/lang"
	"github.com/vexl-dev/vexl/vm"
)

// numericTests pairs programs over x and y with the same computation in Go.
// The Go references use the same evaluation order and round every product
// with an explicit float64(...) conversion (which the Go spec guarantees
// prevents fusing it into a multiply-add), so float64 results must match
// exactly.
var numericTests = []struct {
	name string
	src  string
	ref  func(x, y float64) float64
}{
	{"add", "out x + y", func(x, y float64) float64 { return x + y }},
	{"sub", "out x - y", func(x, y float64) float64 { return x - y }},
	{"mul", "out x * y", func(x, y float64) float64 { return x * y }},
	{"div", "out x / y", func(x, y float64) float64 { return x / y }},
	{"neg", "out -x", func(x, y float64) float64 { return -x }},
	{"precedence", "out x + y * 2 - x / 4", func(x, y float64) float64 { return x + float64(y*2) - x/4 }},
	{"parentheses", "out (x + y) * (x - 1.5)", func(x, y float64) float64 { return float64((x + y) * (x - 1.5)) }},
	{"sqrt abs", "out sqrt(abs(x))", func(x, y float64) float64 { return math.Sqrt(math.Abs(x)) }},
	{"exp log", "out exp(x / 10) + log(abs(y) + 1)", func(x, y float64) float64 { return math.Exp(x/10) + math.Log(math.Abs(y)+1) }},
	{"min max", "out min(x, y) - max(x, y)", func(x, y float64) float64 { return min(x, y) - max(x, y) }},
	{"clamp", "out clamp(x, -1, y)", func(x, y float64) float64 { return min(max(x, -1), y) }},
	{"let", "let t = x * y\nlet u = t - x\nout t * u + u", func(x, y float64) float64 {
		t := float64(x * y)
		u := t - x
		return float64(t*u) + u
	}},
	{"readme example", "let t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3", func(x, y float64) float64 {
		return float64(x*y) + float64(2.5*math.Sqrt(math.Abs(x))) - min(x, y)/3
	}},
	{"constant", "out 1e-3", func(x, y float64) float64 { return 1e-3 }},
	{"negative literal", "out -2 * x + -y", func(x, y float64) float64 { return float64(-2*x) + -y }},
	{"division by zero at run time", "out x / (y - y)", func(x, y float64) float64 { return x / (y - y) }},
}

// sample returns n pseudo-random pairs, including special values.
func sample(n int) (xs, ys []float64) {
	r := rand.New(rand.NewSource(1))
	special := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e300, -1e-300, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := 0; i < n; i++ {
		x, y := (r.Float64()-0.5)*200, (r.Float64()-0.5)*200
		if i < len(special)*len(special) {
			x, y = special[i%len(special)], special[i/len(special)]
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	return xs, ys
}

func compile(t testing.TB, src string) *bytecode.Program {
	t.Helper()
	prog, err := lang.Compile("t.vx", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return prog
}

// same reports whether a and b are equal, or both NaN.
func same(a, b float64) bool { return a == b || a != a && b != b }

// close32 reports whether a float32 result is within a few float32 ulps of
// the float64 reference (relative), or both are NaN, or both the same
// infinity. Values that overflow float32 are skipped by the caller.
func close32(got float32, want float64) bool {
	g := float64(got)
	switch {
	case math.IsNaN(want) || math.IsNaN(g):
		return math.IsNaN(want) && math.IsNaN(g)
	case math.IsInf(want, 0) || math.IsInf(g, 0):
		return g == want
	}
	return math.Abs(g-want) <= 1e-5*max(1, math.Abs(want))
}

func TestNumerics(t *testing.T) {
	xs, ys := sample(1000)
	for _, tt := range numericTests {
		for _, profile := range vm.Profiles() {
			t.Run(fmt.Sprintf("%s/%s", tt.name, profile), func(t *testing.T) {
				m, err := vm.New(compile(t, "in x, y\n"+tt.src), profile)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]float64, len(xs))
				if err := m.RunF64([][]float64{xs, ys}, out); err != nil {
					t.Fatal(err)
				}
				for i := range xs {
					if want := tt.ref(xs[i], ys[i]); !same(out[i], want) {
						t.Fatalf("f64 x=%v y=%v: got %v, want %v", xs[i], ys[i], out[i], want)
					}
				}

				// float32: moderate inputs, compared with the float64 reference.
				var x32, y32 []float32
				var ref []float64
				for i := range xs {
					x, y := float64(float32(xs[i])), float64(float32(ys[i]))
					if math.Abs(x) > 1e3 || math.Abs(y) > 1e3 || (x != 0 && math.Abs(x) < 1e-3) || (y != 0 && math.Abs(y) < 1e-3) {
						continue
					}
					want := tt.ref(x, y)
					if math.Abs(want) > 1e30 {
						continue
					}
					x32, y32, ref = append(x32, float32(x)), append(y32, float32(y)), append(ref, want)
				}
				out32 := make([]float32, len(x32))
				if err := m.RunF32([][]float32{x32, y32}, out32); err != nil {
					t.Fatal(err)
				}
				for i := range x32 {
					if !close32(out32[i], ref[i]) {
						t.Fatalf("f32 x=%v y=%v: got %v, want %v", x32[i], y32[i], out32[i], ref[i])
					}
				}
			})
		}
	}
}

func TestRunErrors(t *testing.T) {
	m, err := vm.New(compile(t, "in x, y\nout x + y"), vm.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		inputs [][]float64
		out    []float64
		want   string
	}{
		{"too few inputs", [][]float64{{1}}, make([]float64, 1), "vm: bad inputs: program takes 2 inputs (x, y), got 1"},
		{"too many inputs", [][]float64{{1}, {2}, {3}}, make([]float64, 1), "vm: bad inputs: program takes 2 inputs (x, y), got 3"},
		{"short input", [][]float64{{1, 2}, {3}}, make([]float64, 2), "vm: bad inputs: input 1 (y) has 1 elements, output has 2"},
		{"short output", [][]float64{{1, 2}, {3, 4}}, make([]float64, 1), "vm: bad inputs: input 0 (x) has 2 elements, output has 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.RunF64(tt.inputs, tt.out)
			if err == nil || err.Error() != tt.want || !errors.Is(err, vm.ErrInputs) {
				t.Errorf("RunF64 = %v, want %q wrapping ErrInputs", err, tt.want)
			}
		})
	}
	if err := m.RunF32([][]float32{{1}}, make([]float32, 1)); !errors.Is(err, vm.ErrInputs) {
		t.Errorf("RunF32 with one input = %v, want ErrInputs", err)
	}
	if err := m.RunF64([][]float64{{}, {}}, nil); err != nil {
		t.Errorf("RunF64 on empty vectors = %v, want nil", err)
	}
}

func TestNewRejectsInvalid(t *testing.T) {
	prog := compile(t, "in x\nout x + 1")
	prog.MaxStack = 1 // wrong: the code needs 2
	if _, err := vm.New(prog, vm.DefaultProfile()); !errors.Is(err, bytecode.ErrInvalid) {
		t.Errorf("New(bad max stack) = %v, want ErrInvalid", err)
	}
	if _, err := vm.New(compile(t, "in x\nout x"), "turbo"); !errors.Is(err, vm.ErrUnknownProfile) {
		t.Errorf("New(turbo) = %v, want ErrUnknownProfile", err)
	}
}

func TestParseProfile(t *testing.T) {
	for _, p := range vm.Profiles() {
		if got, err := vm.ParseProfile(string(p)); got != p || err != nil {
			t.Errorf("ParseProfile(%q) = %q, %v", p, got, err)
		}
	}
	_, err := vm.ParseProfile("turbo")
	if err == nil || !errors.Is(err, vm.ErrUnknownProfile) || !strings.Contains(err.Error(), `"turbo"`) {
		t.Errorf("ParseProfile(turbo) = %v", err)
	}
	if vm.Profiles()[0] != vm.DefaultProfile() {
		t.Errorf("Profiles()[0] = %q, want the default %q", vm.Profiles()[0], vm.DefaultProfile())
	}
}

func TestMachineCopiesProgram(t *testing.T) {
	prog := compile(t, "in x\nout x * 2")
	m, err := vm.New(prog, vm.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	prog.Consts[0] = 100
	out := make([]float64, 1)
	if err := m.RunF64([][]float64{{3}}, out); err != nil || out[0] != 6 {
		t.Errorf("after changing the caller's program: %v, %v; want 6", out[0], err)
	}
	if got := m.Inputs(); len(got) != 1 || got[0] != "x" || m.NumInputs() != 1 {
		t.Errorf("Inputs() = %v, NumInputs() = %d", got, m.NumInputs())
	}
}

func TestOutputMayAliasInput(t *testing.T) {
	for _, profile := range vm.Profiles() {
		m, err := vm.New(compile(t, "in x, y\nlet t = x * y\nout t + x * 3"), profile)
		if err != nil {
			t.Fatal(err)
		}
		x := []float64{1, 2, 3, 4, 5}
		y := []float64{2, 2, 2, 2, 2}
		if err := m.RunF64([][]float64{x, y}, x); err != nil {
			t.Fatal(err)
		}
		if want := []float64{5, 10, 15, 20, 25}; fmt.Sprint(x) != fmt.Sprint(want) {
			t.Errorf("%s: aliased output = %v, want %v", profile, x, want)
		}
	}
}

func TestConcurrentRuns(t *testing.T) {
	m, err := vm.New(compile(t, "in x\nlet t = x * x\nout t - x / 2"), vm.DefaultProfile())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			x := make([]float64, 1000)
			for i := range x {
				x[i] = float64(i + g)
			}
			out := make([]float64, len(x))
			if err := m.RunF64([][]float64{x}, out); err != nil {
				t.Error(err)
				return
			}
			for i, v := range x {
				if want := v*v - v/2; out[i] != want {
					t.Errorf("goroutine %d: out[%d] = %v, want %v", g, i, out[i], want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestPackageLevelRun(t *testing.T) {
	prog := compile(t, "in x\nout x + 1")
	out := make([]float64, 2)
	if err := vm.RunF64(prog, [][]float64{{1, 2}}, out); err != nil || out[0] != 2 || out[1] != 3 {
		t.Errorf("RunF64 = %v, %v", out, err)
	}
	out32 := make([]float32, 2)
	if err := vm.RunF32(prog, [][]float32{{1, 2}}, out32); err != nil || out32[0] != 2 || out32[1] != 3 {
		t.Errorf("RunF32 = %v, %v", out32, err)
	}
}

func benchmarkProfile(b *testing.B, profile vm.Profile) {
	m, err := vm.New(compile(b, "in x, y\nlet t = x * y\nout t + 2.5 * sqrt(abs(x)) - min(x, y) / 3 + x * 0.25 + y * 0.75"), profile)
	if err != nil {
		b.Fatal(err)
	}
	xs, ys := sample(1 << 16)
	out := make([]float64, len(xs))
	b.SetBytes(int64(8 * len(xs)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.RunF64([][]float64{xs, ys}, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaseline(b *testing.B) { benchmarkProfile(b, vm.Baseline) }
