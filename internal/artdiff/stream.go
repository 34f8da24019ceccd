package artdiff

import (
	"bytes"
	"errors"
	"io"
	"sync"
)

// tailCache is how many bytes at the end of a streamed member are kept in
// memory for random access: the zip central directory and the ELF section
// headers live there.
const tailCache = 4 << 20

// scanResult is the outcome of reading two contents side by side.
type scanResult struct {
	// equal is true when the two contents are identical.
	equal bool
	// off is the offset of the first differing byte (the shorter length
	// when one is a prefix of the other).
	off int64
	// headA and headB are the first bytes (at most sniffLen) of each.
	headA, headB []byte
}

// scan reads a and b side by side, chunk by chunk, until the first
// difference.
func (c *comparer) scan(a, b blob) (scanResult, error) {
	ra, rb, err := openBoth(a, b)
	if err != nil {
		return scanResult{}, err
	}
	defer ra.Close()
	defer rb.Close()
	return c.scanReaders(ra, rb)
}

// scanReaders is scan on two open streams.
func (c *comparer) scanReaders(ra, rb io.Reader) (scanResult, error) {
	var res scanResult
	bufA, bufB := make([]byte, chunkSize), make([]byte, chunkSize)
	for off, first := int64(0), true; ; first = false {
		if err := c.ctx.Err(); err != nil {
			return res, err
		}
		na, errA := readFull(ra, bufA)
		if errA != nil && errA != io.EOF {
			return res, onSide(original, errA)
		}
		nb, errB := readFull(rb, bufB)
		if errB != nil && errB != io.EOF {
			return res, onSide(rebuilt, errB)
		}
		if first {
			res.headA = bytes.Clone(bufA[:min(na, sniffLen)])
			res.headB = bytes.Clone(bufB[:min(nb, sniffLen)])
		}
		n := min(na, nb)
		if i := firstMismatch(bufA[:n], bufB[:n]); i >= 0 {
			res.off = off + int64(i)
			return res, nil
		}
		if na != nb {
			res.off = off + int64(n)
			return res, nil
		}
		if na < chunkSize {
			res.equal = true
			return res, nil
		}
		off += int64(n)
	}
}

// firstMismatch returns the index of the first byte where a and b (of the
// same length) differ, or -1.
func firstMismatch(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	// Narrow down by halves, comparing with bytes.Equal (fast), then
	// byte by byte.
	lo, hi := 0, len(a)
	for hi-lo > 64 {
		mid := lo + (hi-lo)/2
		if bytes.Equal(a[lo:mid], b[lo:mid]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	for i := lo; i < hi; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// readFull reads into p until it is full (nil error), the stream ends
// (io.EOF, with the bytes read so far) or fails. Unlike io.ReadFull, an
// io.ErrUnexpectedEOF from r is returned as the failure it is.
func readFull(r io.Reader, p []byte) (int, error) {
	n, stalls := 0, 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err == io.EOF && n == len(p) {
			// Full: the end is reported by the next read.
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			if stalls++; stalls > 100 {
				return n, io.ErrNoProgress
			}
		} else {
			stalls = 0
		}
	}
	return n, nil
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// liveOpener is the open function of an archive member whose stream is
// already positioned at its start (a tar entry being walked): the first
// call returns that stream, later calls reopen the member from scratch.
type liveOpener struct {
	live   io.Reader
	used   bool
	reopen func() (io.ReadCloser, error)
}

func (o *liveOpener) open() (io.ReadCloser, error) {
	if !o.used {
		o.used = true
		return io.NopCloser(o.live), nil
	}
	return o.reopen()
}

// streamReaderAt gives random access to a content that can only be
// streamed (a member of a compressed archive), without holding it in
// memory: reads go forward in one stream, reopened from the start when a
// read goes backwards, and the last bytes (up to tailCache) are kept.
// Reading a zip archive or an ELF file this way costs a few passes over
// the stream.
type streamReaderAt struct {
	mu        sync.Mutex
	open      func() (io.ReadCloser, error)
	size      int64
	rc        io.ReadCloser
	pos       int64
	tailStart int64
	tail      []byte // the bytes from tailStart to size, once read
}

// newStreamReaderAt gives random access to the size bytes that open
// streams, keeping the last tail of them in memory.
func newStreamReaderAt(open func() (io.ReadCloser, error), size, tail int64) *streamReaderAt {
	return &streamReaderAt{open: open, size: size, tailStart: max(0, size-tail)}
}

// ReadAt implements io.ReaderAt.
func (s *streamReaderAt) ReadAt(p []byte, off int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if off < 0 {
		return 0, errors.New("artdiff: negative offset")
	}
	if off >= s.size {
		return 0, io.EOF
	}
	var eof error
	if rest := s.size - off; int64(len(p)) > rest {
		p, eof = p[:rest], io.EOF
	}
	end := off + int64(len(p))
	n := 0
	if off < s.tailStart {
		head := p[:min(end, s.tailStart)-off]
		if err := s.readStream(head, off); err != nil {
			return 0, err
		}
		n = len(head)
	}
	if end > s.tailStart {
		if s.tail == nil {
			tail := make([]byte, s.size-s.tailStart)
			if err := s.readStream(tail, s.tailStart); err != nil {
				return n, err
			}
			s.tail = tail
		}
		from := max(off, s.tailStart)
		n += copy(p[n:], s.tail[from-s.tailStart:end-s.tailStart])
	}
	return n, eof
}

// readStream fills p with the bytes at off, moving the stream there.
func (s *streamReaderAt) readStream(p []byte, off int64) error {
	if s.rc == nil || off < s.pos {
		if s.rc != nil {
			s.rc.Close()
			s.rc = nil
		}
		rc, err := s.open()
		if err != nil {
			return err
		}
		s.rc, s.pos = rc, 0
	}
	if off > s.pos {
		n, err := io.CopyN(io.Discard, s.rc, off-s.pos)
		s.pos += n
		if err != nil {
			return shortRead(err)
		}
	}
	n, err := readFull(s.rc, p)
	s.pos += int64(n)
	if err != nil {
		return shortRead(err)
	}
	return nil
}

// shortRead turns the end of a stream shorter than its declared size
// into io.ErrUnexpectedEOF.
func shortRead(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Close closes the current stream.
func (s *streamReaderAt) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rc == nil {
		return nil
	}
	err := s.rc.Close()
	s.rc = nil
	return err
}

// readerAt returns random access to b and its size; release frees it.
func (c *comparer) readerAt(b blob) (ra io.ReaderAt, size int64, release func(), err error) {
	if b.ra != nil && b.size >= 0 {
		return b.ra, b.size, func() {}, nil
	}
	size = b.size
	if size < 0 {
		if size, err = c.count(b); err != nil {
			return nil, 0, nil, err
		}
	}
	s := newStreamReaderAt(b.open, size, tailCache)
	return s, size, func() { s.Close() }, nil
}

// count returns the size of b's content by reading it.
func (c *comparer) count(b blob) (int64, error) {
	rc, err := b.open()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	buf := make([]byte, chunkSize)
	var n int64
	for {
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
		m, err := readFull(rc, buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
