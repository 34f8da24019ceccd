package wheel

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// segmentSize is the unit in which a member is deflated. Each segment is
// compressed on its own, its window primed with the previous segment's last
// 32 KiB (as pigz does), and every segment but the last ends with a sync
// flush, so the segments concatenate into one deflate stream. One large
// member is thus compressed on every core, and the bytes depend only on the
// content: never on the core count or on how reads fall. A member of at most
// one segment is one plain deflate stream. Changing segmentSize changes the
// bytes of every wheel with a larger member.
const segmentSize = 1 << 20

// dictSize is deflate's window: the most of the previous segment a
// segment's matches can refer to.
const dictSize = 32 << 10

// deflaters bounds the deflate compressors running at once, over all the
// members of a wheel, and recycles them (a level-7 compressor holds about
// 1 MiB of tables).
type deflaters chan *flate.Writer

func newDeflaters(n int) deflaters {
	d := make(deflaters, n)
	for range n {
		d <- nil
	}
	return d
}

// get waits for a free compressor, creating it on first use.
func (d deflaters) get(ctx context.Context) (*flate.Writer, error) {
	var fw *flate.Writer
	select {
	case fw = <-d:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if fw == nil {
		var err error
		if fw, err = flate.NewWriter(io.Discard, Level); err != nil {
			d <- nil
			return nil, err
		}
	}
	return fw, nil
}

func (d deflaters) put(fw *flate.Writer) { d <- fw }

// segment is one segmentSize piece of a member and its deflated bytes.
type segment struct {
	in   []byte
	dict []byte // the previous segment's last dictSize bytes (nil for the first)
	out  bytes.Buffer
	last bool
	err  error
}

func (s *segment) deflate(ctx context.Context, d deflaters) {
	fw, err := d.get(ctx)
	if err != nil {
		s.err = err
		return
	}
	defer d.put(fw)
	s.out.Reset()
	// ResetDict, never Reset: Reset would prime the window again with
	// whatever dictionary the compressor was last given.
	fw.ResetDict(&s.out, s.dict)
	if _, err := fw.Write(s.in); err != nil {
		s.err = err
		return
	}
	if s.last {
		s.err = fw.Close()
	} else {
		s.err = fw.Flush()
	}
}

// segmenter deflates members segment by segment; each compressing
// goroutine owns one and reuses its buffers from member to member.
type segmenter struct {
	deflaters deflaters
	// round is how many segments are compressed at once (the cores).
	round int
	segs  []*segment
	free  [][]byte // segmentSize read buffers
	tail  []byte   // the dictionary carried from one round to the next
}

func newSegmenter(d deflaters, round int) *segmenter {
	return &segmenter{deflaters: d, round: max(round, 1), tail: make([]byte, 0, dictSize)}
}

func (g *segmenter) buffer() []byte {
	if n := len(g.free); n > 0 {
		b := g.free[n-1]
		g.free = g.free[:n-1]
		return b
	}
	return make([]byte, segmentSize)
}

func (g *segmenter) recycle(b []byte) { g.free = append(g.free, b[:segmentSize]) }

// read fills a buffer with up to segmentSize bytes of r.
func (g *segmenter) read(ctx context.Context, r io.Reader) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := g.buffer()
	n, err := io.ReadFull(r, b)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return b[:n], err
}

// deflate reads src to its end, writes every byte read to hashes in order
// and the member's deflate stream to sink, and returns the bytes read.
// The segments of a round are compressed side by side while this goroutine
// hashes them, then written in order.
func (g *segmenter) deflate(ctx context.Context, src io.Reader, sink, hashes io.Writer) (int64, error) {
	var total int64
	// next is the segment read ahead: a segment is the last when nothing
	// follows it. The first is kept even when empty (an empty member is one
	// empty deflate stream).
	next, err := g.read(ctx, src)
	if err != nil {
		return 0, err
	}
	for first := true; ; first = false {
		var round []*segment
		for len(round) < g.round && next != nil {
			if len(g.segs) == len(round) {
				g.segs = append(g.segs, &segment{})
			}
			s := g.segs[len(round)]
			s.in, s.err, next = next, nil, nil
			if len(s.in) == segmentSize {
				b, err := g.read(ctx, src)
				if err != nil {
					return total, err
				}
				if len(b) > 0 {
					next = b
				} else {
					g.recycle(b)
				}
			}
			s.last = next == nil
			switch {
			case len(round) > 0:
				prev := round[len(round)-1].in
				s.dict = prev[len(prev)-dictSize:]
			case first:
				s.dict = nil
			default:
				s.dict = g.tail
			}
			round = append(round, s)
		}
		var wg sync.WaitGroup
		for _, s := range round[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.deflate(ctx, g.deflaters)
			}()
		}
		var herr error
		for _, s := range round {
			if _, err := hashes.Write(s.in); err != nil {
				herr = err
				break
			}
			total += int64(len(s.in))
		}
		if herr == nil {
			round[0].deflate(ctx, g.deflaters)
		}
		wg.Wait()
		if herr != nil {
			return total, herr
		}
		for _, s := range round {
			if s.err != nil {
				return total, s.err
			}
			if _, err := sink.Write(s.out.Bytes()); err != nil {
				return total, err
			}
		}
		last := round[len(round)-1]
		if !last.last {
			g.tail = append(g.tail[:0], last.in[len(last.in)-dictSize:]...)
		}
		for _, s := range round {
			g.recycle(s.in)
			s.in, s.dict = nil, nil
		}
		if last.last {
			return total, nil
		}
	}
}
