// Command plugin is the vexl runtime as a C shared library:
//
//	go build -buildmode=c-shared -o libvexl.so ./plugin
//
// It exports this C ABI (the generated libvexl.h declares the same functions
// through the vexl_* typedefs below):
//
//	const char* vexl_version(void);
//	    The library version, e.g. "devel".
//	const char* vexl_profile(void);
//	    The evaluation profile vexl_load would use now ("baseline").
//	long long   vexl_load(const void* buf, size_t n);
//	    Decodes and checks a compiled program (the bytes of a .vxb file).
//	    Returns a handle > 0, or 0 on error. The library copies what it
//	    needs: buf may be freed as soon as vexl_load returns.
//	int         vexl_num_inputs(long long h);
//	    The number of input vectors of the program, or -1 for a bad handle.
//	int         vexl_run_f64(long long h, const double* const* inputs, int ninputs,
//	                         double* out, size_t n);
//	int         vexl_run_f32(long long h, const float* const* inputs, int ninputs,
//	                         float* out, size_t n);
//	    Evaluate the program over n elements: inputs[i] points to n values of
//	    input i, out to room for n results (out may equal an input pointer).
//	    Return 0 on success and -1 on error.
//	void        vexl_free(long long h);
//	    Releases a handle; unknown handles are ignored. Handles are never
//	    reused.
//	const char* vexl_last_error(void);
//	    The message of the last failure of any call on this library, or ""
//	    if nothing failed yet. Successful calls do not clear it.
//
// Every function is safe to call from several threads. No returned string
// may be freed or modified by the caller. Strings returned by vexl_version
// and vexl_profile live as long as the library. A string returned by
// vexl_last_error stays valid until the library has recorded errorRing (8)
// further errors; copy it to keep it longer. No Go pointer is ever handed to
// C: programs are named by integer handles in a mutex-guarded table.
package main

