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
	// Offset is the byte offset in the file where the match starts; -1
	// when the finding is about the entry itself: its name (the excerpt
	// then says "name: …") or its type (KindNotRegular).
	Offset int64
	// Kind is one of the Kind constants.
	Kind string
	// Excerpt shows what was found without disclosing it: the public
	// prefix of a token followed by "[redacted]", a PEM header line, or
	// the placeholder of a private value. It never holds a secret or a
	// private value in full.
	Excerpt string
}

// String formats f as "FILE: offset N: KIND: EXCERPT".
func (f Finding) String() string {
	if f.Offset < 0 {
		return fmt.Sprintf("%s: %s: %s", f.File, f.Kind, f.Excerpt)
	}
	return fmt.Sprintf("%s: offset %d: %s: %s", f.File, f.Offset, f.Kind, f.Excerpt)
}

// maxFindings bounds the findings listed per file; the rest are counted
// in one KindTruncated finding.
const maxFindings = 100

// Scanner finds credentials, this machine's private values and the
// generic shapes of home and temporary paths in files. It holds no state
// between calls and may be used by several goroutines at once.
type Scanner struct {
	m *matcher
	// cred is the credential patterns alone, run over the input with its
	// invisible characters taken out.
	cred  *matcher
	chunk int // bytes read at a time; tests make it tiny
}

// Scanner returns a scanner for the credential patterns, p's private
// values and the generic path shapes (see the package documentation).
func (p Private) Scanner() *Scanner {
	return &Scanner{
		m:     newMatcher(credentialRules(), p.privateRules(), genericRules()).withInvisible(),
		cred:  newMatcher(credentialRules()),
		chunk: defaultChunk,
	}
}

// collector gathers one file's findings, keeping at most maxFindings and
// counting the rest.
type collector struct {
	name     string
	findings []Finding
	more     int
	moreAt   int64 // the offset of the first finding not kept
}

func (c *collector) add(off int64, kind, excerpt string) {
	if len(c.findings) < maxFindings {
		c.findings = append(c.findings, Finding{File: c.name, Offset: off, Kind: kind, Excerpt: excerpt})
		return
	}
	if c.more == 0 {
		c.moreAt = off
	}
	c.more++
}

// result returns the findings kept, and one KindTruncated finding for the
// others.
func (c *collector) result() []Finding {
	if c.more == 0 {
		return c.findings
	}
	return append(c.findings, Finding{File: c.name, Offset: c.moreAt, Kind: KindTruncated,
		Excerpt: fmt.Sprintf("%d more findings from here on are not listed", c.more)})
}

// merge returns the findings of raw (the scan of the input as it is) and
// of split (credentials found once invisible characters were taken out),
// in offset order, raw's first at one offset, a finding of both kept
// once, at most maxFindings of them and one KindTruncated finding for the
// rest.
func merge(raw, split *collector) []Finding {
	if len(split.findings) == 0 && split.more == 0 {
		return raw.result()
	}
	all := append(append([]Finding(nil), raw.findings...), split.findings...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Offset < all[j].Offset })
	kept := all[:0]
	for _, f := range all {
		if k := len(kept); k > 0 && kept[k-1].Offset == f.Offset && kept[k-1].Kind == f.Kind {
			continue
		}
		kept = append(kept, f)
	}
	out := collector{name: raw.name, findings: kept, more: raw.more + split.more}
	switch {
	case raw.more > 0 && split.more > 0:
		out.moreAt = min(raw.moreAt, split.moreAt)
	case raw.more > 0:
		out.moreAt = raw.moreAt
	default:
		out.moreAt = split.moreAt
	}
	if len(kept) > maxFindings {
		if out.more == 0 || kept[maxFindings].Offset < out.moreAt {
			out.moreAt = kept[maxFindings].Offset
		}
		out.more += len(kept) - maxFindings
		out.findings = kept[:maxFindings]
	}
	return out.result()
}

// Scan reads r to its end and returns its findings, naming them name, in
// offset order. Memory use does not depend on r's length.
//
// The input is scanned as it is and, for the credential patterns, once
// more with its invisible characters (see isInvisible) taken out, so that
// a token split by a zero-width space, a soft hyphen or a bidi control is
// found; such a finding's offset is that of its first byte in the input.
// The second scan only reports a match that has characters taken out
// between its bytes (every other is the first scan's), and only looks at
// the parts of the input that held some.
func (s *Scanner) Scan(r io.Reader, name string) ([]Finding, error) {
	raw, split := collector{name: name}, collector{name: name}
	var strip stripper
	b := newStream(s.cred, s.chunk, func(off int64, n int, r *rule, ex string) {
		if strip.removedWithin(off, off+int64(n)) {
			split.add(strip.original(off), r.kind, ex)
		}
	})
	var at []int64
	b.focus = func(from, to int64) []int64 {
		strip.forget(from)
		at = strip.within(from, to, at)
		return at
	}
	a := newStream(s.m, s.chunk, func(off int64, n int, r *rule, ex string) {
		if r == nil {
			strip.note(off, n)
			return
		}
		raw.add(off, r.kind, ex)
	})
	a.scanned = func(seg []byte) { b.write(strip.strip(seg)) }
	buf := make([]byte, max(s.chunk, 2*lookbehind))
	for {
		n, err := io.ReadFull(r, buf)
		a.write(buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			a.close()
			b.close()
			return merge(&raw, &split), nil
		}
		if err != nil {
			return nil, fmt.Errorf("sanitize: scan %s: %w", name, err)
		}
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

// scanString returns the findings in s (named ""), as Scan does.
func (s *Scanner) scanString(str string) []Finding {
	var raw, split collector
	var strip stripper
	b := []byte(str)
	s.m.scan(b, 0, len(b), 0, func(i, n int, r *rule, ex string) {
		if r == nil {
			strip.note(int64(i), n)
			return
		}
		raw.add(int64(i), r.kind, ex)
	})
	if len(strip.notes) > 0 {
		stripped := strip.strip(b)
		s.cred.scan(stripped, 0, len(stripped), 0, func(i, n int, r *rule, ex string) {
			if strip.removedWithin(int64(i), int64(i+n)) {
				split.add(strip.original(int64(i)), r.kind, ex)
			}
		})
	}
	return merge(&raw, &split)
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
