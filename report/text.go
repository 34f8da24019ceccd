package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mkrelease/mkrelease/evidence/stats"
)

// WriteJSON writes r as indented JSON with a trailing newline.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the terminal summary of r: what it is, the artifacts
// and their digests, each target's evidence (case counts and the cases
// that did not pass; the boards, each workload's r and the largest robust
// CV against the bound), and the decision with every denial.
func WriteText(w io.Writer, r *Report) error {
	p := &printer{w: w}
	switch r.Kind {
	case KindChannel:
		p.f("channel %s: %s, generation %d, newest %s\n", r.Path, orNone(r.Project), r.Channel.Generation, orNone(r.Channel.Newest))
		for _, v := range r.Channel.Versions {
			p.f("\nversion %s (%d assets)\n", v.Version, len(v.Assets))
			for _, a := range v.Assets {
				p.f("  %s  %s\n", a.SHA256, a.Name)
			}
			switch vs := v.VSA; {
			case vs == nil:
				p.f("  verification summary: none published\n")
			default:
				p.f("  verification summary %s: %s, policy %s sha256:%s, %d subjects", vs.File, orNone(vs.Result), orNone(vs.PolicyURI), orNone(vs.PolicySHA256), vs.Subjects)
				if vs.SignatureVerified {
					p.f(", signature verified\n")
				} else {
					p.f("\n    %s\n", vs.Finding)
				}
			}
		}
	default:
		p.f("release %s %s (%s), targets %s\n", r.Project, r.Version, r.Path, orNone(strings.Join(r.Targets, ", ")))
		p.f("\nartifacts (%d)\n", len(r.Artifacts))
		for _, a := range r.Artifacts {
			mark := "ok  "
			if !a.Verified {
				mark = "FAIL"
			}
			p.f("  %s %s  %s\n", mark, a.SHA256, a.Name)
			for _, f := range a.Findings {
				p.f("       %s\n", f)
			}
		}
	}
	for _, e := range r.Evidence {
		writeEvidenceText(p, e)
	}
	if d := r.Decision; d != nil {
		ch := d.Channel
		if ch == "" {
			ch = "no channel configured: decided as for a first publish"
		}
		if d.Allow {
			p.f("\ndecision: ALLOW (%s)\n", ch)
		} else {
			p.f("\ndecision: REFUSE, %d denial%s (%s)\n", len(d.Denials), plural(len(d.Denials)), ch)
		}
		for _, x := range d.Denials {
			p.f("  %s\n", x.Message)
		}
		if len(d.Remedies) > 0 {
			p.f("what to do:\n")
			for _, x := range d.Remedies {
				p.f("  [%s] %s\n", x.Rule, x.Text)
			}
		}
	}
	return p.err
}

func writeEvidenceText(p *printer, e Evidence) {
	head := "evidence " + e.Target
	if e.Version != "" {
		head = "evidence " + e.Version + " " + e.Target
	}
	switch {
	case !e.Present:
		p.f("\n%s: none (%s not found)\n", head, e.File)
		return
	case e.OK:
		p.f("\n%s (%s): every check held\n", head, e.File)
	default:
		p.f("\n%s (%s): %d finding%s\n", head, e.File, len(e.Findings), plural(len(e.Findings)))
	}
	for _, f := range e.Findings {
		p.f("  %s\n", f)
	}
	for _, l := range e.Lanes {
		if c := l.Cases; c != nil {
			n := c.Counts
			p.f("  lane %s (cases): %d cases, %d PASS, %d FAIL, %d ERROR, %d SKIP", l.Name, n.Total, n.Pass, n.Fail, n.Error, n.Skip)
			if n.Invalid > 0 {
				p.f(", %d invalid", n.Invalid)
			}
			p.f("\n")
			for _, r := range c.Results {
				if r.Status != "PASS" && r.Status != "SKIP" {
					p.f("    %s %s %s\n", r.Status, r.ID, r.Message)
				}
			}
		}
		if x := l.Crossover; x != nil {
			p.f("  lane %s (crossover): overall %s\n", l.Name, boardText(x.Overall))
			for _, b := range x.Phases {
				p.f("    phase %s: %s\n", b.Phase, boardText(b))
			}
			for _, w := range x.Workloads {
				if !w.Usable {
					p.f("    workload %s (%s): unusable: %s\n", w.Name, w.Phase, strings.Join(w.Failures, "; "))
					continue
				}
				over := ""
				if w.MaxRobustCV > x.MaxRobustCV {
					over = " OVER"
				}
				p.f("    workload %s (%s): r %.3f, max robust CV %.1f%% (bound %.1f%%)%s\n", w.Name, w.Phase, w.R, 100*w.MaxRobustCV, 100*x.MaxRobustCV, over)
			}
		}
	}
}

// boardText is "geomean 1.234 [1.100, 1.380] over 4 workloads".
func boardText(b stats.Board) string {
	s := fmt.Sprintf("geomean %.3f", b.Geomean)
	if b.Bounded {
		s += fmt.Sprintf(" [%.3f, %.3f]", b.Lo, b.Hi)
	} else {
		s += " (interval unbounded)"
	}
	s += fmt.Sprintf(" over %d workload%s", b.N, plural(b.N))
	if b.Unusable > 0 {
		s += fmt.Sprintf(", %d unusable", b.Unusable)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// printer writes formatted text and keeps the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
