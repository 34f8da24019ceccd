package wheel

import (
	"bytes"
	"fmt"
	"strings"
)

// Bytes renders m as a core metadata file (METADATA): each of m.Fields as
// "Name: value" in order, a blank line, and m.Description as the body.
// The typed fields of m are not consulted: Fields is what is written. A
// field value may not span lines; the description may.
func (m *Metadata) Bytes() ([]byte, error) {
	var b bytes.Buffer
	for _, f := range m.Fields {
		name, value := f[0], f[1]
		if name == "" || strings.ContainsAny(name, ": \t\r\n") {
			return nil, fmt.Errorf("METADATA: invalid field name %q", name)
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("METADATA: field %s spans several lines", name)
		}
		b.WriteString(name + ": " + value + "\n")
	}
	if m.Description != "" {
		b.WriteString("\n")
		b.WriteString(m.Description)
		if !strings.HasSuffix(m.Description, "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes(), nil
}

// Add appends a field to m.Fields (and nothing else).
func (m *Metadata) Add(name, value string) { m.Fields = append(m.Fields, [2]string{name, value}) }
