package sanitize

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// benchSize is the size of the file the benchmarks scan.
const benchSize = 200 << 20

// writeEvidenceLike writes size bytes of text shaped like a lane's
// cases.jsonl: case ids, statuses, metrics, sanitised paths, sha256 hex
// digests, wheel RECORD hashes, UUIDs and versions, with no finding.
func writeEvidenceLike(tb testing.TB, path string, size int64) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	var n int64
	for i := 0; n < size; i++ {
		d := sha256.Sum256([]byte{byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)})
		line := fmt.Sprintf(`{"lane":"correctness","id":"conv2d/fp32/case-%07d","status":"PASS","tier":"t%d",`+
			`"metrics":{"max_abs_err":%.6e,"rel_err":%.6e},"tolerance":{"max_abs_err":1e-05},"duration_s":%.6f,`+
			`"message":"ok {venv}/lib/python3.12/site-packages/vexl/ops/conv.py:%d in {work}/scratch, ~/.cache and {tmp}/x",`+
			`"sha256":"%s","record":"vexl/_native.cpython-312-x86_64-linux-gnu.so,sha256=%s,%d",`+
			`"uuid":"%x-%x-%x-%x-%x","version":"0.3.%drc%d+local.%d"}`+"\n",
			i, i%3, rng.Float64()*1e-6, rng.Float64()*1e-5, rng.Float64(), rng.IntN(900),
			hex.EncodeToString(d[:]), base64.RawURLEncoding.EncodeToString(d[:]), rng.IntN(1<<20),
			d[0:4], d[4:6], d[6:8], d[8:10], d[10:16], i%10, i%3, i%100)
		k, _ := w.WriteString(line)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func writeRandom(tb testing.TB, path string, size int64) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(3, 4))
	var buf [8]byte
	for n := int64(0); n < size; n += 8 {
		v := rng.Uint64()
		for j := range buf {
			buf[j] = byte(v >> (8 * j))
		}
		w.Write(buf[:])
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func benchScanFile(b *testing.B, write func(testing.TB, string, int64)) {
	path := filepath.Join(b.TempDir(), "cases.jsonl")
	write(b, path, benchSize)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	s := testPrivate().Scanner()
	b.SetBytes(st.Size())
	for b.Loop() {
		fs, err := s.ScanFile(path, "cases.jsonl")
		if err != nil {
			b.Fatal(err)
		}
		if len(fs) != 0 {
			b.Fatalf("findings in clean data: %v", fs[0])
		}
	}
}

// BenchmarkScanFileEvidence scans a 200 MiB file shaped like cases.jsonl
// (in the page cache after the first iteration).
func BenchmarkScanFileEvidence(b *testing.B) { benchScanFile(b, writeEvidenceLike) }

// BenchmarkScanFileRandom scans 200 MiB of random bytes (an SQLite page or
// a compressed member looks like this).
func BenchmarkScanFileRandom(b *testing.B) { benchScanFile(b, writeRandom) }

// BenchmarkString sanitises a typical recorded message.
func BenchmarkString(b *testing.B) {
	p := testPrivate()
	msg := "FileNotFoundError: [Errno 2] No such file or directory: '/home/alice/.cache/vexl/kernels.bin' (cwd /tmp/mk-1/venv/lib)"
	for b.Loop() {
		p.String(msg)
	}
}
