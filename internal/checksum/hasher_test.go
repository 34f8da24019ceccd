package checksum

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

func TestHasher(t *testing.T) {
	data := make([]byte, 3*hasherBufs*hasherBufSize+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for _, tt := range []struct {
		name  string
		size  int
		chunk int
	}{
		{"nothing", 0, 1},
		{"one byte", 1, 1},
		{"exactly one buffer", hasherBufSize, hasherBufSize},
		{"one buffer and a byte, in odd writes", hasherBufSize + 1, 1000},
		{"more than every buffer, in large writes", len(data), 3*hasherBufSize + 7},
		{"more than every buffer, in small writes", len(data), 4096},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := Bytes(data[:tt.size])
			h := NewHasher()
			src := bytes.NewReader(data[:tt.size])
			buf := make([]byte, tt.chunk)
			// The writer reuses its buffer, as io.TeeReader's callers do.
			if _, err := io.CopyBuffer(struct{ io.Writer }{h}, struct{ io.Reader }{src}, buf); err != nil {
				t.Fatal(err)
			}
			sha, n := h.Sum()
			if sha != want || n != int64(tt.size) {
				t.Errorf("Sum() = %s, %d; want %s, %d", sha, n, want, tt.size)
			}
		})
	}
}

// BenchmarkHasher is what a reader teeing into a Hasher pays per byte.
func BenchmarkHasher(b *testing.B) {
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(buf)))
	h := NewHasher()
	for b.Loop() {
		h.Write(buf)
	}
	h.Sum()
}
