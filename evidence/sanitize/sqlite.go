package sanitize

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// sqliteMagic begins every SQLite 3 database.
const sqliteMagic = "SQLite format 3\x00"

// isSQLite reports whether the file began as an SQLite database does.
func (fs *fileScan) isSQLite() bool { return string(fs.head) == sqliteMagic }

// SQLite limits this reader keeps to, whatever a file says.
const (
	maxBtreeDepth  = 40      // b-tree pages below one another
	maxRecordCols  = 4096    // values of one record
	maxRecordHdr   = 1 << 16 // bytes of a record's header
	cellChunk      = 64 << 10
	maxValuePieces = 1 << 14 // pieces of one value mapped to the file exactly
)

// sqliteTable is a b-tree of the schema: a table or an index.
type sqliteTable struct {
	root int64
	// name and cols are for findings: only names a finding could not
	// hide in are kept ("" for others).
	name  string
	cols  []string
	index bool
	// joins names each column's sequence of values, made once.
	joins []joinTarget
}

// piece maps value offset pos on to the file offset off.
type piece struct {
	pos, off int64
}

// sqliteDB reads a database page by page (see the package
// documentation): the records of every table and index b-tree reachable
// from the schema, in key order, then the pages no b-tree reaches (the
// free pages among them), whose cells are read as deleted rows. It never
// trusts what the file says: every page is read at most once as a b-tree
// page and at most once as an overflow page, and every length is bounded
// by the page or the file.
type sqliteDB struct {
	fs       *fileScan
	r        io.ReaderAt
	pageSize int64
	usable   int64
	enc      uint32 // 1 UTF-8, 2 UTF-16le, 3 UTF-16be
	nPages   int64
	btree    []uint64 // bitset: pages read as b-tree pages
	overflow []uint64 // bitset: pages read as overflow pages
	free     []uint64 // bitset: pages on the freelist
	bufs     [][]byte // a page buffer per b-tree depth
	ovBuf    []byte
	hdrBuf   []byte
	err      error
	reads    int64 // pages read
	peeks    int64 // overflow pages read while reading the schema
	tables   map[int64]*sqliteTable
	freeTab  sqliteTable

	cell *pipe
	jn   *joiner
	// The value being read.
	vPage    int64
	vTable   *sqliteTable
	vCol     int
	vFree    bool
	vPos     int64
	vText    bool
	pieces   []piece
	u16      utf16Decoder
	target   [1]joinTarget
	feedFunc func(b []byte, off int64)
}

