package artdiff

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// contextBefore is how many bytes of a line before its first difference
// a detail shows.
const contextBefore = 24

// compareText compares two texts line by line, streaming, and reports the
// first differing line and column with both lines. note starts the detail.
// It returns nil when the texts are identical.
func (c *comparer) compareText(p []string, a, b blob, note string) (*Difference, error) {
	ra, rb, err := openBoth(a, b)
	if err != nil {
		return c.fail(p, err)
	}
	defer ra.Close()
	defer rb.Close()
	bufA, bufB := make([]byte, chunkSize), make([]byte, chunkSize)
	var (
		off, lineStart int64
		line           = 1
		before         []byte // the end of the current line's equal prefix
	)
	for {
		if err := c.ctx.Err(); err != nil {
			return nil, err
		}
		na, errA := readFull(ra, bufA)
		if errA != nil && errA != io.EOF {
			return c.fail(p, onSide(original, errA))
		}
		nb, errB := readFull(rb, bufB)
		if errB != nil && errB != io.EOF {
			return c.fail(p, onSide(rebuilt, errB))
		}
		n := min(na, nb)
		k := firstMismatch(bufA[:n], bufB[:n])
		if k < 0 && na != nb {
			k = n
		}
		equal := bufA[:n]
		if k >= 0 {
			equal = bufA[:k]
		}
		if j := bytes.LastIndexByte(equal, '\n'); j >= 0 {
			line += bytes.Count(equal, []byte{'\n'})
			lineStart = off + int64(j) + 1
			before = keepTail(nil, equal[j+1:])
		} else {
			before = keepTail(before, equal)
		}
		if k >= 0 {
			at := off + int64(k)
			cut := at-int64(len(before)) > lineStart
			lineA := showLine(before, cut, bufA[k:na], ra, errA)
			lineB := showLine(before, cut, bufB[k:nb], rb, errB)
			return c.diff(p, fmt.Sprintf("line %d", line),
				fmt.Sprintf("%scolumn %d: original %s, rebuilt %s", note, at-lineStart+1, lineA, lineB)), nil
		}
		if na < chunkSize {
			return nil, nil
		}
		off += int64(n)
	}
}

// keepTail appends data to tail and keeps the last contextBefore bytes,
// starting on a character boundary.
func keepTail(tail, data []byte) []byte {
	if len(data) >= contextBefore {
		tail = append(tail[:0], data[len(data)-contextBefore:]...)
	} else {
		tail = append(tail, data...)
		if extra := len(tail) - contextBefore; extra > 0 {
			tail = append(tail[:0], tail[extra:]...)
		}
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return tail
}

// showLine quotes one side's line around its first difference: the end
// of the common prefix (before, cut when it does not start the line),
// then rest (this side's bytes from the difference on, to the end of the
// chunk), read further from r when needed (readErr is the error of the
// chunk's read: io.EOF when the stream ended there).
func showLine(before []byte, cut bool, rest []byte, r io.Reader, readErr error) string {
	if bytes.IndexByte(rest, '\n') < 0 && len(rest) <= maxShown && readErr == nil {
		more := make([]byte, maxShown+1-len(rest))
		m, _ := readFull(r, more)
		rest = append(bytes.Clone(rest), more[:m]...)
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i+1]
	}
	truncated := len(rest) > maxShown
	if truncated {
		rest = rest[:runeCut(rest, maxShown)]
	}
	line := append(bytes.Clone(before), rest...)
	if len(line) == 0 {
		return "end of file"
	}
	s := strconv.Quote(string(line))
	if cut {
		s = "…" + s
	}
	switch {
	case truncated:
		s += "…"
	case line[len(line)-1] != '\n':
		s += " then end of file"
	}
	return s
}

// runeCut returns the largest i <= n (n < len(b)) at which b can be cut
// without splitting a character.
func runeCut(b []byte, n int) int {
	i := n
	for i > 0 && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}
