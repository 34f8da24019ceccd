package sanitize

// descKeyJoin names the sequences of a JSON document's strings (see
// joiner).
const descKeyJoin = "JSON strings of one key in consecutive records joined"

// maxJSONDepth bounds the nesting of containers whose keys are told apart;
// deeper ones count as the deepest.
const maxJSONDepth = 64

// jsonFrame is an open object or array.
type jsonFrame struct {
	obj       bool
	expectKey bool   // in an object, the next string is a key
	path      uint64 // identifies the container's place: keys, array items
	key       uint64 // in an object, the last key read
}

// jsonScan follows the strings of a JSON document, or of JSON lines, and
// joins each (decoded) to the string of the same key (path from the top,
// array indexes left out) before it: in JSON lines, the same field of the
// record before; in an array of objects, the same field of the item
// before; the keys of an object to the key before. A file is
// taken for JSON when its first byte other than white space (and a byte
// order mark) opens an object or an array; a string ends at its closing
// quote or, in a broken document, at the end of its line.
type jsonScan struct {
	jn         *joiner
	decided    bool
	pos        int64 // file offset of the next byte
	inStr, esc bool
	isKey      bool
	strHash    uint64
	stack      []jsonFrame
	extra      int // containers open past maxJSONDepth
	target     [1]joinTarget
}

func newJSONScan(sc *Scanner, out report) *jsonScan {
	return &jsonScan{jn: newJoiner(sc, prioJSONJoin, out)}
}

// FNV-1a, to tell keys and paths apart.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func mix(h, v uint64) uint64 { return (h ^ v) * fnvPrime }

// Markers of paths: an array's items, an object's keys, the top level.
const (
	markItems = 0x9E3779B97F4A7C15
	markKeys  = 0xC2B2AE3D27D4EB4F
	markTop   = 0x165667B19E3779F9
)

// write follows b; it returns false as soon as the file is not JSON.
func (js *jsonScan) write(b []byte) bool {
	i := 0
	if !js.decided {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' ||
			js.pos+int64(i) < 3 && b[i] == "\xEF\xBB\xBF"[js.pos+int64(i)]) {
			i++
		}
		if i < len(b) {
			if b[i] != '{' && b[i] != '[' {
				return false
			}
			js.decided = true
		}
	}
	for ; i < len(b); i++ {
		if js.inStr {
			start := i
			for ; i < len(b); i++ {
				c := b[i]
				if js.esc {
					js.esc = false
				} else if c == '\\' {
					js.esc = true
				} else if c == '"' || c == '\n' {
					break
				}
			}
			js.content(b[start:i])
			if i < len(b) {
				js.endString()
			}
			continue
		}
		switch b[i] {
		case '"':
			js.beginString(js.pos + int64(i) + 1)
		case '{', '[':
			js.push(b[i] == '{')
		case '}', ']':
			js.pop()
		case ':':
			if f := js.top(); f != nil && f.obj {
				f.expectKey = false
			}
		case ',':
			if f := js.top(); f != nil && f.obj {
				f.expectKey = true
			}
		}
	}
	js.pos += int64(len(b))
	return true
}

// close ends the document: an open string ends with it.
func (js *jsonScan) close() {
	if js.inStr {
		js.endString()
	}
}

func (js *jsonScan) top() *jsonFrame {
	if len(js.stack) == 0 {
		return nil
	}
	return &js.stack[len(js.stack)-1]
}

// valuePath identifies the place of the next value.
func (js *jsonScan) valuePath() uint64 {
	f := js.top()
	switch {
	case f == nil:
		return markTop
	case f.obj:
		return mix(f.path, f.key)
	}
	return mix(f.path, markItems)
}

func (js *jsonScan) push(obj bool) {
	if len(js.stack) >= maxJSONDepth {
		js.extra++
		return
	}
	js.stack = append(js.stack, jsonFrame{obj: obj, expectKey: obj, path: js.valuePath()})
}

func (js *jsonScan) pop() {
	switch {
	case js.extra > 0:
		js.extra--
	case len(js.stack) > 0:
		js.stack = js.stack[:len(js.stack)-1]
	}
}

func (js *jsonScan) beginString(off int64) {
	f := js.top()
	js.inStr, js.esc = true, false
	js.isKey = f != nil && f.obj && f.expectKey
	js.strHash = fnvOffset
	js.jn.begin(off)
}

func (js *jsonScan) content(b []byte) {
	if js.isKey {
		h := js.strHash
		for _, c := range b {
			h = (h ^ uint64(c)) * fnvPrime
		}
		js.strHash = h
	}
	js.jn.write(b)
}

func (js *jsonScan) endString() {
	js.inStr = false
	path := js.valuePath()
	if js.isKey {
		f := js.top()
		f.key = js.strHash
		path = mix(f.path, markKeys)
	}
	js.target[0] = joinTarget{id: path, desc: descKeyJoin}
	js.jn.end(js.target[:])
}
