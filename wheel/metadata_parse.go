package wheel

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Metadata is a parsed core metadata file: METADATA in a wheel's
// .dist-info folder, or PKG-INFO in a source distribution. The same format
// serves WHEEL, so [ParseMetadata] reads that too; its fields are then
// found through [Metadata.Values] and [Metadata.Fields].
//
// The format (core metadata specifications, versions 1.0 to 2.5) is that
// of e-mail headers as Python's email.parser reads them with the compat32
// policy: "Field: value" lines, a line starting with a space or a tab
// continuing the previous field, and, after the first blank line, a body
// that is the Description. Field names are matched ignoring ASCII case.
//
// The named struct fields hold the values of the fields most tools need;
// a single-use field holds its first value (a checker reports repeats), a
// multiple-use field every value in order.
type Metadata struct {
	MetadataVersion        string // Metadata-Version
	Name                   string // Name, as written (not normalised)
	Version                string // Version, as written (not normalised)
	Summary                string // Summary
	RequiresPython         string // Requires-Python
	LicenseExpression      string // License-Expression (2.4)
	License                string // License (deprecated by 2.4)
	DescriptionContentType string // Description-Content-Type (2.1)

	RequiresDist  []string // Requires-Dist, one per field
	ProvidesExtra []string // Provides-Extra, one per field
	Classifiers   []string // Classifier, one per field
	ProjectURLs   []string // Project-URL, "label, URL" as written
	LicenseFiles  []string // License-File (2.4), paths relative to .dist-info/licenses/
	Keywords      []string // Keywords, split at commas and trimmed

	// Description is the message body when it is not blank, else the
	// Description header field with its continuation lines unfolded (the
	// "       |" prefix of the 1.x convention removed where every
	// continuation line has it).
	Description string

	// Fields lists every header field in order as (name, value), names as
	// written. A value continued on further lines holds them joined by
	// "\n", with the indentation common to the continuation lines removed.
	// The body is not in Fields.
	Fields [][2]string
}

// Values returns the values of every header field named field (ignoring
// ASCII case), in order; nil when there is none.
func (m *Metadata) Values(field string) []string {
	var vs []string
	for _, f := range m.Fields {
		if strings.EqualFold(f[0], field) {
			vs = append(vs, f[1])
		}
	}
	return vs
}

// MetadataSyntaxError is a core metadata (or WHEEL) file that cannot be
// read, with the 1-based line of the problem (0 for the whole file).
type MetadataSyntaxError struct {
	Line int
	Msg  string
}

// Error describes the problem and where it is.
func (e *MetadataSyntaxError) Error() string {
	if e.Line == 0 {
		return "core metadata: " + e.Msg
	}
	return fmt.Sprintf("core metadata line %d: %s", e.Line, e.Msg)
}

