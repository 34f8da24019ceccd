package artdiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Limits of a JSON document compared by value (a parsed value takes
// several times its size in memory); a larger one is compared as text.
const (
	maxJSONSize   = 8 << 20
	maxJSONValues = 250_000
	maxJSONDepth  = 1000
)

// jsonLimit is the error of a JSON document compared as text instead.
type jsonLimit string

func (e jsonLimit) Error() string { return string(e) }

// errTooLarge is a JSON document too large or too deep to compare by
// value.
const errTooLarge = jsonLimit("too large or too deeply nested to compare by value")

// jsonNode is a parsed JSON value that keeps its object members in
// document order and its numbers as written.
type jsonNode struct {
	kind  byte   // '{', '[', '"', '0' (number), 't' (true or false), 'n' (null)
	text  string // a string's value, a number or boolean as written
	keys  []string
	items []*jsonNode // object member values (parallel to keys) or array elements
}

// compareJSON compares two JSON documents by value.
func (c *comparer) compareJSON(p []string, a, b blob, res scanResult) (*Difference, error) {
	va, errA := c.loadJSON(a)
	if fatal(errA) {
		return nil, errA
	}
	vb, errB := c.loadJSON(b)
	if fatal(errB) {
		return nil, errB
	}
	switch {
	case errors.Is(errA, errTooLarge) || errors.Is(errB, errTooLarge):
		return c.compareText(p, a, b, "compared as text, "+errTooLarge.Error()+"; ")
	case errA != nil && errB != nil:
		return c.compareText(p, a, b, "neither side parses as JSON; ")
	case errA != nil || errB != nil:
		return c.failBoth(p, onSide(original, errA), onSide(rebuilt, errB), res)
	}
	if what, detail, ok := diffJSON("$", va, vb); ok {
		return c.diff(p, what, detail), nil
	}
	return c.compareText(p, a, b, "same JSON value written differently; ")
}

// loadJSON reads and parses a JSON document of at most maxJSONSize bytes.
func (c *comparer) loadJSON(b blob) (*jsonNode, error) {
	if b.size > maxJSONSize {
		return nil, errTooLarge
	}
	rc, err := b.open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxJSONSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJSONSize {
		return nil, errTooLarge
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	budget := maxJSONValues
	v, err := parseJSON(dec, 0, &budget)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value at byte %d", dec.InputOffset())
	}
	return v, nil
}

// parseJSON parses the next value of dec, nested depth deep, counting it
// against budget.
func parseJSON(dec *json.Decoder, depth int, budget *int) (*jsonNode, error) {
	if *budget--; depth > maxJSONDepth || *budget < 0 {
		return nil, errTooLarge
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jsonNode{kind: byte(t)}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string))
			}
			v, err := parseJSON(dec, depth+1, budget)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, v)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &jsonNode{kind: '"', text: t}, nil
	case json.Number:
		return &jsonNode{kind: '0', text: t.String()}, nil
	case bool:
		return &jsonNode{kind: 't', text: strconv.FormatBool(t)}, nil
	case nil:
		return &jsonNode{kind: 'n', text: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// diffJSON returns the first difference between a and b, at JSON path at,
// in the original's document order: ok is false when they are equal.
func diffJSON(at string, a, b *jsonNode) (what, detail string, ok bool) {
	valueAt := "JSON value at "
	if a.kind != b.kind {
		return valueAt + at, fmt.Sprintf("original %s, rebuilt %s", a.summary(), b.summary()), true
	}
	switch a.kind {
	case '{':
		inB := map[string]int{}
		for j := len(b.keys) - 1; j >= 0; j-- {
			inB[b.keys[j]] = j
		}
		for i, k := range a.keys {
			j, found := inB[k]
			if !found {
				return valueAt + at + jsonKey(k), "missing in rebuilt, original " + a.items[i].summary(), true
			}
			if what, detail, ok := diffJSON(at+jsonKey(k), a.items[i], b.items[j]); ok {
				return what, detail, true
			}
		}
		inA := map[string]bool{}
		for _, k := range a.keys {
			inA[k] = true
		}
		for j, k := range b.keys {
			if !inA[k] {
				return valueAt + at + jsonKey(k), "extra in rebuilt: " + b.items[j].summary(), true
			}
		}
		for i := range max(len(a.keys), len(b.keys)) {
			if i < len(a.keys) && i < len(b.keys) && a.keys[i] == b.keys[i] {
				continue
			}
			ka, kb := "(none)", "(none)"
			if i < len(a.keys) {
				ka = shown(a.keys[i])
			}
			if i < len(b.keys) {
				kb = shown(b.keys[i])
			}
			return "JSON key order at " + at, fmt.Sprintf("member %d: original %s, rebuilt %s", i+1, ka, kb), true
		}
	case '[':
		for i := range min(len(a.items), len(b.items)) {
			if what, detail, ok := diffJSON(fmt.Sprintf("%s[%d]", at, i), a.items[i], b.items[i]); ok {
				return what, detail, true
			}
		}
		n := min(len(a.items), len(b.items))
		counts := fmt.Sprintf("; arrays of %d and %d elements", len(a.items), len(b.items))
		switch {
		case len(a.items) > n:
			return fmt.Sprintf("%s%s[%d]", valueAt, at, n), "missing in rebuilt, original " + a.items[n].summary() + counts, true
		case len(b.items) > n:
			return fmt.Sprintf("%s%s[%d]", valueAt, at, n), "extra in rebuilt: " + b.items[n].summary() + counts, true
		}
	default:
		if a.text != b.text {
			return valueAt + at, fmt.Sprintf("original %s, rebuilt %s", a.summary(), b.summary()), true
		}
	}
	return "", "", false
}

// summary describes a value in a few words.
func (n *jsonNode) summary() string {
	switch n.kind {
	case '{':
		return fmt.Sprintf("an object of %d members", len(n.keys))
	case '[':
		return fmt.Sprintf("an array of %d elements", len(n.items))
	case '"':
		return shown(n.text)
	}
	return clip(n.text)
}

// jsonKey is the JSON path step for an object member: .name for an
// identifier, ["other name"] otherwise.
func jsonKey(k string) string {
	for i, r := range k {
		if !(r == '_' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || i > 0 && '0' <= r && r <= '9') {
			return "[" + strconv.Quote(k) + "]"
		}
	}
	if k == "" {
		return `[""]`
	}
	return "." + k
}
