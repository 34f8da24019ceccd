package policies

import (
	"fmt"
	"strings"
)

// PolicyError is a policy that cannot be used: a file that is unreadable
// or not Rego, a module that does not parse or compile, or one whose
// evaluation fails. File is the module's name; Line and Column are 0 when
// the problem has no position.
type PolicyError struct {
	File   string
	Line   int
	Column int
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

// Error renders the error as "policy FILE:LINE:COLUMN: MSG".
func (e *PolicyError) Error() string {
	var b strings.Builder
	b.WriteString("policy ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *PolicyError) Unwrap() error { return e.Err }

// ExitCode is 2: the policies are bad configuration.
func (e *PolicyError) ExitCode() int { return 2 }

// CompileError lists every problem found parsing and compiling the
// policies, by file, line and column.
type CompileError struct {
	Errors []*PolicyError
}

// Error lists every problem, one per line.
func (e *CompileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "policies do not compile (%d error%s):", len(e.Errors), plural(len(e.Errors)))
	for _, pe := range e.Errors {
		b.WriteString("\n  ")
		b.WriteString(pe.Error())
	}
	return b.String()
}

// Unwrap returns every problem, each a *[PolicyError].
func (e *CompileError) Unwrap() []error {
	errs := make([]error, len(e.Errors))
	for i, pe := range e.Errors {
		errs[i] = pe
	}
	return errs
}

// ExitCode is 2: the policies are bad configuration.
func (e *CompileError) ExitCode() int { return 2 }

// RefusedError is a release the policies refuse: every denial, in
// report order.
type RefusedError struct {
	Denials []Denial
	// Remedies say what to do about the default rules denied.
	Remedies []Remedy
}

// Error lists every denial, one per line.
func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the release policies refuse the release (%d reason%s):", len(e.Denials), plural(len(e.Denials)))
	for _, d := range e.Denials {
		b.WriteString("\n  ")
		b.WriteString(d.Message)
	}
	return b.String()
}

// Unwrap returns every denial, each a *[Denial], for errors.As.
func (e *RefusedError) Unwrap() []error {
	errs := make([]error, len(e.Denials))
	for i := range e.Denials {
		d := e.Denials[i]
		errs[i] = &d
	}
	return errs
}

// ExitCode is 1: a policy refused.
func (e *RefusedError) ExitCode() int { return 1 }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