func (fs *fileScan) sqlite(r io.ReaderAt) error {
	var h [100]byte
	if n, err := r.ReadAt(h[:], 0); n < len(h) {
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	ps := int64(binary.BigEndian.Uint16(h[16:]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 || ps-int64(h[20]) < 480 {
		return nil // not a page size SQLite writes: the bytes were scanned as they are
	}
	db := &sqliteDB{fs: fs, r: r, pageSize: ps, usable: ps - int64(h[20]), enc: binary.BigEndian.Uint32(h[56:]),
		nPages: fs.size / ps, tables: map[int64]*sqliteTable{}}
	if db.enc < 1 || db.enc > 3 {
		db.enc = 1
	}
	words := (db.nPages + 64) / 64
	db.btree, db.overflow, db.free = make([]uint64, words), make([]uint64, words), make([]uint64, words)
	db.ovBuf = make([]byte, ps)
	db.cell = newPipe(fs.sc, int(min(cellChunk, fs.size+1)), db.cellHit)
	db.cell.prio = prioCell
	db.jn = newJoiner(fs.sc, prioCellJoin, fs.col.add)
	db.feedFunc = db.feed
	db.freeTab = sqliteTable{root: -1}
	db.readFreelist(binary.BigEndian.Uint32(h[32:]))
	db.readSchema()
	roots := make([]int64, 0, len(db.tables))
	for root := range db.tables {
		roots = append(roots, root)
	}
	sort.Slice(roots, func(i, j int) bool { return roots[i] < roots[j] })
	// sqlite_schema itself, then every b-tree in root page order.
	db.walk(1, 0, &sqliteTable{root: 1, name: "sqlite_schema", cols: []string{"type", "name", "tbl_name", "rootpage", "sql"}})
	for _, root := range roots {
		db.walk(root, 0, db.tables[root])
	}
	// The pages no b-tree reached: free pages keep the cells of deleted
	// rows until they are used again.
	for p := int64(2); p <= db.nPages && db.err == nil; p++ {
		if !has(db.btree, p) && !has(db.overflow, p) {
			db.orphan(p)
		}
	}
	fs.sqlitePages, fs.sqliteReads = db.nPages, db.reads
	return db.err
}

func has(b []uint64, p int64) bool { return b[p/64]&(1<<(p%64)) != 0 }
func set(b []uint64, p int64)      { b[p/64] |= 1 << (p % 64) }

// valid reports whether p is a page of the file.
func (db *sqliteDB) valid(p int64) bool { return p >= 1 && p <= db.nPages }

// page reads page p into buf; nil when it cannot be read.
func (db *sqliteDB) page(p int64, buf []byte) []byte {
	db.reads++
	n, err := db.r.ReadAt(buf[:db.pageSize], (p-1)*db.pageSize)
	if int64(n) < db.pageSize {
		if err != nil && !errors.Is(err, io.EOF) && db.err == nil {
			db.err = fmt.Errorf("sqlite page %d: %w", p, err)
		}
		return nil
	}
	return buf[:db.pageSize]
}

// buf returns the page buffer of b-tree depth d.
func (db *sqliteDB) buf(d int) []byte {
	for len(db.bufs) <= d {
		db.bufs = append(db.bufs, make([]byte, db.pageSize))
	}
	return db.bufs[d]
}

// readFreelist marks the pages of the freelist, from its first trunk page.
func (db *sqliteDB) readFreelist(trunk uint32) {
	for t := int64(trunk); db.valid(t) && !has(db.free, t); {
		set(db.free, t)
		pg := db.page(t, db.ovBuf)
		if pg == nil {
			return
		}
		n := int64(binary.BigEndian.Uint32(pg[4:]))
		for k := int64(0); k < n && 8+4*k+4 <= db.usable; k++ {
			if leaf := int64(binary.BigEndian.Uint32(pg[8+4*k:])); db.valid(leaf) {
				set(db.free, leaf)
			}
		}
		t = int64(binary.BigEndian.Uint32(pg[0:]))
	}
}

// pageHeader returns the b-tree page header of pg (page p): its offset,
// type and the number of cells and offset of the cell pointers; ok is
// false when pg is no b-tree page.
func (db *sqliteDB) pageHeader(pg []byte, p int64) (hdr int64, typ byte, cells, ptrs int64, ok bool) {
	if p == 1 {
		hdr = 100
	}
	typ = pg[hdr]
	switch typ {
	case 2, 5:
		ptrs = hdr + 12
	case 10, 13:
		ptrs = hdr + 8
	default:
		return 0, 0, 0, 0, false
	}
	cells = int64(binary.BigEndian.Uint16(pg[hdr+3:]))
	cells = min(cells, (db.usable-ptrs)/2)
	return hdr, typ, cells, ptrs, true
}

// walk reads the b-tree page p, at depth d below the root, and the pages
// below it, in key order; the records are of table t.
func (db *sqliteDB) walk(p int64, d int, t *sqliteTable) {
	if d > maxBtreeDepth || !db.valid(p) || has(db.btree, p) || has(db.overflow, p) || db.err != nil {
		return
	}
	set(db.btree, p)
	pg := db.page(p, db.buf(d))
	if pg == nil {
		return
	}
	hdr, typ, cells, ptrs, ok := db.pageHeader(pg, p)
	if !ok {
		return
	}
	for i := int64(0); i < cells; i++ {
		off := int64(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
		if off < ptrs+2*cells || off+4 > db.usable {
			continue
		}
		if typ == 2 || typ == 5 {
			db.walk(int64(binary.BigEndian.Uint32(pg[off:])), d+1, t)
		}
		if typ != 5 {
			db.cellRecord(pg, p, off, typ, t, false)
		}
	}
	if typ == 2 || typ == 5 {
		db.walk(int64(binary.BigEndian.Uint32(pg[hdr+8:])), d+1, t)
	}
}

// orphan reads page p, which no b-tree reached: when it still is a b-tree
// page (a free page that was a table's or an index's), its cells' records
// are read as deleted rows.
func (db *sqliteDB) orphan(p int64) {
	pg := db.page(p, db.buf(0))
	if pg == nil {
		return
	}
	_, typ, cells, ptrs, ok := db.pageHeader(pg, p)
	if !ok || typ == 5 {
		return
	}
	set(db.btree, p)
	for i := int64(0); i < cells; i++ {
		off := int64(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
		if off < ptrs+2*cells || off+4 > db.usable {
			continue
		}
		db.cellRecord(pg, p, off, typ, &db.freeTab, true)
	}
}

// localSize returns how much of a payload of size n a cell of page type
// typ holds on its page (the rest is on overflow pages).
func (db *sqliteDB) localSize(n int64, typ byte) int64 {
	u := db.usable
	x := (u-12)*64/255 - 23
	if typ == 13 {
		x = u - 35
	}
	if n <= x {
		return n
	}
	m := (u-12)*32/255 - 23
	k := m + (n-m)%(u-4)
	if k <= x {
		return k
	}
	return m
}

// cellRecord reads the record of the cell at off on page p (pg).
func (db *sqliteDB) cellRecord(pg []byte, p, off int64, typ byte, t *sqliteTable, free bool) {
	if pr, ok := db.payload(pg, p, off, typ); ok {
		db.record(&pr, p, t, free)
	}
}

// payload returns a reader of the payload of the cell at off on page p
// (pg, of type typ).
func (db *sqliteDB) payload(pg []byte, p, off int64, typ byte) (payloadReader, bool) {
	pos := off
	if typ == 2 {
		pos += 4
	}
	size, n := uvarint(pg[pos:db.usable])
	if n == 0 {
		return payloadReader{}, false
	}
	pos += int64(n)
	if typ == 13 {
		if _, n = uvarint(pg[pos:db.usable]); n == 0 {
			return payloadReader{}, false
		}
		pos += int64(n)
	}
	if size > uint64(db.nPages*db.pageSize) {
		return payloadReader{}, false // longer than the file
	}
	local := db.localSize(int64(size), typ)
	pr := payloadReader{db: db}
	if pos+local > db.usable {
		local = db.usable - pos // a damaged cell: what the page has
	} else if local < int64(size) && pos+local+4 <= db.usable {
		pr.next = int64(binary.BigEndian.Uint32(pg[pos+local:]))
	}
	pr.cur, pr.curOff, pr.remain = pg[pos:pos+local], (p-1)*db.pageSize+pos, int64(size)-local
	return pr, true
}

// payloadReader reads a record's payload: the cell's part on its page,
// then the overflow pages, each read once.
type payloadReader struct {
	db     *sqliteDB
	cur    []byte // what is left of the current piece
	curOff int64  // its file offset
	next   int64  // the next overflow page
	remain int64  // payload bytes after cur
	// peek: the overflow pages are read without being marked read (the
	// schema is read once before the b-trees are).
	peek bool
}

// more makes the next overflow page current; false when there is none.
func (pr *payloadReader) more() bool {
	db := pr.db
	p := pr.next
	if pr.remain <= 0 || !db.valid(p) || !pr.peek && (has(db.overflow, p) || has(db.btree, p)) {
		return false
	}
	if pr.peek {
		// Every schema row may name the same pages: all of them together
		// read no more pages than the file has.
		if db.peeks++; db.peeks > db.nPages {
			return false
		}
	} else {
		set(db.overflow, p)
	}
	pg := db.page(p, db.ovBuf)
	if pg == nil {
		return false
	}
	k := min(pr.remain, db.usable-4)
	pr.next = int64(binary.BigEndian.Uint32(pg[0:]))
	pr.cur, pr.curOff, pr.remain = pg[4:4+k], (p-1)*db.pageSize+4, pr.remain-k
	return true
}

// read passes the next n bytes of the payload to fn (nil: skips them) in
// pieces; false when the payload ends first.
func (pr *payloadReader) read(n int64, fn func(b []byte, off int64)) bool {
	for n > 0 {
		if len(pr.cur) == 0 && !pr.more() {
			return false
		}
		k := min(n, int64(len(pr.cur)))
		if fn != nil {
			fn(pr.cur[:k], pr.curOff)
		}
		pr.cur, pr.curOff, n = pr.cur[k:], pr.curOff+k, n-k
	}
	return true
}

// byte reads one byte of the payload.
func (pr *payloadReader) byte() (byte, bool) {
	if len(pr.cur) == 0 && !pr.more() {
		return 0, false
	}
	c := pr.cur[0]
	pr.cur, pr.curOff = pr.cur[1:], pr.curOff+1
	return c, true
}

// uvarint decodes an SQLite varint (big-endian, 7 bits a byte, the ninth
// byte whole); n is 0 when b ends first.
func uvarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9 && i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7F)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// serialSize returns the length of a value of serial type st.
func serialSize(st uint64) int64 {
	switch {
	case st >= 12:
		return int64(st-12) / 2
	case st <= 4:
		return int64(st)
	case st == 5:
		return 6
	case st == 6 || st == 7:
		return 8
	}
	return 0
}

// record reads a record from pr: the values that are text or blobs are
// scanned, as values of table t's columns.
func (db *sqliteDB) record(pr *payloadReader, p int64, t *sqliteTable, free bool) {
	db.readRecord(pr, func(col int, st uint64, size int64) {
		if st < 12 {
			pr.read(size, nil)
			return
		}
		db.valueBegin(p, t, col, free, st%2 == 1)
		pr.read(size, db.feedFunc)
		db.valueEnd()
	})
}

// readRecord reads the header of the record in pr, then calls value for
// each value in turn, which must read its size bytes from pr.
func (db *sqliteDB) readRecord(pr *payloadReader, value func(col int, st uint64, size int64)) {
	var vb [9]byte
	n := 0
	for ; n < 9; n++ {
		c, ok := pr.byte()
		if !ok {
			return
		}
		vb[n] = c
		if c < 0x80 {
			n++
			break
		}
	}
	hsize, k := uvarint(vb[:n])
	if k == 0 || hsize < uint64(k) || hsize > maxRecordHdr {
		return
	}
	db.hdrBuf = db.hdrBuf[:0]
	if !pr.read(int64(hsize)-int64(k), func(b []byte, _ int64) { db.hdrBuf = append(db.hdrBuf, b...) }) {
		return
	}
	hdr := db.hdrBuf
	for col := 0; len(hdr) > 0 && col < maxRecordCols; col++ {
		st, m := uvarint(hdr)
		if m == 0 {
			return
		}
		hdr = hdr[m:]
		if st == 10 || st == 11 {
			return // reserved: not a record
		}
		value(col, st, serialSize(st))
	}
}

// readSchema reads sqlite_schema (the b-tree of page 1) for the root
// page, name and columns of every table and index.
func (db *sqliteDB) readSchema() {
	seen := map[int64]bool{}
	var visit func(p int64, d int)
	var vals [5][]byte
	var root int64
	visit = func(p int64, d int) {
		if d > maxBtreeDepth || !db.valid(p) || seen[p] || db.err != nil {
			return
		}
		seen[p] = true
		pg := db.page(p, db.buf(d))
		if pg == nil {
			return
		}
		hdr, typ, cells, ptrs, ok := db.pageHeader(pg, p)
		if !ok || typ == 2 || typ == 10 {
			return
		}
		for i := int64(0); i < cells; i++ {
			off := int64(binary.BigEndian.Uint16(pg[ptrs+2*i:]))
			if off < ptrs+2*cells || off+4 > db.usable {
				continue
			}
			if typ == 5 {
				visit(int64(binary.BigEndian.Uint32(pg[off:])), d+1)
				continue
			}
			pr, ok := db.payload(pg, p, off, typ)
			if !ok || pr.remain+int64(len(pr.cur)) > 1<<20 {
				continue
			}
			for k := range vals {
				vals[k] = vals[k][:0]
			}
			root = 0
			pr.peek = true
			db.readRecord(&pr, func(col int, st uint64, size int64) {
				switch {
				case col == 3 && st >= 1 && st <= 6:
					root = 0
					pr.read(size, func(b []byte, _ int64) {
						for _, c := range b {
							root = root<<8 | int64(c)
						}
					})
				case col < len(vals) && st >= 12 && size <= 1<<16:
					pr.read(size, func(b []byte, _ int64) { vals[col] = append(vals[col], b...) })
				default:
					pr.read(size, nil)
				}
			})
			if root > 1 && root <= db.nPages && db.tables[root] == nil {
				db.tables[root] = db.newTable(root, string(vals[0]), string(vals[1]), string(vals[4]))
			}
		}
		if typ == 5 {
			visit(int64(binary.BigEndian.Uint32(pg[hdr+8:])), d+1)
		}
	}
	visit(1, 0)
}

// identifier is a name a finding may show: it could hide no private value
// or credential of the patterns (too short for a token; checked by the
// scanner for the rest).
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,31}$`)

// safeName returns name when it may show in a finding, else "".
func (db *sqliteDB) safeName(name string) string {
	if !identifier.MatchString(name) || len(db.fs.sc.scanString(name)) > 0 {
		return ""
	}
	return name
}

// newTable describes the b-tree at root from its schema row.
func (db *sqliteDB) newTable(root int64, typ, name, sql string) *sqliteTable {
	t := &sqliteTable{root: root, name: db.safeName(name), index: typ == "index"}
	for _, c := range sqlColumns(sql, t.index) {
		t.cols = append(t.cols, db.safeName(c))
	}
	return t
}

// sqlColumns returns the column names of a CREATE TABLE statement (the
// first word of each definition between the outer parentheses that is
// not a table constraint), or the indexed columns of a CREATE INDEX.
func sqlColumns(sql string, index bool) []string {
	i, j := strings.IndexByte(sql, '('), strings.LastIndexByte(sql, ')')
	if i < 0 || j < i {
		return nil
	}
	var cols []string
	depth, start := 0, i+1
	for k := i + 1; k <= j; k++ {
		switch c := sql[k]; {
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case (c == ',' || k == j) && depth == 0:
			def := strings.TrimSpace(sql[start:k])
			start = k + 1
			name := strings.Trim(strings.Fields(def + " x")[0], "\"`[]")
			switch strings.ToUpper(name) {
			case "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
				if !index {
					continue
				}
			}
			cols = append(cols, name)
		}
	}
	return cols
}

