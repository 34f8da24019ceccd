package sanitize

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/internal/fsmode"
)

// Finding is one private value or credential in a staged file.
type Finding struct {
	// File is the file's name as given to ScanFile, or relative to the
	// root of ScanTree (slash-separated).
	File string
	// Offset is the byte offset in the file where the match starts; for a
	// match in decoded text (see Decoded), where the text it was decoded
	// from starts: the run of base64 or hex digits, the JSON string, the
	// SQLite value; -1 when the finding is about the entry itself: its
	// name (the excerpt then says "name: …") or its type (KindNotRegular).
	Offset int64
	// Kind is one of the Kind constants.
	Kind string
	// Excerpt shows what was found without disclosing it: the public
	// prefix of a token followed by "[redacted]", a PEM header line, or
	// the placeholder of a private value. It never holds a secret or a
	// private value in full.
	Excerpt string
	// Decoded says how the text the match was found in was decoded from
	// the file's bytes at Offset, innermost first ("escape sequences
	// decoded in base64", "sqlite page 3, table cases column message");
	// "" when the match is in the bytes as they are.
	Decoded string
}

// String formats f as "FILE: offset N: KIND: EXCERPT", with the decoding
// after the offset in parentheses.
func (f Finding) String() string {
	if f.Offset < 0 {
		return fmt.Sprintf("%s: %s: %s", f.File, f.Kind, f.Excerpt)
	}
	if f.Decoded != "" {
		return fmt.Sprintf("%s: offset %d (%s): %s: %s", f.File, f.Offset, f.Decoded, f.Kind, f.Excerpt)
	}
	return fmt.Sprintf("%s: offset %d: %s: %s", f.File, f.Offset, f.Kind, f.Excerpt)
}

// maxFindings bounds the findings listed per file; the rest are counted
// in one KindTruncated finding. maxCandidates bounds those kept before
// the listed ones are chosen: past it findings are only counted.
const (
	maxFindings   = 100
	maxCandidates = 10 * maxFindings
)

// Scanner finds credentials, this machine's private values and the
// generic shapes of home and temporary paths in files, in their bytes as
// they are and in what they decode to (see the package documentation).
// It holds no state between calls and may be used by several goroutines
// at once.
type Scanner struct {
	m *matcher
	// joined is m without the generic shapes of any machine's home and
	// temporary paths, for values joined to their neighbours: a listing
	// of paths ("/home", then "/lib") would spell one at every join.
	joined *matcher
	chunk  int // bytes read at a time; tests make it tiny
}

// Scanner returns a scanner for the credential patterns, p's private
// values and secrets and the generic path shapes (see the package
// documentation).
func (p Private) Scanner() *Scanner {
	return &Scanner{
		m:      newMatcher(credentialRules(), secretRules(p.Secrets), p.privateRules(), genericRules()),
		joined: newMatcher(credentialRules(), secretRules(p.Secrets), p.privateRules()),
		chunk:  defaultChunk,
	}
}

// findingKey identifies a finding: one per kind and offset.
type findingKey struct {
	off  int64
	kind string
}

// candidate is a finding, the end of the bytes it was found in and the
// priority of the view it was found in.
type candidate struct {
	Finding
	end  int64
	prio int
}

// collector gathers one file's findings from all its views: one per
// offset and kind (that of the view of lowest priority), at most
// maxCandidates of them; the rest are counted.
type collector struct {
	name   string
	index  map[findingKey]int
	cands  []candidate
	more   int
	moreAt int64 // the lowest offset of the findings counted
}

func (c *collector) add(off, end int64, kind, excerpt, via string, prio int) {
	k := findingKey{off, kind}
	cd := candidate{Finding{File: c.name, Offset: off, Kind: kind, Excerpt: excerpt, Decoded: via}, max(end, off+1), prio}
	if i, ok := c.index[k]; ok {
		if prio < c.cands[i].prio {
			c.cands[i] = cd
		}
		return
	}
	if len(c.cands) < maxCandidates {
		if c.index == nil {
			c.index = map[findingKey]int{}
		}
		c.index[k] = len(c.cands)
		c.cands = append(c.cands, cd)
		return
	}
	if c.more == 0 || off < c.moreAt {
		c.moreAt = off
	}
	c.more++
}

