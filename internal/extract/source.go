package extract

import (
	"archive/tar"
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	"github.com/mholt/archives"
	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
)

const (
	// maxZstdWindow bounds the zstd window (and so the decoder's memory),
	// as the reference zstd tool does by default. xz is bounded by its
	// decoder's 64 MiB dictionary limit, gzip and bzip2 by their formats.
	maxZstdWindow = 128 << 20
	// maxTrailing bounds the zero padding accepted after the end of a tar
	// archive (tar pads to its record size, 10 KiB by default).
	maxTrailing = 8 << 20
	// maxStalls bounds consecutive reads that return nothing and no error.
	maxStalls = 100
)

// source is an opened archive: a walk over its entries and a count of the
// compressed bytes read so far.
type source struct {
	format     string
	compressed func() int64
	walk       func(ctx context.Context, handle archives.FileHandler) error
	// finish is called after a successful walk; it checks the rest of the
	// stream (checksums, trailing data).
	finish func() error
	close  func()
}

// countingReader counts the bytes read through it; it also stops reading
// once ctx is done.
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// open identifies the archive in r and prepares to walk it. work is a
// private directory for a spooled copy of a zip read from a stream.
func (s *state) open(r io.Reader, work string) (*source, error) {
	if ra, ok := r.(io.ReaderAt); ok {
		if sk, ok := r.(io.Seeker); ok {
			// An *os.File may be a pipe, which cannot seek: stream it.
			if start, err := sk.Seek(0, io.SeekCurrent); err == nil {
				return s.openSeekable(ra, sk, start)
			}
		}
	}
	cr := &countingReader{ctx: s.ctx, r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	head, err := br.Peek(headLen)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, s.readError(err)
	}
	format := identify(head)
	switch format {
	case "":
		return nil, s.unrecognised(head)
	case FormatZip:
		return s.spoolZip(br, work)
	}
	return s.openStream(format, br, func() int64 { return cr.n })
}

func (s *state) openSeekable(ra io.ReaderAt, sk io.Seeker, start int64) (*source, error) {
	end, err := sk.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, s.readError(err)
	}
	if _, err := sk.Seek(start, io.SeekStart); err != nil {
		return nil, s.readError(err)
	}
	sec := io.NewSectionReader(ra, start, end-start)
	head := make([]byte, headLen)
	n, err := sec.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, s.readError(err)
	}
	head = head[:n]
	format := identify(head)
	switch format {
	case "":
		return nil, s.unrecognised(head)
	case FormatZip:
		return s.openZip(sec)
	}
	if err := s.prescanTar(format, sec); err != nil {
		return nil, err
	}
	cr := &countingReader{ctx: s.ctx, r: sec}
	return s.openStream(format, cr, func() int64 { return cr.n })
}

// prescanTar reads the headers of the tar archive in sec (decompressing
// it, but writing nothing) before anything is extracted, and refuses at
// once an archive whose headers declare more entries than the entry
// limit, a file larger than the file limit, or more file bytes in all than
// the total limit or the ratio limit allow (the ratio against the whole
// archive's size). An archive of a million empty members is so refused in
// the time it takes to read their headers, instead of after a million
// files are made. The extraction counts again as it writes, implicit
// directories and hard link copies included. A header archive/tar cannot
// read ends the scan without a refusal: the extraction then reports it
// with its own, precise, checks.
func (s *state) prescanTar(format string, sec *io.SectionReader) error {
	var tr *tar.Reader
	if format == FormatTar {
		// archive/tar seeks over the members' data when it can; the
		// headers are read through a buffer, not one read each.
		tr = tar.NewReader(&bufferedSection{sec: sec, buf: make([]byte, 1<<20)})
	} else {
		dec, err := s.decoder(format, &countingReader{ctx: s.ctx, r: io.NewSectionReader(sec, 0, sec.Size())})
		if err != nil {
			return nil // the extraction reports it
		}
		defer dec.Close()
		tr = tar.NewReader(dec)
	}
	archiveBytes := sec.Size()
	var entries int
	var total int64
	for {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("extract %s: %w", s.archive, err)
		}
		h, err := tr.Next()
		if err != nil {
			return nil // the end, or what the extraction reports
		}
		entries++
		if entries > s.lim.entries {
			return s.refuse(h.Name, &violation{reason: ErrTooMany, advice: s.adviceEntries(),
				detail: fmt.Sprintf("the archive holds more than %d entries (counted from its headers, before anything was extracted)", s.lim.entries)})
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != '\x00' {
			continue // links, folders and the like extract no bytes of their own
		}
		if v := s.checkDeclared(h.Size, &total, archiveBytes); v != nil {
			return s.refuse(h.Name, v)
		}
	}
}