// describeValue names the value being read, for its findings.
func (db *sqliteDB) describeValue() string {
	t := db.vTable
	if db.vFree {
		return fmt.Sprintf("sqlite page %d (no b-tree's: a deleted row's), column %d", db.vPage, db.vCol+1)
	}
	what := "table"
	if t.index {
		what = "index"
	}
	name := t.name
	if name == "" {
		name = fmt.Sprintf("at page %d", t.root)
	}
	col := fmt.Sprintf("column %d", db.vCol+1)
	if db.vCol < len(t.cols) && t.cols[db.vCol] != "" {
		col = "column " + t.cols[db.vCol]
	}
	return fmt.Sprintf("sqlite page %d, %s %s %s", db.vPage, what, name, col)
}

// joinTarget returns the sequence of the values of column col of t.
func (db *sqliteDB) joinTarget(t *sqliteTable, col int) joinTarget {
	for len(t.joins) <= col && len(t.joins) < maxRecordCols {
		c := len(t.joins)
		id := uint64(t.root)<<16 | uint64(c)
		desc := fmt.Sprintf("sqlite values of column %d of consecutive deleted rows joined", c+1)
		if t.root >= 0 {
			name := t.name
			if name == "" {
				name = fmt.Sprintf("at page %d", t.root)
			}
			cn := fmt.Sprintf("%d", c+1)
			if c < len(t.cols) && t.cols[c] != "" {
				cn = t.cols[c]
			}
			desc = fmt.Sprintf("sqlite values of %s column %s in consecutive rows joined", name, cn)
		} else {
			id = 1<<63 | uint64(c)
		}
		t.joins = append(t.joins, joinTarget{id: id, desc: desc})
	}
	return t.joins[min(col, len(t.joins)-1)]
}

