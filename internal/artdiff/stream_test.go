package artdiff

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestStreamReaderAt reads a stream at random offsets, backwards and
// forwards, and checks every read against the bytes.
func TestStreamReaderAt(t *testing.T) {
	data := make([]byte, 300_000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, tail := range []int64{0, 1000, 1 << 20} {
		opens := 0
		s := newStreamReaderAt(func() (io.ReadCloser, error) {
			opens++
			return io.NopCloser(bytes.NewReader(data)), nil
		}, int64(len(data)), tail)
		want := bytes.NewReader(data)
		for range 500 {
			off := rng.Int64N(int64(len(data)) + 10)
			n := rng.IntN(5000)
			got, exp := make([]byte, n), make([]byte, n)
			gn, gerr := s.ReadAt(got, off)
			en, eerr := want.ReadAt(exp, off)
			if gn != en || !bytes.Equal(got[:gn], exp[:en]) || (gerr == nil) != (eerr == nil) {
				t.Fatalf("tail %d: ReadAt(%d bytes, %d) = %d, %v; want %d, %v", tail, n, off, gn, gerr, en, eerr)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("tail %d: %d opens for 500 random reads", tail, opens)
	}

	// A stream shorter than its declared size.
	s := newStreamReaderAt(func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("short")), nil
	}, 100, 10)
	if _, err := s.ReadAt(make([]byte, 10), 0); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("ReadAt past a short stream: %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestLargeMember compares two bundles holding a wheel with a 64 MiB
// member that differs near its end: the difference is found, and far
// less memory than the member's size is allocated.
func TestLargeMember(t *testing.T) {
	if testing.Short() {
		t.Skip("large member")
	}
	const size = 64 << 20
	big := make([]byte, size)
	bundle := func(mark byte) []byte {
		big[size-100] = mark
		wheel := mkzip(zipOpts{}, zmember{name: "vexl_plugin/__init__.py", body: "x = 1\n"}, zmember{name: "vexl_plugin/lib/big.bin", body: string(big)})
		return mktgz(tarOpts{}, testBundle(wheel, manifest)...)
	}
	a, b := bundle(1), bundle(2)
	big = nil
	dir := t.TempDir()
	pa, pb := write(t, dir, "a/b.tar.gz", a), write(t, dir, "b/b.tar.gz", b)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d, err := Compare("b.tar.gz", pa, pb)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{root + "wheels/" + wheelName, "vexl_plugin/lib/big.bin"}
	if d == nil || !slices.Equal(d.Path, want) || d.What != "content" || d.Detail != "first difference at byte 67108764 of 67108864" {
		t.Fatalf("Compare = %#v", d)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
		t.Errorf("Compare allocated %d MiB for a %d MiB member", alloc>>20, size>>20)
	}
}
