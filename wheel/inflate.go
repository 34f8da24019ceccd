package wheel

import (
	"archive/zip"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// inflaters hands out klauspost/compress's deflate readers (the library
// the writer deflates with) to one zip.Reader and reuses them across its
// members, which may be read in parallel. That decoder reads through a
// bit reader specialised for its source's type rather than the standard
// library's io.ByteReader calls: checking a wheel of large libraries runs
// about 15 % faster (BenchmarkCheck), and auditing packagebench's bundle
// takes 2.7 s of CPU instead of 3.1 to 3.6 s.
type inflaters struct {
	pool sync.Pool
}

// register makes zr inflate its deflated members with i's readers.
func (i *inflaters) register(zr *zip.Reader) {
	zr.RegisterDecompressor(zip.Deflate, i.open)
}

// open returns a deflate reader of r, back in the pool once closed.
func (i *inflaters) open(r io.Reader) io.ReadCloser {
	if fr, ok := i.pool.Get().(io.ReadCloser); ok {
		if err := fr.(flate.Resetter).Reset(r, nil); err == nil {
			return &pooledInflater{ReadCloser: fr, pool: &i.pool}
		}
	}
	return &pooledInflater{ReadCloser: flate.NewReader(r), pool: &i.pool}
}

// pooledInflater returns its reader to the pool when first closed.
type pooledInflater struct {
	io.ReadCloser
	pool *sync.Pool
	once sync.Once
}

// Close closes the reader and puts it back for the next member.
func (p *pooledInflater) Close() error {
	err := p.ReadCloser.Close()
	p.once.Do(func() { p.pool.Put(p.ReadCloser) })
	return err
}
