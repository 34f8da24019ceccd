package wheel

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/flate"
)

// segmentData is size bytes that compress like a binary: runs of text and
// repeated blocks (some of them reaching across a segment boundary) between
// random bytes.
func segmentData(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, 0, size)
	for len(b) < size {
		switch r.IntN(3) {
		case 0:
			for range r.IntN(4096) {
				b = append(b, byte(r.Uint32()))
			}
		case 1:
			b = append(b, "the quick brown fox jumps over the lazy dog; "[:r.IntN(45)]...)
		default:
			if len(b) > 0 {
				from := r.IntN(len(b))
				b = append(b, b[from:min(len(b), from+r.IntN(20000))]...)
			}
		}
	}
	return b[:size]
}

func TestSegmentDeflate(t *testing.T) {
	ctx := context.Background()
	sizes := []int{0, 1, dictSize, segmentSize - 1, segmentSize, segmentSize + 1, 2*segmentSize + dictSize, 5*segmentSize + 17}
	for _, size := range sizes {
		data := segmentData(size, uint64(size))
		var want []byte
		for _, round := range []int{1, 2, 3, 8} {
			for _, half := range []bool{false, true} {
				var src io.Reader = bytes.NewReader(data)
				if half {
					src = iotest.HalfReader(src) // reads fall elsewhere
				}
				g := newSegmenter(newDeflaters(round), round)
				var out bytes.Buffer
				h := sha256.New()
				n, err := g.deflate(ctx, src, &out, h)
				if err != nil {
					t.Fatalf("size %d round %d: %v", size, round, err)
				}
				if n != int64(size) || !bytes.Equal(h.Sum(nil), sha256Of(data)) {
					t.Fatalf("size %d round %d: %d bytes hashed, or not in order", size, round, n)
				}
				if want == nil {
					want = bytes.Clone(out.Bytes())
					got, err := io.ReadAll(flate.NewReader(bytes.NewReader(want)))
					if err != nil || !bytes.Equal(got, data) {
						t.Fatalf("size %d: the stream does not inflate to the member (%v)", size, err)
					}
				} else if !bytes.Equal(out.Bytes(), want) {
					t.Fatalf("size %d: round %d (half reads %v) wrote other bytes than round 1", size, round, half)
				}
				// The segmenter is reused from member to member: a second
				// member through it gives the same bytes.
				out.Reset()
				if _, err := g.deflate(ctx, bytes.NewReader(data), &out, io.Discard); err != nil || !bytes.Equal(out.Bytes(), want) {
					t.Fatalf("size %d round %d: a reused segmenter wrote other bytes (%v)", size, round, err)
				}
			}
		}
		if size <= segmentSize {
			// One segment is exactly one plain deflate stream.
			var plain bytes.Buffer
			fw, _ := flate.NewWriter(&plain, Level)
			fw.Write(data)
			fw.Close()
			if !bytes.Equal(plain.Bytes(), want) {
				t.Errorf("size %d: one segment differs from a plain deflate stream", size)
			}
		}
	}
}

// TestSegmentDeflateRatio: priming each segment with the previous one's
// end keeps the size within 0.5 % of one stream.
func TestSegmentDeflateRatio(t *testing.T) {
	data := segmentData(6*segmentSize, 7)
	var one bytes.Buffer
	fw, _ := flate.NewWriter(&one, Level)
	fw.Write(data)
	fw.Close()
	var seg bytes.Buffer
	if _, err := newSegmenter(newDeflaters(2), 2).deflate(context.Background(), bytes.NewReader(data), &seg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if r := float64(seg.Len()) / float64(one.Len()); r > 1.005 {
		t.Errorf("segmented %d bytes, one stream %d: ratio %.4f", seg.Len(), one.Len(), r)
	}
}

func TestSegmentDeflateCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := newSegmenter(newDeflaters(2), 2)
	if _, err := g.deflate(ctx, bytes.NewReader(segmentData(3*segmentSize, 1)), io.Discard, io.Discard); err == nil {
		t.Fatal("a cancelled context deflated the member")
	}
}

func sha256Of(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
