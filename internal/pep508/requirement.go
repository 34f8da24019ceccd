package pep508

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// Requirement is a parsed dependency specifier such as
// `requests[security]>=2.8.1,==2.8.*; python_version < "3.9"` or
// `pip @ https://example.com/pip-1.3.1.zip ; sys_platform == "linux"`.
type Requirement struct {
	// Name is the project name as written; see [Requirement.NormalizedName].
	Name string
	// Extras are the requested extras, normalised, sorted and without
	// duplicates; nil when there are none.
	Extras []string
	// Specifier restricts the acceptable versions; it is empty when there
	// is no version specifier (always so when URL is set).
	Specifier pep440.Specifiers
	// URL is the direct reference of a "name @ URL" requirement, else "".
	URL string
	// Marker is the environment marker after the ";", or nil when there is
	// none.
	Marker *Marker
}

// ParseRequirement parses a dependency specifier. Leading and trailing
// spaces and tabs are allowed; line breaks and comments are not. It returns
// a *ParseError, whose Offset points into s, for invalid input.
func ParseRequirement(s string) (Requirement, error) {
	p := &parser{s: s, what: "dependency specifier"}
	var r Requirement
	p.skipWS()
	name, err := p.identifier("project name")
	if err != nil {
		return Requirement{}, err
	}
	r.Name = name
	p.skipWS()
	if p.peek() == '[' {
		if r.Extras, err = p.extras(); err != nil {
			return Requirement{}, err
		}
		p.skipWS()
	}
	switch c := p.peek(); {
	case c == '@':
		p.pos++
		p.skipWS()
		if r.URL, err = p.url(); err != nil {
			return Requirement{}, err
		}
		// url stops at white space or the end; the grammar requires white
		// space between the URL and the ";".
		p.skipWS()
		if !p.eof() && p.peek() != ';' {
			return Requirement{}, p.fail(p.pos, fmt.Sprintf("expected ';' or the end after the URL, found %s", p.describe(p.pos)),
				`a URL ends at white space; a marker follows after ";", e.g. "name @ URL ; sys_platform == 'linux'"`)
		}
	case c == '(' || isOpStart(c):
		if r.Specifier, err = p.specifier(); err != nil {
			return Requirement{}, err
		}
		p.skipWS()
	}
	if p.peek() == ';' {
		p.pos++
		n, err := p.marker()
		if err != nil {
			return Requirement{}, err
		}
		r.Marker = &Marker{root: n}
		p.skipWS()
		if !p.eof() {
			return Requirement{}, p.unexpectedAfterMarker()
		}
	}
	if !p.eof() {
		return Requirement{}, p.unexpectedAfterRequirement(r)
	}
	return r, nil
}

// unexpectedAfterRequirement reports text that cannot continue the parsed
// part of a requirement.
func (p *parser) unexpectedAfterRequirement(r Requirement) error {
	reason := fmt.Sprintf("unexpected %s", p.describe(p.pos))
	hint := p.charHint(p.pos)
	switch {
	case hint != "":
	case p.peek() == '@':
		hint = "a requirement has either a version specifier or a URL, not both"
	case r.Specifier.String() != "" || r.URL != "":
		hint = `expected ";" followed by an environment marker, or the end`
	default:
		hint = `expected extras such as "[a,b]", a version specifier such as ">=1.0", "@ URL", "; marker" or the end`
		rest := p.s[p.pos:]
		if i := strings.IndexAny(rest, " \t;"); i >= 0 {
			rest = rest[:i]
		}
		if _, err := pep440.Parse(rest); err == nil {
			hint = fmt.Sprintf("a version needs an operator: did you mean %q?", "=="+rest)
		}
	}
	return p.fail(p.pos, reason, hint)
}

// String returns the canonical form of r: the name as written, the
// normalised extras in brackets, the normalised version specifier without
// spaces, and "; marker", e.g. `name[a,b]>=1.0,<2; python_version >= "3.9"`.
// A direct reference prints as `name[a] @ URL` or `name[a] @ URL ; marker`
// (the white space before ";" is required there). When URL is set the
// Specifier is not printed, since a requirement cannot have both.
func (r Requirement) String() string {
	var b strings.Builder
	b.WriteString(r.Name)
	if extras := normalizeExtras(r.Extras); len(extras) > 0 {
		b.WriteByte('[')
		b.WriteString(strings.Join(extras, ","))
		b.WriteByte(']')
	}
	if r.URL != "" {
		b.WriteString(" @ ")
		b.WriteString(r.URL)
		if r.Marker != nil {
			b.WriteString(" ; ")
			b.WriteString(r.Marker.String())
		}
		return b.String()
	}
	b.WriteString(r.Specifier.String())
	if r.Marker != nil {
		b.WriteString("; ")
		b.WriteString(r.Marker.String())
	}
	return b.String()
}

// NormalizedName returns the normalised project name, e.g. "friendly-bard"
// for "Friendly_Bard", for comparing and looking up projects.
func (r Requirement) NormalizedName() string {
	return pyname.Normalize(r.Name)
}

// normalizeExtras returns the normalised extras, sorted and without
// duplicates, as a new slice (nil when there are none).
func normalizeExtras(extras []string) []string {
	if len(extras) == 0 {
		return nil
	}
	out := make([]string, len(extras))
	for i, e := range extras {
		out[i] = pyname.Normalize(e)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
