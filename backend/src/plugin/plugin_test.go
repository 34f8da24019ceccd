package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/lang"
	"github.com/vexl-dev/vexl/vm"
)

func encode(t *testing.T, src string) []byte {
	t.Helper()
	prog, err := lang.Compile("t.vx", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	data, err := bytecode.Encode(prog)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// goString copies a NUL-terminated C string without using cgo in a test.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return "<nil>"
	}
	var b []byte
	for q := (*byte)(p); *q != 0; q = (*byte)(unsafe.Add(unsafe.Pointer(q), 1)) {
		b = append(b, *q)
	}
	return string(b)
}

func TestHandles(t *testing.T) {
	r := newRegistry()
	data := encode(t, "in x, y\nout x * y")
	h1, err := r.load(data)
	if err != nil || h1 <= 0 {
		t.Fatalf("load = %d, %v", h1, err)
	}
	h2, err := r.load(data)
	if err != nil || h2 <= h1 {
		t.Fatalf("second load = %d, %v (first %d)", h2, err, h1)
	}
	r.remove(h1)
	if _, err := r.get(h1); err == nil || err.Error() != "vexl: invalid handle 1" {
		t.Errorf("get(freed) = %v", err)
	}
	h3, _ := r.load(data)
	if h3 <= h2 {
		t.Errorf("handle %d reused after free (previous %d)", h3, h2)
	}
	data[len(data)/2] ^= 1
	if _, err := r.load(data); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("load(corrupt) = %v", err)
	}
}

func TestRunVectors(t *testing.T) {
	r := newRegistry()
	h, err := r.load(encode(t, "in x, y\nout x * y + 1"))
	if err != nil {
		t.Fatal(err)
	}
	x, y := []float64{1, 2, 3}, []float64{4, 5, 6}
	ptrs := []*float64{&x[0], &y[0]}
	out := make([]float64, 3)
	if err := runVectors(r, h, &ptrs[0], 2, &out[0], 3, (*vm.Machine).RunF64); err != nil {
		t.Fatal(err)
	}
	if out[0] != 5 || out[1] != 11 || out[2] != 19 {
		t.Errorf("out = %v", out)
	}
	nilIn := []*float64{&x[0], nil}
	var nilPtrs **float64
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"negative count", runVectors(r, h, &ptrs[0], -1, &out[0], 3, (*vm.Machine).RunF64), "-1 inputs, no program takes that many"},
		{"huge count", runVectors(r, h, &ptrs[0], 1<<30, &out[0], 3, (*vm.Machine).RunF64), "1073741824 inputs, no program takes that many"},
		{"null inputs", runVectors(r, h, nilPtrs, 2, &out[0], 3, (*vm.Machine).RunF64), "inputs is NULL"},
		{"null input", runVectors(r, h, &nilIn[0], 2, &out[0], 3, (*vm.Machine).RunF64), "input 1 is NULL"},
		{"null out", runVectors(r, h, &ptrs[0], 2, (*float64)(nil), 3, (*vm.Machine).RunF64), "out is NULL"},
		{"wrong count", runVectors(r, h, &ptrs[0], 1, &out[0], 3, (*vm.Machine).RunF64), "vm: bad inputs: program takes 2 inputs (x, y), got 1"},
		{"bad handle", runVectors(r, h+1, &ptrs[0], 2, &out[0], 3, (*vm.Machine).RunF64), "vexl: invalid handle 2"},
		{"too long", runVectors(r, h, &ptrs[0], 2, &out[0], 1<<60, (*vm.Machine).RunF64), "1152921504606846976 elements is too many"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, tt.err, tt.want)
		}
	}
	// With no elements, NULL vectors are fine.
	if err := runVectors(r, h, &nilIn[0], 2, (*float64)(nil), 0, (*vm.Machine).RunF64); err != nil {
		t.Errorf("n = 0: %v", err)
	}
}

// TestConcurrentUse loads, runs and frees programs from several goroutines
// at once; run it with -race to check the handle table's locking.
func TestConcurrentUse(t *testing.T) {
	r := newRegistry()
	data := encode(t, "in x\nout x * x + 1")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				h, err := r.load(data)
				if err != nil {
					t.Error(err)
					return
				}
				x := []float64{float64(i), 2}
				ptrs := []*float64{&x[0]}
				out := make([]float64, 2)
				if err := runVectors(r, h, &ptrs[0], 1, &out[0], 2, (*vm.Machine).RunF64); err != nil || out[1] != 5 {
					t.Errorf("run: %v, %v", out, err)
				}
				r.fail(fmt.Errorf("failure %d", i))
				_ = r.lastError()
				r.remove(h)
			}
		}()
	}
	wg.Wait()
	if len(r.machines) != 0 {
		t.Errorf("%d handles left after every free", len(r.machines))
	}
}

func TestErrorRing(t *testing.T) {
	r := newRegistry()
	if r.lastError() != nil {
		t.Fatal("fresh registry has an error")
	}
	for i := 0; i < 3*errorRing; i++ {
		r.fail(os.ErrNotExist)
	}
	r.fail(os.ErrExist)
	if got := goString(unsafe.Pointer(r.lastError())); got != os.ErrExist.Error() {
		t.Errorf("last error %q", got)
	}
	if got := goString(unsafe.Pointer(r.cstring("devel"))); got != "devel" || r.cstring("devel") != r.cstring("devel") {
		t.Errorf("cstring: %q, or not interned", got)
	}
}

// TestCABI builds the shared library and a C program against its generated
// header (with warnings as errors, so the header must stay const-correct),
// then runs it. It needs the go command and a C compiler.
func TestCABI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the shared library; skipped in -short mode")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		if _, err := os.Stat(goCmd); err != nil {
			t.Skipf("go command not found: %v", err)
		}
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("C compiler %q not found", cc)
	}
	dir := t.TempDir()
	build := exec.Command(goCmd, "build", "-trimpath", "-buildmode=c-shared", "-o", filepath.Join(dir, "libvexl.so"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ccCmd := exec.Command(cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", dir, "-o", filepath.Join(dir, "abi"),
		filepath.Join("testdata", "abi.c"), "-L", dir, "-lvexl", "-Wl,-rpath,"+dir)
	if out, err := ccCmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	prog := filepath.Join(dir, "prog.vxb")
	if err := os.WriteFile(prog, encode(t, "in x, y\nout x * y + 1"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range abiRuns {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(dir, "abi"), prog)
			cmd.Env = append(os.Environ(), tt.env...)
			out, err := cmd.CombinedOutput()
			if err != nil || string(out) != tt.want {
				t.Errorf("abi: %v\n got: %q\nwant: %q", err, out, tt.want)
			}
		})
	}
}

// abiRuns are the runs of the C program and their expected output.
var abiRuns = []struct {
	name string
	env  []string
	want string
}{
	{"default", nil, "version devel\nprofile baseline\nok\n"},
}
