package policies

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Package is the Rego package whose deny set decides a release.
const Package = "mkrelease.release"

// denyPath is the document mkrelease evaluates.
var denyPath = ast.MustParseRef("data." + Package + ".deny")

// excludedBuiltins are left out of the capabilities even if OPA did not
// mark them non-deterministic: they reach outside the process.
var excludedBuiltins = [...]string{"http.send", "net.lookup_ip_addr", "opa.runtime"}

// Decision is the outcome of evaluating the policies on an input.
type Decision struct {
	// Allow is true when there is no denial.
	Allow bool `json:"allow"`
	// Denials are every reason to refuse, in report order: by rule (the
	// default rules in the order of [DefaultRules], then any other rule
	// id, then messages without one), then by message.
	Denials []Denial `json:"denials"`
	// Remedies say what to do about each default rule denied, in report
	// order (see [Remedies]).
	Remedies []Remedy `json:"remedies"`
	// Policies are every module evaluated, in evaluation order (the
	// defaults, then the user's), with their digests.
	Policies []PolicyDigest `json:"policies"`
}

// Err returns nil when the decision allows the release, else a
// *[RefusedError] listing every denial.
func (d *Decision) Err() error {
	if d.Allow {
		return nil
	}
	return &RefusedError{Denials: slices.Clone(d.Denials), Remedies: slices.Clone(d.Remedies)}
}

// Denial is one reason the policies refuse a release.
type Denial struct {
	// Rule is the rule id the message starts with in brackets
	// ("evidence.workload"); "" when the message has none (a user rule
	// may omit it).
	Rule string `json:"rule"`
	// Message is the deny message, as the policy wrote it, rule id
	// included.
	Message string `json:"message"`
	// Policy is the name of the module whose deny rule produced the
	// message (the first, if several did).
	Policy string `json:"policy"`
}

// Error returns the message.
func (d *Denial) Error() string { return d.Message }

// PolicyDigest names one policy module and the sha256 of its source, as a
// verification summary records the policy it applied.
type PolicyDigest struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Evaluator is the default policies and a user's, compiled once. It is
// safe for concurrent use.
//
// The modules are Rego v1. A release is refused by every string in
// data.mkrelease.release.deny; a user module adds reasons by declaring
// deny rules in that package and may read input, input.parameters and
// data.mkrelease.lib. Modules may define other packages too, but a deny
// rule in another package is an error: mkrelease would never evaluate it.
//
// Evaluation is hermetic: builtins that are non-deterministic or reach
// outside the process (http.send, net.lookup_ip_addr, opa.runtime,
// time.now_ns, rand.intn, uuid.rfc4122, io.jwt.encode_sign…) are not
// available, so a module calling one does not compile; remote schema
// references are refused (no allowed hosts); there is no data besides
// the modules; print statements are dropped. A builtin that fails (a type
// error in sprintf, say) fails the evaluation rather than leaving a deny
// rule undefined, so a broken rule cannot pass a release silently.
type Evaluator struct {
	query    rego.PreparedEvalQuery
	modules  []Module
	policies []PolicyDigest
	// sources[i] is the module whose deny rules the query's element i+1
	// copies.
	sources []string
}

// NewEvaluator parses and compiles the default policies and extra. A
// module that does not parse or compile is a *[CompileError] naming every
// problem by file, line and column; a module without a name or with a
// name given twice is a *[PolicyError].
func NewEvaluator(ctx context.Context, extra []Module) (*Evaluator, error) {
	mods := append(Defaults(), extra...)
	names := map[string]bool{}
	for _, m := range mods {
		if m.Name == "" {
			return nil, &PolicyError{File: "(unnamed)", Msg: "a policy module needs a name"}
		}
		if names[m.Name] {
			return nil, &PolicyError{File: m.Name, Msg: "two policies have this name"}
		}
		names[m.Name] = true
	}

	caps := capabilities()
	e := &Evaluator{modules: slices.Clone(mods)}
	opts := []func(*rego.Rego){
		rego.SetRegoVersion(ast.RegoV1),
		rego.Capabilities(caps),
		rego.StrictBuiltinErrors(true),
	}
	query := []string{denyPath.String()}
	var errs ast.Errors
	for i, m := range mods {
		e.policies = append(e.policies, PolicyDigest{Name: m.Name, SHA256: m.SHA256()})
		parsed, err := ast.ParseModuleWithOpts(m.Name, m.Source, ast.ParserOptions{
			RegoVersion:       ast.RegoV1,
			Capabilities:      caps,
			ProcessAnnotation: true,
		})
		if err != nil {
			errs = append(errs, asASTErrors(m.Name, err)...)
			continue
		}
		if parsed == nil {
			errs = append(errs, ast.NewError(ast.ParseErr, &ast.Location{File: m.Name}, "empty module"))
			continue
		}
		src, perrs := copyDenyRules(parsed, fmt.Sprintf("__mkrelease_deny_%d", i))
		errs = append(errs, perrs...)
		if src != nil {
			query = append(query, src.String())
			e.sources = append(e.sources, m.Name)
		}
		opts = append(opts, rego.ParsedModule(parsed))
	}
	if len(errs) > 0 {
		return nil, compileError(errs)
	}
	opts = append(opts, rego.Query("["+strings.Join(query, ", ")+"]"))
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("policies: compiling: %w", ctxErr)
		}
		if aerrs, ok := errors.AsType[ast.Errors](err); ok {
			return nil, compileError(aerrs)
		}
		return nil, &CompileError{Errors: []*PolicyError{{File: "(policies)", Msg: "cannot compile", Err: err}}}
	}
	e.query = pq
	return e, nil
}

