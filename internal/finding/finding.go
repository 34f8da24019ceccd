// Package finding is the one shape every checker reports in: a finding
// names the check that failed, the file and the member at fault, what was
// wanted and what was found, and says what it means or what to do. A
// [Report] collects the checks that ran and their findings; its Err lists
// every finding, so a refusal is never just the first problem.
//
// Checkers (wheel, bundle, checksum, channel, evidence, provenance, audit)
// report typed findings; callers read the fields, never the text.
package finding

import (
	"fmt"
	"slices"
	"strings"
)

// Finding is one failed check.
type Finding struct {
	// Check is the check's ID, one of the checker's Check constants.
	Check string `json:"check"`
	// File is the file at fault, as the user would name it ("" when the
	// finding is about the subject as a whole).
	File string `json:"file,omitempty"`
	// Member is the entry of File at fault, when there is one: an archive
	// member, a line of a checksum list, a field of a document.
	Member string `json:"member,omitempty"`
	// Want and Got are the expected and the found value, when the check
	// compares one (a digest, a size, a name).
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
	// Msg says what is wrong and what it means or what to do.
	Msg string `json:"message"`
}

// String renders the finding as "check: file: member: msg", leaving out
// the parts that are empty.
func (f Finding) String() string {
	parts := make([]string, 0, 4)
	for _, p := range []string{f.Check, f.File, f.Member, f.Msg} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ": ")
}

// Report is the outcome of checking one subject: the checks that ran, in
// order, every finding, and warnings (facts that refuse nothing but that
// the user should hear, such as a missing sidecar).
type Report struct {
	// Subject is what was checked (a file name or path).
	Subject  string    `json:"subject"`
	Checks   []string  `json:"checks"`
	Findings []Finding `json:"findings"`
	Warnings []string  `json:"warnings,omitempty"`
}

// Run records that check ran.
func (r *Report) Run(check string) {
	if !slices.Contains(r.Checks, check) {
		r.Checks = append(r.Checks, check)
	}
}

// Add records findings.
func (r *Report) Add(fs ...Finding) { r.Findings = append(r.Findings, fs...) }

// Addf records a finding of check about file, its message formatted.
func (r *Report) Addf(check, file, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Check: check, File: file, Msg: fmt.Sprintf(format, args...)})
}

// OK reports whether every check held.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

// Of returns the findings of check, in order.
func (r *Report) Of(check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// ByCheck returns each check that ran with its findings, in the order
// they ran; a check that could not run but has findings (the finding that
// stopped it) follows, in the order of its first finding.
func (r *Report) ByCheck() []Check {
	var out []Check
	seen := map[string]bool{}
	for _, c := range r.Checks {
		seen[c] = true
		out = append(out, Check{Name: c, Findings: r.Of(c)})
	}
	for _, f := range r.Findings {
		if !seen[f.Check] {
			seen[f.Check] = true
			out = append(out, Check{Name: f.Check, Findings: r.Of(f.Check)})
		}
	}
	return out
}

// Check is one check and its findings.
type Check struct {
	Name     string
	Findings []Finding
}

// Err returns nil when the report has no finding, else an *Error whose
// text is header, then every finding on a line of its own (indented two
// spaces, as line renders it; [Finding.String] when line is nil), then
// hint on a line of its own when it is not empty.
func (r *Report) Err(header string, line func(Finding) string, hint string) error {
	if r.OK() {
		return nil
	}
	return &Error{Report: r, header: header, line: line, hint: hint}
}

// Error is a report with findings, as an error.
type Error struct {
	Report *Report
	header string
	line   func(Finding) string
	hint   string
}

// Error lists every finding.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.header)
	for _, f := range e.Report.Findings {
		b.WriteString("\n  ")
		if e.line != nil {
			b.WriteString(e.line(f))
		} else {
			b.WriteString(f.String())
		}
	}
	if e.hint != "" {
		b.WriteString("\n\thint: " + e.hint)
	}
	return b.String()
}

// ExitCode is 1: a check refused.
func (e *Error) ExitCode() int { return 1 }

// Plural returns "s" unless n is 1, for headers such as "3 findings".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
