package wheel

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/progress"
)

// Level is the deflate level of every compressed member. Changing it (or
// the pinned klauspost/compress version) changes the bytes of every wheel.
// Level 7 keeps wheels within a few percent of zlib level 6 (what `wheel
// pack` and pip's tools write) where level 6 is about 5 % larger; see the
// benchmark in bench/wheelbench.
const Level = 7

// memBudget bounds the compressed output held in memory, over all members
// waiting for their turn to be written; beyond it, output is spooled to a
// temporary file beside the wheel. Memory stays bounded whatever the member
// sizes, while workers run well ahead of the writer.
const memBudget = 64 << 20

// lookahead is how many members workers may compress ahead of the one
// being written.
const lookahead = 256

// Member is one file of a wheel.
type Member struct {
	// Path is the slash-separated path inside the wheel.
	Path string
	// File is read for the content, unless Data is set.
	File string
	Data []byte
	// Mode is 0644 or 0755 (any executable bit gives 0755).
	Mode fs.FileMode
	// SHA256 is the hex sha256 of File's content when the caller already
	// knows it (the file was hashed when it was prepared): CacheKey uses it
	// instead of reading the file, and Write, which reads and hashes every
	// member, refuses the member (a *ChangedError) when the content it
	// read has another digest.
	SHA256 string
}

// Contents are the members of a wheel before RECORD: the writer orders
// them (package files, then .data, then .dist-info) and adds RECORD.
type Contents struct {
	Name Filename
	// Members are the package files (root of the wheel).
	Members []Member
	// Data are .data members, with paths relative to the .data folder
	// ("scripts/tool").
	Data []Member
	// DistInfo are .dist-info members other than RECORD, with paths relative
	// to the .dist-info folder ("METADATA", "WHEEL", "licenses/LICENSE").
	DistInfo []Member
	// Epoch is SOURCE_DATE_EPOCH; members are dated max(Epoch, 1980-01-01)
	// in UTC.
	Epoch int64
}

// Result describes a written wheel.
type Result struct {
	Path   string
	SHA256 string // hex
	Size   int64
	// Record is the wheel's RECORD rows, in member order.
	Record []RecordRow
}

// incompressible are file name suffixes of formats that are already
// compressed: they are stored, never recompressed.
var incompressible = []string{
	".gz", ".tgz", ".bz2", ".xz", ".zst", ".lz4", ".br", ".zip", Ext, ".jar", ".7z",
	".png", ".jpg", ".jpeg", ".gif", ".webp", ".mp3", ".mp4", ".ogg", ".woff", ".woff2",
}

func storedByName(p string) bool {
	p = strings.ToLower(p)
	for _, s := range incompressible {
		if strings.HasSuffix(p, s) {
			return true
		}
	}
	return false
}

// ordered returns the full member list in write order, with final paths.
func (c *Contents) ordered() ([]Member, error) {
	var out []Member
	seen := map[string]bool{}
	add := func(prefix string, ms []Member) error {
		sorted := append([]Member(nil), ms...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
		for _, m := range sorted {
			if err := checkMemberPath(m.Path); err != nil {
				return err
			}
			m.Path = prefix + m.Path
			if seen[m.Path] {
				return fmt.Errorf("wheel %s: member %s given twice", c.Name, m.Path)
			}
			seen[m.Path] = true
			out = append(out, m)
		}
		return nil
	}
	for _, m := range c.Members {
		first, _, _ := strings.Cut(m.Path, "/")
		if strings.HasSuffix(first, ".dist-info") || strings.HasSuffix(first, ".data") {
			return nil, fmt.Errorf("wheel %s: member %s is in a reserved folder", c.Name, m.Path)
		}
	}
	if err := add("", c.Members); err != nil {
		return nil, err
	}
	if err := add(c.Name.Data()+"/", c.Data); err != nil {
		return nil, err
	}
	// METADATA and WHEEL first in .dist-info, as installers read them.
	di := append([]Member(nil), c.DistInfo...)
	sort.SliceStable(di, func(i, j int) bool { return distInfoRank(di[i].Path) < distInfoRank(di[j].Path) })
	for _, m := range di {
		if m.Path == "RECORD" {
			return nil, fmt.Errorf("wheel %s: RECORD is written by the writer", c.Name)
		}
	}
	for _, m := range di {
		if err := checkMemberPath(m.Path); err != nil {
			return nil, err
		}
		m.Path = c.Name.DistInfo() + "/" + m.Path
		if seen[m.Path] {
			return nil, fmt.Errorf("wheel %s: member %s given twice", c.Name, m.Path)
		}
		seen[m.Path] = true
		out = append(out, m)
	}
	return out, nil
}

func distInfoRank(p string) string {
	switch p {
	case "METADATA":
		return "0"
	case "WHEEL":
		return "1"
	}
	return "2" + p
}

func checkMemberPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("member path %q is not a clean relative path", p)
	}
	return nil
}