// ParseMetadata parses a core metadata file (or a WHEEL file, which has the
// same format). It checks the syntax only: a header line is
// "Field-Name: value" with a field name of printable ASCII other than ":";
// a line starting with a space or tab continues the previous field; the
// first empty line (after removing a trailing "\r") ends the headers and
// everything after it is the body. The file must be UTF-8, without a byte
// order mark, and a carriage return must be followed by a line feed
// (Python ends a line at a bare "\r", this parser would not). Which fields
// are present, and their values, are for the
// caller to judge; see [Check] for what a wheel's METADATA must hold.
func ParseMetadata(data []byte) (*Metadata, error) {
	if !utf8.Valid(data) {
		return nil, &MetadataSyntaxError{Msg: "not valid UTF-8 (the specification requires UTF-8)"}
	}
	s := string(data)
	if strings.HasPrefix(s, "\uFEFF") {
		return nil, &MetadataSyntaxError{Line: 1, Msg: "starts with a byte order mark; write UTF-8 without one"}
	}
	// Python's e-mail parser ends a line at a bare "\r" as at "\n"; this
	// parser would not, so the two would read different fields (a
	// "Requires-Dist" hidden in a Summary, say): refuse it.
	for i, line := 0, 1; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			line++
		case s[i] == '\r' && (i+1 == len(s) || s[i+1] != '\n'):
			return nil, &MetadataSyntaxError{Line: line, Msg: fmt.Sprintf("a carriage return (\"\\r\") not followed by a line feed, at byte %d: Python's e-mail parser, which installers use, ends the line there and this parser does not, so they would read different fields; use \"\\n\" (or \"\\r\\n\") line ends only", i)}
		}
	}
	type field struct {
		name  string
		first string
		cont  []string
	}
	var (
		fields  []field
		body    string
		hasBody bool
	)
	for line, pos := 1, 0; pos < len(s); line++ {
		var l string
		if i := strings.IndexByte(s[pos:], '\n'); i >= 0 {
			l, pos = s[pos:pos+i], pos+i+1
		} else {
			l, pos = s[pos:], len(s)
		}
		l = strings.TrimSuffix(l, "\r")
		if l == "" {
			body, hasBody = s[pos:], true
			break
		}
		if l[0] == ' ' || l[0] == '\t' {
			if len(fields) == 0 {
				return nil, &MetadataSyntaxError{Line: line, Msg: "continuation line (starting with white space) before any field"}
			}
			f := &fields[len(fields)-1]
			f.cont = append(f.cont, strings.TrimRight(l, " \t"))
			continue
		}
		colon := strings.IndexByte(l, ':')
		if colon < 0 {
			return nil, &MetadataSyntaxError{Line: line, Msg: fmt.Sprintf("%q is not a \"Field-Name: value\" line", metadataQuoteLine(l))}
		}
		name := l[:colon]
		if name == "" {
			return nil, &MetadataSyntaxError{Line: line, Msg: "empty field name"}
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; c <= ' ' || c > '~' {
				return nil, &MetadataSyntaxError{Line: line, Msg: fmt.Sprintf("field name %q has character %q; field names are printable ASCII without spaces", metadataQuoteLine(name), c)}
			}
		}
		fields = append(fields, field{name: name, first: strings.Trim(l[colon+1:], " \t")})
	}

	m := &Metadata{Fields: make([][2]string, 0, len(fields))}
	var headerDescription string
	seenDescription := false
	for _, f := range fields {
		pipes := strings.EqualFold(f.name, "Description") && allPipeContinued(f.cont)
		v := unfoldMetadataValue(f.first, f.cont, pipes)
		m.Fields = append(m.Fields, [2]string{f.name, v})
		first := func(dst *string) {
			if *dst == "" {
				*dst = v
			}
		}
		switch strings.ToLower(f.name) {
		case "metadata-version":
			first(&m.MetadataVersion)
		case "name":
			first(&m.Name)
		case "version":
			first(&m.Version)
		case "summary":
			first(&m.Summary)
		case "requires-python":
			first(&m.RequiresPython)
		case "license-expression":
			first(&m.LicenseExpression)
		case "license":
			first(&m.License)
		case "description-content-type":
			first(&m.DescriptionContentType)
		case "description":
			if !seenDescription {
				headerDescription, seenDescription = v, true
			}
		case "requires-dist":
			m.RequiresDist = append(m.RequiresDist, v)
		case "provides-extra":
			m.ProvidesExtra = append(m.ProvidesExtra, v)
		case "classifier":
			m.Classifiers = append(m.Classifiers, v)
		case "project-url":
			m.ProjectURLs = append(m.ProjectURLs, v)
		case "license-file":
			m.LicenseFiles = append(m.LicenseFiles, v)
		case "keywords":
			for _, k := range strings.Split(v, ",") {
				if k = strings.TrimSpace(k); k != "" {
					m.Keywords = append(m.Keywords, k)
				}
			}
		}
	}
	m.Description = headerDescription
	if hasBody && strings.TrimSpace(body) != "" {
		m.Description = body
	}
	return m, nil
}

// allPipeContinued reports whether every non-blank continuation line of a
// Description uses the 1.x convention of a "|" after the indentation.
func allPipeContinued(cont []string) bool {
	n := 0
	for _, c := range cont {
		t := strings.TrimLeft(c, " \t")
		if t == "" {
			continue
		}
		if t[0] != '|' {
			return false
		}
		n++
	}
	return n > 0
}

// unfoldMetadataValue joins a field's first line and continuation lines
// with "\n". With pipes, each continuation line loses its indentation and
// the "|" after it; otherwise the indentation common to the non-blank
// continuation lines is removed, keeping relative indentation.
func unfoldMetadataValue(first string, cont []string, pipes bool) string {
	if len(cont) == 0 {
		return first
	}
	common := -1
	if !pipes {
		for _, c := range cont {
			t := strings.TrimLeft(c, " \t")
			if t == "" {
				continue
			}
			if ind := len(c) - len(t); common < 0 || ind < common {
				common = ind
			}
		}
	}
	var b strings.Builder
	b.WriteString(first)
	for _, c := range cont {
		b.WriteByte('\n')
		switch t := strings.TrimLeft(c, " \t"); {
		case pipes:
			b.WriteString(strings.TrimPrefix(t, "|"))
		case t == "":
		default:
			b.WriteString(c[common:])
		}
	}
	return b.String()
}

// metadataQuoteLine shortens a line for an error message.
func metadataQuoteLine(l string) string {
	const limit = 60
	if len(l) <= limit {
		return l
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(l[cut]) {
		cut--
	}
	return l[:cut] + "..."
}