// valueBegin starts reading a text (or blob) value of column col of t on
// page p.
func (db *sqliteDB) valueBegin(p int64, t *sqliteTable, col int, free, text bool) {
	db.vPage, db.vTable, db.vCol, db.vFree, db.vPos = p, t, col, free, 0
	db.vText = text && db.enc != 1
	db.pieces = db.pieces[:0]
	db.u16 = utf16Decoder{bigEndian: db.enc == 3, out: db.u16.out}
	db.cell.reset()
	db.jn.begin(-1)
}

// feed passes a piece of the value, at file offset off, to the scans.
func (db *sqliteDB) feed(b []byte, off int64) {
	if db.vPos == 0 {
		db.jn.off = off
	}
	if len(db.pieces) < maxValuePieces {
		db.pieces = append(db.pieces, piece{db.vPos, off})
	}
	if db.vText {
		b = db.u16.write(b)
	}
	db.vPos += int64(len(b))
	db.cell.write(b)
	db.jn.write(b)
}

func (db *sqliteDB) valueEnd() {
	if db.vText {
		if b := db.u16.flush(); len(b) > 0 {
			db.cell.write(b)
			db.jn.write(b)
		}
	}
	db.cell.close()
	db.target[0] = db.joinTarget(db.vTable, db.vCol)
	db.jn.end(db.target[:])
}