// Policies returns every module the evaluator holds, in evaluation order,
// with its digest.
func (e *Evaluator) Policies() []PolicyDigest { return slices.Clone(e.policies) }

// Evaluate evaluates the policies on in and returns every denial. An
// error means no decision was made (the release must not be published):
// the input cannot be encoded, the evaluation was cancelled, or a policy
// failed at run time (a *[PolicyError] naming its file and line).
func (e *Evaluator) Evaluate(ctx context.Context, in Input) (*Decision, error) {
	b, err := in.JSON()
	if err != nil {
		return nil, err
	}
	d, err := e.evaluateJSON(ctx, b)
	if err != nil {
		return nil, err
	}
	d.Remedies = Remedies(d.Denials, in.Release.Targets)
	return d, nil
}

// evaluateJSON evaluates the policies on the JSON input b, which need not
// be shaped like an Input.
func (e *Evaluator) evaluateJSON(ctx context.Context, b []byte) (*Decision, error) {
	// OPA looks at the context only now and then: a cancelled run must not
	// evaluate at all.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("policies: evaluating: %w", err)
	}
	v, err := ast.ValueFromReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("policies: decoding the policy input: %w", err)
	}
	rs, err := e.query.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("policies: evaluating: %w", ctxErr)
		}
		return nil, evalError(err)
	}
	if len(rs) != 1 || len(rs[0].Expressions) != 1 {
		return nil, fmt.Errorf("policies: %s is undefined", denyPath)
	}
	sets, ok := rs[0].Expressions[0].Value.([]any)
	if !ok || len(sets) != 1+len(e.sources) {
		return nil, fmt.Errorf("policies: unexpected result %v", rs[0].Expressions[0].Value)
	}
	origin := map[string]string{}
	for i := len(e.sources) - 1; i >= 0; i-- { // the first module wins
		msgs, err := messages(sets[i+1], e.sources[i])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			origin[m] = e.sources[i]
		}
	}
	msgs, err := messages(sets[0], "")
	if err != nil {
		return nil, err
	}
	d := &Decision{Denials: []Denial{}, Remedies: []Remedy{}, Policies: e.Policies()}
	for _, m := range msgs {
		d.Denials = append(d.Denials, Denial{Rule: ruleID(m), Message: m, Policy: origin[m]})
	}
	slices.SortFunc(d.Denials, compareDenials)
	d.Allow = len(d.Denials) == 0
	return d, nil
}

// Evaluate compiles the default policies and extra, and evaluates them on
// in: NewEvaluator, then Evaluate. Compile once with [NewEvaluator] to
// evaluate several inputs.
func Evaluate(ctx context.Context, in Input, extra []Module) (*Decision, error) {
	e, err := NewEvaluator(ctx, extra)
	if err != nil {
		return nil, err
	}
	return e.Evaluate(ctx, in)
}

// capabilities are OPA's, less every non-deterministic builtin and those
// of excludedBuiltins, with no host allowed for remote references.
func capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion(ast.CapabilitiesRegoVersion(ast.RegoV1))
	caps.Builtins = slices.DeleteFunc(caps.Builtins, func(b *ast.Builtin) bool {
		return b.Nondeterministic || slices.Contains(excludedBuiltins[:], b.Name)
	})
	caps.AllowNet = []string{}
	return caps
}

