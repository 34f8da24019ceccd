package checksum

import (
	"crypto/sha256"
	"encoding/hex"
)

// hasherBufs and hasherBufSize bound what a Hasher holds: the bytes
// written to it and not yet hashed.
const (
	hasherBufs    = 4
	hasherBufSize = 256 << 10
)

// Hasher is an io.Writer that hashes what is written to it on a goroutine
// of its own: a reader that tees a stream into it (io.TeeReader) pays for
// a copy of the bytes, not for their hash, which runs on another core.
// Write copies p, so the caller may reuse it; it never fails. Sum ends the
// Hasher and must be called once, also when the stream is abandoned, so
// that its goroutine ends.
type Hasher struct {
	full, free chan []byte
	cur        []byte
	n          int64
	done       chan struct{}
	sum        string
}

// NewHasher starts a Hasher.
func NewHasher() *Hasher {
	h := &Hasher{full: make(chan []byte, hasherBufs), free: make(chan []byte, hasherBufs), done: make(chan struct{})}
	for range hasherBufs {
		h.free <- make([]byte, 0, hasherBufSize)
	}
	go func() {
		d := sha256.New()
		for b := range h.full {
			d.Write(b)
			h.free <- b[:0]
		}
		h.sum = hex.EncodeToString(d.Sum(nil))
		close(h.done)
	}()
	return h
}

// Write hands a copy of p to the hashing goroutine.
func (h *Hasher) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if h.cur == nil {
			h.cur = <-h.free
		}
		k := min(len(p), cap(h.cur)-len(h.cur))
		h.cur = append(h.cur, p[:k]...)
		p = p[k:]
		if len(h.cur) == cap(h.cur) {
			h.full <- h.cur
			h.cur = nil
		}
	}
	h.n += int64(n)
	return n, nil
}

// Sum waits for every byte written to be hashed and returns their sha256
// (lower-case hex) and how many there were.
func (h *Hasher) Sum() (sha string, size int64) {
	if len(h.cur) > 0 {
		h.full <- h.cur
	}
	h.cur = nil
	close(h.full)
	<-h.done
	return h.sum, h.n
}
