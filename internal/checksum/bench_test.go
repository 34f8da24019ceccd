package checksum

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchFolder writes n files of size bytes each, and their SHA256SUMS.
func benchFolder(b *testing.B, n, size int) (string, Sums) {
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(9, 10))
	data := make([]byte, size)
	var s Sums
	for i := range n {
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		name := fmt.Sprintf("artifact-%02d.whl", i)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		sha, _, err := File(p)
		if err != nil {
			b.Fatal(err)
		}
		s = append(s, Sum{Name: name, SHA256: sha})
	}
	if err := WriteSums(filepath.Join(dir, "SHA256SUMS"), s); err != nil {
		b.Fatal(err)
	}
	return dir, s
}

// BenchmarkFile measures hashing one file (one core).
func BenchmarkFile(b *testing.B) {
	dir, _ := benchFolder(b, 1, 64<<20)
	p := filepath.Join(dir, "artifact-00.whl")
	b.SetBytes(64 << 20)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := File(p); err != nil {
			b.Fatal(err)
		}
	}
}
