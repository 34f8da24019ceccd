package wheel

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
)

// Level is the deflate level of every compressed member. Changing it (or
// the pinned klauspost/compress version) changes the bytes of every wheel.
const Level = 6

// memLimit is how much compressed output of one member is kept in memory
// while it waits for its turn to be written; the rest is spooled to a
// temporary file beside the wheel, so memory stays bounded whatever the
// member sizes.
const memLimit = 16 << 20

// Member is one file of a wheel.
type Member struct {
	// Path is the slash-separated path inside the wheel.
	Path string
	// File is read for the content, unless Data is set.
	File string
	Data []byte
	// Mode is 0644 or 0755 (any executable bit gives 0755).
	Mode fs.FileMode
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
	".gz", ".tgz", ".bz2", ".xz", ".zst", ".lz4", ".br", ".zip", ".whl", ".jar", ".7z",
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
	mem    []byte   // compressed (or stored) bytes kept in memory
	spool  *os.File // and the rest, when larger than memLimit
	sha    []byte
	size   int64
	err    error
	done   chan struct{}
}

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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Workers take members in order; a worker may run ahead of the writer
	// by at most `window` members, which bounds memory.
	workers := runtime.GOMAXPROCS(0)
	window := make(chan struct{}, 2*workers)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				jobs[i].compress(ctx, members[i], dir, modified)
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
			if j.spool != nil {
				j.spool.Close()
				os.Remove(j.spool.Name())
			}
		}
	}()

	zw := zip.NewWriter(out)
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
		w, err := zw.CreateRaw(j.header)
		if err == nil {
			_, err = w.Write(j.mem)
		}
		if err == nil && j.spool != nil {
			if _, err = j.spool.Seek(0, io.SeekStart); err == nil {
				_, err = io.Copy(w, j.spool)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("wheel %s: write %s: %w", c.Name, members[i].Path, err)
		}
		if j.spool != nil {
			j.spool.Close()
			os.Remove(j.spool.Name())
			j.spool = nil
		}
		j.mem = nil
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
	rj.compress(ctx, Member{Path: recordPath, Data: data, Mode: 0o644}, dir, modified)
	if rj.err != nil {
		return nil, rj.err
	}
	w, err := zw.CreateRaw(rj.header)
	if err == nil {
		_, err = w.Write(rj.mem)
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", c.Name, err)
	}
	// Hash the finished file once more for its artifact digest: the zip is
	// written sequentially, so hash what was written.
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(h, out)
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", c.Name, err)
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	return &Result{Path: final, SHA256: fmt.Sprintf("%x", h.Sum(nil)), Size: n, Record: record}, nil
}

// minZipTime is 1980-01-01T00:00:00Z, the earliest time a zip entry holds.
const minZipTime = 315532800

// compress reads m once, hashing it (sha256 for RECORD, CRC-32 for zip)
// while deflating it, and prepares its zip header.
func (j *compressed) compress(ctx context.Context, m Member, dir string, modified int64) {
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
	sink := &spillBuffer{dir: dir}
	sha := sha256.New()
	crc := crc32.NewIEEE()
	var n int64
	var err error
	if store {
		n, err = copyCtx(ctx, io.MultiWriter(sink, sha, crc), src)
	} else {
		fw, ferr := flate.NewWriter(sink, Level)
		if ferr != nil {
			j.err = ferr
			return
		}
		n, err = copyCtx(ctx, io.MultiWriter(fw, sha, crc), src)
		if err == nil {
			err = fw.Close()
		}
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
		sink = &spillBuffer{dir: dir}
		if err := reread(ctx, m, sink); err != nil {
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
	j.header, j.mem, j.spool, j.sha, j.size = hdr, sink.mem.Bytes(), sink.file, sha.Sum(nil), n
}

func reread(ctx context.Context, m Member, w io.Writer) error {
	if m.Data != nil || m.File == "" {
		_, err := w.Write(m.Data)
		return err
	}
	f, err := os.Open(m.File)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = copyCtx(ctx, w, f)
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

func copyCtx(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, 256<<10)
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

// spillBuffer keeps up to memLimit bytes in memory and spools the rest to
// a temporary file in dir.
type spillBuffer struct {
	dir  string
	mem  bytes.Buffer
	file *os.File
	n    int64
}

func (b *spillBuffer) Write(p []byte) (int, error) {
	b.n += int64(len(p))
	if b.file == nil && b.mem.Len()+len(p) <= memLimit {
		return b.mem.Write(p)
	}
	if b.file == nil {
		f, err := os.CreateTemp(b.dir, ".wheel-spool-*")
		if err != nil {
			return 0, err
		}
		b.file = f
	}
	return b.file.Write(p)
}

func (b *spillBuffer) discard() {
	if b.file != nil {
		b.file.Close()
		os.Remove(b.file.Name())
		b.file = nil
	}
	b.mem.Reset()
	b.n = 0
}