/*
#include <stddef.h>
#include <stdlib.h>

typedef const char vexl_cchar;
typedef const void vexl_cvoid;
typedef const double* const vexl_cf64ptr;
typedef const float* const vexl_cf32ptr;
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/vexl-dev/vexl/bytecode"
	"github.com/vexl-dev/vexl/vm"
)

// version is the version vexl_version reports.
const version = "devel"

// errorRing is how many error messages are kept alive, so that a message
// read by one thread is not freed at once by a failure on another.
const errorRing = 8

// registry is the library's only state: the handle table, the recent error
// messages and the C strings handed out, all guarded by mu.
type registry struct {
	mu       sync.Mutex
	next     int64
	machines map[int64]*vm.Machine
	errs     [errorRing]*C.char // recent messages, errs[nerrs%errorRing] is the oldest
	nerrs    uint64
	strings  map[string]*C.char // interned, never freed
}

// lib is the library state shared by every exported function.
var lib = newRegistry()

func newRegistry() *registry {
	return &registry{machines: map[int64]*vm.Machine{}, strings: map[string]*C.char{}}
}

// cstring returns a C copy of s that lives as long as the library. Only a
// bounded set of strings (version, profile names) is interned.
func (r *registry) cstring(s string) *C.char {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.strings[s]; ok {
		return c
	}
	c := C.CString(s)
	r.strings[s] = c
	return c
}

// fail records err as the last error, freeing the oldest kept message.
func (r *registry) fail(err error) {
	msg := C.CString(err.Error())
	r.mu.Lock()
	defer r.mu.Unlock()
	slot := &r.errs[r.nerrs%errorRing]
	if *slot != nil {
		C.free(unsafe.Pointer(*slot))
	}
	*slot = msg
	r.nerrs++
}

// lastError returns the most recent error message, or nil.
func (r *registry) lastError() *C.char {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.nerrs == 0 {
		return nil
	}
	return r.errs[(r.nerrs-1)%errorRing]
}

// recoverInto turns a panic inside an exported function into a recorded
// error, so that a bug never takes the host process down.
func (r *registry) recoverInto(rc *C.int) {
	if v := recover(); v != nil {
		r.fail(fmt.Errorf("vexl: internal error: %v", v))
		if rc != nil {
			*rc = -1
		}
	}
}

func (r *registry) add(m *vm.Machine) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	r.machines[r.next] = m
	return r.next
}

func (r *registry) get(h int64) (*vm.Machine, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.machines[h]
	if !ok {
		return nil, fmt.Errorf("vexl: invalid handle %d", h)
	}
	return m, nil
}

func (r *registry) remove(h int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.machines, h)
}

// activeProfile returns the profile vexl_load uses.
func activeProfile() (vm.Profile, error) {
	return vm.DefaultProfile(), nil
}

//export vexl_version
func vexl_version() *C.vexl_cchar {
	return (*C.vexl_cchar)(lib.cstring(version))
}

//export vexl_profile
func vexl_profile() *C.vexl_cchar {
	p, err := activeProfile()
	if err != nil {
		lib.fail(err)
		return (*C.vexl_cchar)(lib.cstring(""))
	}
	return (*C.vexl_cchar)(lib.cstring(string(p)))
}

//export vexl_load
func vexl_load(buf *C.vexl_cvoid, n C.size_t) (h C.longlong) {
	defer func() {
		if v := recover(); v != nil {
			lib.fail(fmt.Errorf("vexl_load: internal error: %v", v))
			h = 0
		}
	}()
	if buf == nil || n == 0 {
		lib.fail(fmt.Errorf("vexl_load: empty program"))
		return 0
	}
	if uint64(n) > bytecode.MaxEncodedSize {
		lib.fail(fmt.Errorf("vexl_load: %d bytes, larger than any valid program", uint64(n)))
		return 0
	}
	id, err := lib.load(unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n)))
	if err != nil {
		lib.fail(fmt.Errorf("vexl_load: %w", err))
		return 0
	}
	return C.longlong(id)
}

// load decodes an encoded program, prepares it under the active profile and
// returns its new handle. It does not retain data.
func (r *registry) load(data []byte) (int64, error) {
	prog, err := bytecode.Decode(data)
	if err != nil {
		return 0, err
	}
	profile, err := activeProfile()
	if err != nil {
		return 0, err
	}
	m, err := vm.New(prog, profile)
	if err != nil {
		return 0, err
	}
	return r.add(m), nil
}

//export vexl_num_inputs
func vexl_num_inputs(h C.longlong) (rc C.int) {
	defer lib.recoverInto(&rc)
	m, err := lib.get(int64(h))
	if err != nil {
		lib.fail(fmt.Errorf("vexl_num_inputs: %w", err))
		return -1
	}
	return C.int(m.NumInputs())
}

// vectors views C input arrays as Go slices, checking every pointer.
func vectors[T, P any](inputs *P, ninputs C.int, n C.size_t) ([][]T, error) {
	if ninputs < 0 || ninputs > bytecode.MaxInputs {
		return nil, fmt.Errorf("%d inputs, no program takes that many", int(ninputs))
	}
	if ninputs > 0 && inputs == nil {
		return nil, fmt.Errorf("inputs is NULL")
	}
	vs := make([][]T, int(ninputs))
	if ninputs == 0 {
		return vs, nil
	}
	ptrs := unsafe.Slice((**T)(unsafe.Pointer(inputs)), int(ninputs))
	for i, p := range ptrs {
		if p == nil && n > 0 {
			return nil, fmt.Errorf("input %d is NULL", i)
		}
		if p != nil {
			vs[i] = unsafe.Slice(p, int(n))
		} else {
			vs[i] = []T{}
		}
	}
	return vs, nil
}

// output views the C output array as a Go slice.
func output[T any](out *T, n C.size_t) ([]T, error) {
	if n == 0 {
		return []T{}, nil
	}
	if out == nil {
		return nil, fmt.Errorf("out is NULL")
	}
	return unsafe.Slice(out, int(n)), nil
}

// maxElements bounds n so that n elements of 8 bytes stay addressable.
const maxElements = 1 << 48

//export vexl_run_f64
func vexl_run_f64(h C.longlong, inputs *C.vexl_cf64ptr, ninputs C.int, out *C.double, n C.size_t) (rc C.int) {
	defer lib.recoverInto(&rc)
	if err := runVectors(lib, int64(h), inputs, ninputs, (*float64)(unsafe.Pointer(out)), n, (*vm.Machine).RunF64); err != nil {
		lib.fail(fmt.Errorf("vexl_run_f64: %w", err))
		return -1
	}
	return 0
}

//export vexl_run_f32
func vexl_run_f32(h C.longlong, inputs *C.vexl_cf32ptr, ninputs C.int, out *C.float, n C.size_t) (rc C.int) {
	defer lib.recoverInto(&rc)
	if err := runVectors(lib, int64(h), inputs, ninputs, (*float32)(unsafe.Pointer(out)), n, (*vm.Machine).RunF32); err != nil {
		lib.fail(fmt.Errorf("vexl_run_f32: %w", err))
		return -1
	}
	return 0
}

// runVectors is the shared body of vexl_run_f64 and vexl_run_f32.
func runVectors[T, P any](r *registry, h int64, inputs *P, ninputs C.int, out *T, n C.size_t,
	run func(*vm.Machine, [][]T, []T) error) error {
	if uint64(n) > maxElements {
		return fmt.Errorf("%d elements is too many", uint64(n))
	}
	m, err := r.get(h)
	if err != nil {
		return err
	}
	ins, err := vectors[T](inputs, ninputs, n)
	if err != nil {
		return err
	}
	dst, err := output(out, n)
	if err != nil {
		return err
	}
	return run(m, ins, dst)
}

//export vexl_free
func vexl_free(h C.longlong) {
	defer lib.recoverInto(nil)
	lib.remove(int64(h))
}

//export vexl_last_error
func vexl_last_error() *C.vexl_cchar {
	msg := lib.lastError()
	if msg == nil {
		return (*C.vexl_cchar)(lib.cstring(""))
	}
	return (*C.vexl_cchar)(msg)
}

func main() {}