// cellHit reports a finding in the value being read at its file offsets.
func (db *sqliteDB) cellHit(off, end int64, kind, excerpt, via string, prio int) {
	db.fs.col.add(db.fileOffset(off), db.fileOffset(end-1)+1, kind, excerpt, within(via, db.describeValue()), prio)
}

// fileOffset maps offset x of the value being read to the file: exactly
// for UTF-8 text and blobs, to the value's start for UTF-16 text.
func (db *sqliteDB) fileOffset(x int64) int64 {
	if db.vText || len(db.pieces) == 0 {
		return db.jn.off
	}
	k := sort.Search(len(db.pieces), func(k int) bool { return db.pieces[k].pos > x })
	if k == 0 {
		return db.pieces[0].off
	}
	return db.pieces[k-1].off + x - db.pieces[k-1].pos
}

// utf16Decoder turns UTF-16 text, written in pieces, into UTF-8.
type utf16Decoder struct {
	bigEndian bool
	odd       []byte // a byte of a code unit cut by the end of a piece
	high      rune   // a high surrogate waiting for its low one
	out       []byte
}

func (u *utf16Decoder) write(b []byte) []byte {
	u.out = u.out[:0]
	if len(u.odd) > 0 && len(b) > 0 {
		u.unit(u.odd[0], b[0])
		u.odd, b = u.odd[:0], b[1:]
	}
	for ; len(b) >= 2; b = b[2:] {
		u.unit(b[0], b[1])
	}
	u.odd = append(u.odd[:0], b...)
	return u.out
}

func (u *utf16Decoder) unit(a, b byte) {
	v := rune(a) | rune(b)<<8
	if u.bigEndian {
		v = rune(a)<<8 | rune(b)
	}
	switch {
	case utf16.IsSurrogate(v) && v < 0xDC00:
		if u.high != 0 {
			u.out = utf8.AppendRune(u.out, utf8.RuneError)
		}
		u.high = v
		return
	case utf16.IsSurrogate(v):
		if u.high != 0 {
			u.out = utf8.AppendRune(u.out, utf16.DecodeRune(u.high, v))
			u.high = 0
			return
		}
		v = utf8.RuneError
	case u.high != 0:
		u.out = utf8.AppendRune(u.out, utf8.RuneError)
		u.high = 0
	}
	u.out = utf8.AppendRune(u.out, v)
}

func (u *utf16Decoder) flush() []byte {
	u.out = u.out[:0]
	if u.high != 0 {
		u.out = utf8.AppendRune(u.out, utf8.RuneError)
		u.high = 0
	}
	return u.out
}