// bufferedSection reads sec through a buffer and seeks (from the current
// position only, as archive/tar skips data) by moving in the buffer, or
// past it, without reading what it skips.
type bufferedSection struct {
	sec  *io.SectionReader
	buf  []byte
	pos  int64 // the offset in sec of buf[r:]
	r, w int   // buf[r:w] is unread
	eof  bool
}

func (b *bufferedSection) Read(p []byte) (int, error) {
	if b.r == b.w {
		if b.eof {
			return 0, io.EOF
		}
		n, err := b.sec.ReadAt(b.buf, b.pos)
		b.r, b.w = 0, n
		if errors.Is(err, io.EOF) {
			b.eof = true
		} else if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	b.pos += int64(n)
	return n, nil
}

func (b *bufferedSection) Seek(offset int64, whence int) (int64, error) {
	if whence != io.SeekCurrent || offset < 0 {
		return 0, errors.New("bufferedSection: only forward seeks from the current position")
	}
	if offset <= int64(b.w-b.r) {
		b.r += int(offset)
	} else {
		b.r, b.w, b.eof = 0, 0, false
	}
	b.pos += offset
	return b.pos, nil
}

// checkDeclared adds the declared size of one file to total, the sum of
// those declared so far, and returns the limit the archive passes, if
// any: the file limit, the total limit, or the ratio limit taken against
// the whole archive's size (extraction counts the bytes read so far, never
// more than that, so an archive refused here would be refused there).
func (s *state) checkDeclared(size int64, total *int64, archiveBytes int64) *violation {
	switch {
	case size < 0 || size > s.lim.file:
		return &violation{reason: ErrTooLarge, advice: s.adviceFile(),
			detail: fmt.Sprintf("file of %d bytes, more than the limit of %d (declared in its header, before anything was extracted)", uint64(size), s.lim.file)}
	case size > s.lim.total-*total:
		return &violation{reason: ErrTooLarge, advice: s.adviceTotal(),
			detail: fmt.Sprintf("the files declare more than the total limit of %d bytes (counted from their headers, before anything was extracted)", s.lim.total)}
	}
	*total += size
	if float64(*total) > s.lim.ratio*float64(archiveBytes)+float64(s.lim.allowance) {
		return &violation{reason: ErrBomb, advice: s.adviceRatio(),
			detail: fmt.Sprintf("the files declare %d bytes or more from an archive of %d bytes, more than %g times as many plus %d (counted before anything was extracted)", *total, archiveBytes, s.lim.ratio, s.lim.allowance)}
	}
	return nil
}

// spoolZip copies a zip from a stream into a temporary file, since zip
// needs random access.
func (s *state) spoolZip(r io.Reader, work string) (*source, error) {
	f, err := os.OpenFile(filepath.Join(work, "archive.zip"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("extract %s: spool zip archive: %w", s.archive, err)
	}
	n, err := io.Copy(f, io.LimitReader(r, s.lim.total+1))
	if err == nil && n > s.lim.total {
		err = s.refuse("", &violation{reason: ErrTooLarge, advice: s.adviceTotal(),
			detail: fmt.Sprintf("zip archive read from a stream is larger than the total limit of %d bytes", s.lim.total)})
	} else if err != nil {
		err = s.readError(err)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	src, err := s.openZip(io.NewSectionReader(f, 0, n))
	if err != nil {
		f.Close()
		return nil, err
	}
	src.close = func() { f.Close() }
	return src, nil
}

// openZip audits the zip's structure (see package zipaudit) and prepares
// to walk it; the walk must then meet the audited entries in order. Before
// anything is extracted, the number of entries (as the end record
// announces it, before the central directory is read) and the sizes the
// central directory declares are held to the limits, as [state.prescanTar]
// does for a tar.
func (s *state) openZip(sec *io.SectionReader) (*source, error) {
	size := sec.Size()
	rep, err := zipaudit.AuditLimit(ctxReaderAt{ctx: s.ctx, r: sec}, size, uint64(s.lim.entries))
	if err != nil {
		return nil, s.readError(err)
	}
	if rep.TooMany {
		detail := fmt.Sprintf("the archive holds more than %d entries (its central directory says so: nothing was extracted)", s.lim.entries)
		if rep.Declared > uint64(s.lim.entries) {
			detail = fmt.Sprintf("the archive announces %d entries, more than the limit of %d (nothing was extracted)", rep.Declared, s.lim.entries)
		}
		return nil, s.refuse("", &violation{reason: ErrTooMany, advice: s.adviceEntries(), detail: detail})
	}
	if len(rep.Problems) > 0 {
		p := rep.Problems[0]
		reason := ErrAmbiguous
		if p.Corrupt {
			reason = ErrCorrupt
		}
		v := refusal(reason, "%s", p.Msg)
		if n := len(rep.Problems) - 1; n > 0 {
			v.detail += fmt.Sprintf(" (and %d more problems)", n)
		}
		v.offset, v.hasOffset = p.Offset, true
		return nil, s.refuse(p.Member, v)
	}
	var total int64
	for _, e := range rep.Entries {
		declared := int64(min(e.UncompressedSize, math.MaxInt64))
		if v := s.checkDeclared(declared, &total, size); v != nil {
			return nil, s.refuse(e.Name, v)
		}
	}
	s.zip = rep.Entries
	if s.zip == nil {
		s.zip = []zipaudit.Entry{}
	}
	return &source{
		format:     FormatZip,
		compressed: func() int64 { return size },
		walk: func(ctx context.Context, h archives.FileHandler) error {
			return archives.Zip{}.Extract(ctx, sec, h)
		},
		finish: func() error {
			if s.zipNext != len(s.zip) {
				return s.refuse("", refusal(ErrCorrupt, "the zip reader walked %d entries but the central directory holds %d; refusing what cannot be checked", s.zipNext, len(s.zip)))
			}
			return nil
		},
		close: func() {},
	}, nil
}

// ctxReaderAt stops reading once ctx is done.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// openStream sets up a (compressed) tar stream.
func (s *state) openStream(format string, r io.Reader, compressed func() int64) (*source, error) {
	dec, err := s.decoder(format, r)
	if err != nil {
		return nil, err
	}
	s.tar = &tarAudit{r: dec}
	tarIn := &eofWatch{r: s.tar}
	return &source{
		format:     format,
		compressed: compressed,
		walk: func(ctx context.Context, h archives.FileHandler) error {
			return archives.Tar{}.Extract(ctx, tarIn, h)
		},
		finish: func() error {
			if tarIn.short {
				return s.refuse("", refusal(ErrCorrupt, "the tar archive ends without its end-of-archive marker"))
			}
			return s.checkTrailer(dec)
		},
		close: func() { dec.Close() },
	}, nil
}

// decoder returns the tar stream of the archive r in format, decompressed.
func (s *state) decoder(format string, r io.Reader) (io.ReadCloser, error) {
	var dec io.ReadCloser
	var err error
	switch format {
	case FormatTar:
		dec = io.NopCloser(r)
	case FormatTarGz:
		dec, err = archives.Gz{}.OpenReader(r)
	case FormatTarXz:
		dec, err = archives.Xz{}.OpenReader(r)
	case FormatTarBz2:
		dec, err = archives.Bz2{}.OpenReader(r)
	case FormatTarZst:
		dec, err = archives.Zstd{DecoderOptions: []zstd.DOption{
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(maxZstdWindow),
		}}.OpenReader(r)
	default:
		return nil, fmt.Errorf("extract %s: internal error: unknown format %q", s.archive, format)
	}
	if err != nil {
		return nil, s.refuse("", &violation{reason: ErrCorrupt, detail: "cannot start decompressing " + format, err: err})
	}
	return dec, nil
}

// eofWatch notes whether its reader ever ran out before filling a read.
// archive/tar treats running out at an entry boundary as the end of the
// archive, so a tar truncated there would look complete; but reading a
// complete archive up to its end-of-archive marker (two zero blocks) never
// asks for more than is there.
type eofWatch struct {
	r     io.Reader
	short bool
}

func (w *eofWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if errors.Is(err, io.EOF) && n < len(p) {
		w.short = true
	}
	return n, err
}

// checkTrailer reads what follows the tar end-of-archive marker: it must
// be a little zero padding, and reading it to the end verifies the
// compressed stream's checksum. Non-zero data there would be invisible to
// us but might be extracted by other tools (tar -i), so it is refused.
func (s *state) checkTrailer(r io.Reader) error {
	buf := s.buf
	var n int64
	for stalls := 0; ; {
		m, err := r.Read(buf)
		if m == 0 && err == nil {
			if stalls++; stalls > maxStalls {
				return s.readError(io.ErrNoProgress)
			}
			continue
		}
		stalls = 0
		for _, c := range buf[:m] {
			if c != 0 {
				return s.refuse("", refusal(ErrCorrupt, "data after the end of the tar archive"))
			}
		}
		n += int64(m)
		if n > maxTrailing {
			return s.refuse("", refusal(ErrCorrupt, "more than %d bytes of padding after the end of the tar archive", maxTrailing))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return s.readError(err)
		}
	}
}

// readError reports a failure to read the archive itself.
func (s *state) readError(err error) error {
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return fmt.Errorf("extract %s: %w", s.archive, ctxErr)
	}
	return s.refuse("", &violation{reason: ErrCorrupt, detail: "reading the archive", err: err})
}

func (s *state) unrecognised(head []byte) error {
	detail := "its content is not recognised"
	if len(head) == 0 {
		detail = "the archive is empty"
	}
	return s.refuse("", refusal(ErrFormat, "%s", detail))
}