// copyDenyRules adds to mod a copy, named name, of each of its rules that
// contributes to data.mkrelease.release.deny, so that the messages of
// each module can be told apart; it returns the copies' document, or nil
// when mod has none. A deny rule in another package is an error.
func copyDenyRules(mod *ast.Module, name string) (ast.Ref, ast.Errors) {
	var copies []*ast.Rule
	var errs ast.Errors
	for _, r := range mod.Rules {
		path := r.Path()
		if path.Equal(denyPath) {
			c := r.Copy()
			c.Annotations = nil
			ref := c.Head.Ref().Copy()
			if len(ref) == 1 {
				c.Head.Name = ast.Var(name)
				ref[0] = ast.VarTerm(name)
			} else {
				ref[len(ref)-1] = ast.StringTerm(name)
			}
			c.Head.SetRef(ref)
			copies = append(copies, c)
			continue
		}
		if last, ok := path[len(path)-1].Value.(ast.String); ok && last == "deny" && !path.HasPrefix(denyPath) {
			errs = append(errs, ast.NewError(ast.CompileErr, r.Loc(),
				"rule deny of %s is never evaluated: mkrelease reads %s (declare `package %s`)", path[:len(path)-1], denyPath, Package))
		}
	}
	if len(copies) == 0 {
		return nil, errs
	}
	mod.Rules = append(mod.Rules, copies...)
	return mod.Package.Path.Append(ast.StringTerm(name)), errs
}

// messages returns the strings of a deny set (a []any once converted).
func messages(v any, policy string) ([]string, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("policies: %s is not a set: %v", denyPath, v)
	}
	msgs := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			file := policy
			if file == "" {
				file = "(policies)"
			}
			return nil, &PolicyError{File: file, Msg: fmt.Sprintf("%s holds %v, not a string", denyPath, it)}
		}
		msgs = append(msgs, s)
	}
	return msgs, nil
}

// ruleID returns the rule id in brackets at the start of msg ("[id] …"),
// or "".
func ruleID(msg string) string {
	rest, ok := strings.CutPrefix(msg, "[")
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, "] ")
	if !ok || id == "" || strings.ContainsAny(id, " []") {
		return ""
	}
	return id
}

func compareDenials(a, b Denial) int {
	return cmp.Or(
		cmp.Compare(rank(a.Rule), rank(b.Rule)),
		cmp.Compare(a.Rule, b.Rule),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Policy, b.Policy),
	)
}

// rank orders denials: the default rules, other rule ids, no rule id.
func rank(id string) int {
	if id == "" {
		return len(defaultRules) + 1
	}
	return ruleRank(id)
}

// compileError converts OPA's errors, dropping the duplicates the copied
// deny rules cause.
func compileError(errs ast.Errors) *CompileError {
	ce := &CompileError{}
	seen := map[string]bool{}
	for _, e := range errs {
		pe := policyError(e)
		k := pe.Error()
		if seen[k] {
			continue
		}
		seen[k] = true
		ce.Errors = append(ce.Errors, pe)
	}
	slices.SortStableFunc(ce.Errors, func(a, b *PolicyError) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return ce
}

func policyError(e *ast.Error) *PolicyError {
	pe := &PolicyError{File: "(policies)", Msg: e.Code + ": " + e.Message}
	if e.Location != nil {
		if e.Location.File != "" {
			pe.File = e.Location.File
		}
		pe.Line, pe.Column = e.Location.Row, e.Location.Col
	}
	return pe
}

// asASTErrors returns the errors of parsing file.
func asASTErrors(file string, err error) ast.Errors {
	if errs, ok := errors.AsType[ast.Errors](err); ok {
		return errs
	}
	if e, ok := errors.AsType[*ast.Error](err); ok {
		return ast.Errors{e}
	}
	return ast.Errors{ast.NewError(ast.ParseErr, &ast.Location{File: file}, "%v", err)}
}

// evalError names the file and line of a run-time error.
func evalError(err error) error {
	if te, ok := errors.AsType[*topdown.Error](err); ok {
		pe := &PolicyError{File: "(policies)", Msg: "evaluation failed: " + te.Code + ": " + te.Message}
		if te.Location != nil {
			pe.File, pe.Line, pe.Column = te.Location.File, te.Location.Row, te.Location.Col
		}
		return pe
	}
	return &PolicyError{File: "(policies)", Msg: "evaluation failed", Err: err}
}
