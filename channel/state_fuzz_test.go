package channel

import (
	"bytes"
	"testing"
)

// FuzzParseState feeds arbitrary bytes to the channel.json reader: it
// never panics, and a state it accepts without problems encodes to bytes
// that read back to the same encoding (what publish writes is what verify
// reads).
func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"format":"mkrelease-channel/2","project":"vexl","generation":1,"published":"2026-01-02T03:04:05Z","newest":"0.3.0","versions":[]}`))
	f.Add([]byte(`{"format":"mkrelease-channel/2","project":"vexl","generation":2,"published":"2026-01-02T03:04:05Z","newest":"0.3.0","versions":[{"version":"0.3.0","assets":[{"name":"a.whl","sha256":"` +
		"0000000000000000000000000000000000000000000000000000000000000000" + `","size":1}],"wheels":[]}]}`))
	f.Add([]byte(`{"unknown": 1}`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := parseState(data)
		if err != nil {
			return
		}
		_ = st.problems(0)
		a, err := st.marshal()
		if err != nil {
			return
		}
		back, err := parseState(a)
		if err != nil {
			t.Fatalf("reading back what was written: %v\n%s", err, a)
		}
		b, err := back.marshal()
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the state:\n%s\n%s", a, b)
		}
	})
}