// compressed is one member, ready to be written.
type compressed struct {
	header *zip.FileHeader
	out    *spillBuffer // the compressed (or stored) bytes
	sha    []byte
	size   int64
	err    error
	done   chan struct{}
}

// worker holds what one compressing goroutine reuses from member to member.
type worker struct {
	seg *segmenter
	buf []byte
	// read counts the bytes read for the progress display (nil: none).
	read io.Writer
}

func newWorker(d deflaters, cores int) *worker {
	return &worker{seg: newSegmenter(d, cores), buf: make([]byte, 256<<10)}
}

// ChangedError is a member whose file no longer has the digest it had
// when it was prepared: it changed during the build.
type ChangedError struct {
	Wheel, Member, File string
	Want, Got           string
}

// Error names the file and what to do.
func (e *ChangedError) Error() string {
	return fmt.Sprintf("wheel %s: %s (%s) changed during the build: sha256 %s, hashed as %s when the sources were prepared\n\thint: build again once nothing writes to it",
		e.Wheel, e.Member, e.File, e.Got, e.Want)
}

// ExitCode is 1.
func (e *ChangedError) ExitCode() int { return 1 }

// Write writes the wheel into dir, atomically, and returns its digest and
// RECORD. Members are hashed and compressed in parallel on all cores and
// written in a fixed order.
func Write(ctx context.Context, c *Contents, dir string) (*Result, error) {
	members, err := c.ordered()
	if err != nil {
		return nil, err
	}
	final := filepath.Join(dir, c.Name.String())
	out, err := atomicfile.Create(final, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Abort() // no-op after Commit

	modified := c.Epoch
	if modified < minZipTime {
		modified = minZipTime
	}
	jobs := make([]*compressed, len(members))
	for i := range jobs {
		jobs[i] = &compressed{done: make(chan struct{})}
	}
	// The members' sizes are read for the display only when there is one.
	var task *progress.Task
	if meter := progress.FromContext(ctx); meter != nil {
		task = meter.Start("wheel "+c.Name.String(), totalSize(members), progress.Bytes)
	}
	defer task.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Workers take members in order and may run ahead of the writer by up
	// to `lookahead` members; the memory they hold is bounded by budget.
	workers := runtime.GOMAXPROCS(0)
	// At most one compressor per core runs at once, whether it works on
	// a member of its own or on a segment of a large one.
	compressors := newDeflaters(workers)
	window := make(chan struct{}, lookahead)
	mem := &memory{left: memBudget}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wk := newWorker(compressors, workers)
		if task != nil {
			wk.read = progressWriter{task}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				jobs[i].compress(ctx, members[i], dir, modified, mem, wk)
				close(jobs[i].done)
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range members {
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel()
		wg.Wait()
		for _, j := range jobs {
			if j.out != nil {
				j.out.discard()
			}
		}
	}()

	// The wheel's own digest is computed as it is written.
	digest := sha256.New()
	written := &countWriter{}
	zw := zip.NewWriter(io.MultiWriter(out, digest, written))
	var record []RecordRow
	for i, j := range jobs {
		select {
		case <-j.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if j.err != nil {
			return nil, fmt.Errorf("wheel %s: %w", c.Name, j.err)
		}
		if want, got := members[i].SHA256, hex.EncodeToString(j.sha); want != "" && got != want {
			return nil, &ChangedError{Wheel: c.Name.String(), Member: members[i].Path, File: members[i].File, Want: want, Got: got}
		}
		if err := zw.Flush(); err != nil {
			return nil, fmt.Errorf("wheel %s: %w", c.Name, err)
		}
		setVersions(j.header, written.n)
		w, err := zw.CreateRaw(j.header)
		if err == nil {
			err = j.out.writeTo(w)
		}
		j.out.discard()
		j.out = nil
		if err != nil {
			return nil, fmt.Errorf("wheel %s: write %s: %w", c.Name, members[i].Path, err)
		}
		record = append(record, RecordRow{Path: members[i].Path, Hash: RecordHash(j.sha), Size: j.size})
		<-window
	}
	recordPath := c.Name.DistInfo() + "/RECORD"
	record = append(record, RecordRow{Path: recordPath, Size: -1})
	data, err := WriteRecord(record)
	if err != nil {
		return nil, err
	}
	rj := &compressed{done: make(chan struct{})}
	rj.compress(ctx, Member{Path: recordPath, Data: data, Mode: 0o644}, dir, modified, mem, newWorker(compressors, 1))
	if rj.err != nil {
		return nil, rj.err
	}
	if err := zw.Flush(); err != nil {
		return nil, fmt.Errorf("wheel %s: %w", c.Name, err)
	}
	setVersions(rj.header, written.n)
	w, err := zw.CreateRaw(rj.header)
	if err == nil {
		err = rj.out.writeTo(w)
	}
	rj.out.discard()
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", c.Name, err)
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	return &Result{Path: final, SHA256: fmt.Sprintf("%x", digest.Sum(nil)), Size: written.n, Record: record}, nil
}

// Zip specification versions (APPNOTE.TXT 4.4.3.2): the least a reader
// must implement to extract a member.
const (
	zipVersionStored  = 10 // 1.0: a stored file
	zipVersionDeflate = 20 // 2.0: deflate
	zipVersionZip64   = 45 // 4.5: ZIP64 extensions
	zipCreatorUnix    = 3  // "version made by" upper byte: the external attributes hold Unix modes
	zipVersionWriter  = 20 // 2.0: the version of the specification the writer claims, as Python's zipfile and `wheel pack` do
)

// setVersions fills in "version needed to extract" and "version made by"
// for a member whose local header is written at offset: needed is the
// minimum APPNOTE.TXT gives for the member (1.0 stored, 2.0 deflated,
// 4.5 when archive/zip must write zip64 fields for it: a size or the
// offset at or past 0xFFFFFFFF); made by is Unix (so that installers honour
// the modes in the external attributes) and 2.0, or the needed version
// when it is higher, which is what CPython's zipfile writes (0x0314).
// archive/zip's CreateRaw leaves both to the caller, and a zero "needed"
// is below what any deflated member requires.
func setVersions(h *zip.FileHeader, offset int64) {
	needed := uint16(zipVersionStored)
	if h.Method == zip.Deflate {
		needed = zipVersionDeflate
	}
	if h.CompressedSize64 >= math.MaxUint32 || h.UncompressedSize64 >= math.MaxUint32 || offset >= math.MaxUint32 {
		needed = zipVersionZip64
	}
	h.ReaderVersion = needed
	h.CreatorVersion = zipCreatorUnix<<8 | max(zipVersionWriter, needed)
}

// totalSize is the bytes the members hold, for the progress display (a
// file that cannot be read counts 0; reading it fails later, with the
// error).
func totalSize(members []Member) int64 {
	var n int64
	for _, m := range members {
		if m.Data != nil || m.File == "" {
			n += int64(len(m.Data))
		} else if st, err := os.Stat(m.File); err == nil {
			n += st.Size()
		}
	}
	return n
}

// progressWriter counts what is written as progress of a task.
type progressWriter struct{ t *progress.Task }

func (w progressWriter) Write(p []byte) (int, error) { w.t.Add(int64(len(p))); return len(p), nil }

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// chunkSize is the unit in which buffered output is held and recycled.
const chunkSize = 256 << 10

// memory hands out fixed-size chunks for buffered output, up to the budget,
// and recycles them, so the heap holds little more than the budget.
type memory struct {
	mu   sync.Mutex
	left int64
	free [][]byte
}

// get returns an empty chunk, or nil when the budget is spent.
func (m *memory) get() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.left < chunkSize {
		return nil
	}
	m.left -= chunkSize
	if n := len(m.free); n > 0 {
		c := m.free[n-1]
		m.free = m.free[:n-1]
		return c[:0]
	}
	return make([]byte, 0, chunkSize)
}

func (m *memory) put(c []byte) {
	m.mu.Lock()
	m.left += chunkSize
	m.free = append(m.free, c)
	m.mu.Unlock()
}

// minZipTime is 1980-01-01T00:00:00Z, the earliest time a zip entry holds.
const minZipTime = 315532800

// compress reads m once, hashing it (sha256 for RECORD, CRC-32 for zip)
// while deflating it, and prepares its zip header.
func (j *compressed) compress(ctx context.Context, m Member, dir string, modified int64, mem *memory, wk *worker) {
	var src io.Reader
	if m.Data != nil || m.File == "" {
		src = bytes.NewReader(m.Data)
	} else {
		f, err := os.Open(m.File)
		if err != nil {
			j.err = err
			return
		}
		defer f.Close()
		src = f
	}
	store := storedByName(m.Path)
	sink := &spillBuffer{dir: dir, mem: mem}
	sha := sha256.New()
	crc := crc32.NewIEEE()
	var n int64
	var err error
	hashes := []io.Writer{sha, crc}
	if wk.read != nil {
		hashes = append(hashes, wk.read)
	}
	if store {
		n, err = copyCtx(ctx, io.MultiWriter(append([]io.Writer{sink}, hashes...)...), src, wk.buf)
	} else {
		n, err = wk.seg.deflate(ctx, src, sink, io.MultiWriter(hashes...))
	}
	if err != nil {
		sink.discard()
		j.err = fmt.Errorf("%s: %w", m.Path, err)
		return
	}
	method := zip.Deflate
	if store {
		method = zip.Store
	} else if sink.n >= n {
		// Deflate did not help: store the original bytes instead.
		sink.discard()
		sink = &spillBuffer{dir: dir, mem: mem}
		if err := reread(ctx, m, sink, wk.buf); err != nil {
			sink.discard()
			j.err = fmt.Errorf("%s: %w", m.Path, err)
			return
		}
		method = zip.Store
	}
	hdr := &zip.FileHeader{
		Name:               m.Path,
		Method:             method,
		CRC32:              crc.Sum32(),
		CompressedSize64:   uint64(sink.n),
		UncompressedSize64: uint64(n),
	}
	setDOSTime(hdr, modified)
	mode := fs.FileMode(0o644)
	if m.Mode&0o111 != 0 {
		mode = 0o755
	}
	hdr.SetMode(mode)
	if !isASCII(m.Path) {
		hdr.Flags |= 0x800 // names are UTF-8
	}
	j.header, j.out, j.sha, j.size = hdr, sink, sha.Sum(nil), n
}

func reread(ctx context.Context, m Member, w io.Writer, buf []byte) error {
	if m.Data != nil || m.File == "" {
		_, err := w.Write(m.Data)
		return err
	}
	f, err := os.Open(m.File)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = copyCtx(ctx, w, f, buf)
	return err
}

// setDOSTime sets the zip's MS-DOS date and time fields from a Unix time in
// UTC. The writer's Modified field would add a time-zone dependent
// extended-timestamp extra; wheels carry only the DOS fields.
func setDOSTime(h *zip.FileHeader, unix int64) {
	t := time.Unix(unix, 0).UTC()
	//lint:ignore SA1019 the DOS fields are exactly what is wanted: no extra field, no zone
	h.ModifiedDate = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	//lint:ignore SA1019 see above
	h.ModifiedTime = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func copyCtx(ctx context.Context, w io.Writer, r io.Reader, buf []byte) (int64, error) {
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
			n += int64(k)
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// spillBuffer holds one member's output: in memory chunks while the
// budget allows, then in a temporary file in dir.
type spillBuffer struct {
	dir    string
	mem    *memory
	chunks [][]byte
	file   *os.File
	n      int64
}

func (b *spillBuffer) Write(p []byte) (int, error) {
	written := len(p)
	b.n += int64(written)
	for len(p) > 0 && b.file == nil {
		if k := len(b.chunks); k > 0 && len(b.chunks[k-1]) < chunkSize {
			last := b.chunks[k-1]
			m := copy(last[len(last):chunkSize], p)
			b.chunks[k-1] = last[:len(last)+m]
			p = p[m:]
			continue
		}
		c := b.mem.get()
		if c == nil {
			f, err := os.CreateTemp(b.dir, ".wheel-spool-*")
			if err != nil {
				return 0, err
			}
			b.file = f
			break
		}
		b.chunks = append(b.chunks, c)
	}
	if len(p) > 0 {
		if _, err := b.file.Write(p); err != nil {
			return 0, err
		}
	}
	return written, nil
}

// writeTo copies the held bytes to w.
func (b *spillBuffer) writeTo(w io.Writer) error {
	for _, c := range b.chunks {
		if _, err := w.Write(c); err != nil {
			return err
		}
	}
	if b.file != nil {
		if _, err := b.file.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(w, b.file); err != nil {
			return err
		}
	}
	return nil
}

// discard gives the memory back and removes the spool file.
func (b *spillBuffer) discard() {
	if b.file != nil {
		b.file.Close()
		os.Remove(b.file.Name())
		b.file = nil
	}
	for _, c := range b.chunks {
		b.mem.put(c)
	}
	b.chunks = nil
	b.n = 0
}