// result returns the findings in offset order, at most maxFindings of
// them and one KindTruncated finding for the others. A finding in decoded
// text is left out when a view of lower priority found the same kind in
// the bytes it was decoded from ("C:\\Users\\x" is found as it is and
// with its escapes decoded, one byte apart).
func (c *collector) result() []Finding {
	sort.Slice(c.cands, func(i, j int) bool {
		a, b := c.cands[i], c.cands[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Offset < b.Offset
	})
	kept := c.cands[:0]
	for i, cd := range c.cands {
		dup := false
		for j := i + 1; j < len(c.cands) && c.cands[j].Kind == cd.Kind && c.cands[j].Offset < cd.end; j++ {
			dup = dup || c.cands[j].prio < cd.prio
		}
		if !dup {
			kept = append(kept, cd)
		}
	}
	c.cands = kept
	sort.Slice(c.cands, func(i, j int) bool {
		a, b := c.cands[i], c.cands[j]
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		return a.Kind < b.Kind
	})
	n := min(len(c.cands), maxFindings)
	var out []Finding
	for _, cd := range c.cands[:n] {
		out = append(out, cd.Finding)
	}
	more, at := c.more, c.moreAt
	if len(c.cands) > n {
		if more == 0 || c.cands[n].Offset < at {
			at = c.cands[n].Offset
		}
		more += len(c.cands) - n
	}
	if more > 0 {
		out = append(out, Finding{File: c.name, Offset: at, Kind: KindTruncated,
			Excerpt: fmt.Sprintf("%d more findings from here on are not listed", more)})
	}
	return out
}

// Scan reads r to its end and returns its findings, naming them name, in
// offset order. Memory use does not depend on r's length (see the
// package documentation for the bounds of decoded text).
//
// The bytes are scanned as they are, normalised, and decoded: runs of
// base64 and hex digits, the strings of a JSON document or of JSON lines
// joined to their neighbours, and, for an SQLite database, its pages'
// records. An SQLite database is read again page by page, so r must then
// also be an io.ReaderAt (ScanFile's files are); otherwise Scan returns
// an error.
func (s *Scanner) Scan(r io.Reader, name string) ([]Finding, error) {
	if n, ok := sizeOf(r); ok && n < int64(s.chunk) {
		// A small file needs no buffers of a whole chunk.
		c := *s
		c.chunk = int(n) + 1
		s = &c
	}
	fs := newFileScan(s, name)
	buf := make([]byte, max(s.chunk, 2*lookbehind))
	for {
		n, err := io.ReadFull(r, buf)
		fs.write(buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("sanitize: scan %s: %w", name, err)
		}
	}
	fs.close()
	if fs.isSQLite() {
		ra, ok := r.(io.ReaderAt)
		if !ok {
			return nil, fmt.Errorf("sanitize: scan %s: an SQLite database is read page by page: scan it from a file", name)
		}
		if err := fs.sqlite(ra); err != nil {
			return nil, fmt.Errorf("sanitize: scan %s: %w", name, err)
		}
	}
	return fs.col.result(), nil
}

// sizeOf returns the size of what r reads, when r knows it.
func sizeOf(r io.Reader) (int64, bool) {
	switch r := r.(type) {
	case interface{ Size() int64 }:
		return r.Size(), true
	case interface{ Stat() (fs.FileInfo, error) }:
		if st, err := r.Stat(); err == nil && st.Mode().IsRegular() {
			return st.Size(), true
		}
	}
	return 0, false
}

// fileScan is the scan of one file.
type fileScan struct {
	sc   *Scanner
	col  collector
	pipe *pipe
	json *jsonScan // while the content may be JSON
	head []byte    // the first bytes, for the SQLite header
	size int64
	// An SQLite database's pages, and how many were read (each at most
	// six times: freelist, schema, b-tree, overflow, orphan pass).
	sqlitePages, sqliteReads int64
}

func newFileScan(s *Scanner, name string) *fileScan {
	fs := &fileScan{sc: s, col: collector{name: name}}
	fs.pipe = newPipe(s, s.chunk, fs.col.add)
	fs.json = newJSONScan(s, fs.col.add)
	return fs
}

func (fs *fileScan) write(b []byte) {
	if len(fs.head) < len(sqliteMagic) {
		fs.head = append(fs.head, b[:min(len(b), len(sqliteMagic)-len(fs.head))]...)
	}
	fs.size += int64(len(b))
	fs.pipe.write(b)
	if fs.json != nil && !fs.json.write(b) {
		fs.json = nil // not JSON
	}
}

func (fs *fileScan) close() {
	fs.pipe.close()
	if fs.json != nil {
		fs.json.close()
	}
}

// ScanFile scans the file at path, naming its findings name.
func (s *Scanner) ScanFile(path, name string) ([]Finding, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sanitize: scan %s: %w", name, err)
	}
	defer f.Close()
	return s.Scan(f, name)
}

// ScanTree scans every regular file under root, naming each by its
// slash-separated path relative to root. The name of every entry is
// scanned too (as "/NAME", so a folder named after the user is found),
// and an entry that is neither a folder nor a regular file is a
// KindNotRegular finding: symbolic links are not followed. Findings are
// sorted by file, offset and kind.
func (s *Scanner) ScanTree(root string) ([]Finding, error) {
	var all []Finding
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == root {
			if !d.IsDir() {
				return fmt.Errorf("sanitize: %s is not a folder", root)
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for _, f := range s.scanString("/" + d.Name()) {
			all = append(all, Finding{File: rel, Offset: -1, Kind: f.Kind, Excerpt: "name: " + f.Excerpt})
		}
		switch t := d.Type(); {
		case t.IsDir():
			return nil
		case t.IsRegular():
			found, err := s.ScanFile(path, rel)
			all = append(all, found...)
			return err
		default:
			all = append(all, Finding{File: rel, Offset: -1, Kind: KindNotRegular, Excerpt: fsmode.Name(t)})
			return nil
		}
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Offset != b.Offset {
			return a.Offset < b.Offset
		}
		return a.Kind < b.Kind
	})
	return all, nil
}

// scanString returns the findings in str (named ""), as Scan does.
func (s *Scanner) scanString(str string) []Finding {
	c := *s
	c.chunk = len(str) + 1
	// A strings.Reader cannot fail, and it is an io.ReaderAt.
	fs, _ := c.Scan(strings.NewReader(str), "")
	return fs
}

// RejectedError is the error of evidence whose staged files hold private
// values or credentials. Its message lists every finding by file, offset,
// kind and redacted excerpt.
type RejectedError struct {
	Findings []Finding
}

// Error lists the findings, one per line.
func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sanitize: evidence rejected: %d finding(s) of private values or credentials", len(e.Findings))
	for _, f := range e.Findings {
		b.WriteString("\n\t")
		b.WriteString(f.String())
	}
	return b.String()
}

// Err returns nil when there are no findings, else a *RejectedError
// holding them.
func Err(findings []Finding) error {
	if len(findings) == 0 {
		return nil
	}
	return &RejectedError{Findings: findings}
}
