// Package notes writes the release notes publish puts into a channel
// (dist.NotesFile): the changelog's section for the version, as the build
// wrote it into the release folder (and into every bundle), then a
// Validation section generated from the recomputed evidence of each
// released target.
//
// Every figure of the Validation section comes from the evidence as
// evidence/runner.Check recomputed it from the raw records (the Summary of
// its Report, never a summary the archive carries) and from the run
// identity its manifest records (checked against the store and signed):
// per lane, the case counts or the overall and per-phase geometric mean of
// r with its 95 % interval and the worst robust CV; the interpreter; the
// platform; and the sha256 of every wheel the run installed. The bytes are
// a pure function of those facts: no time, no host, fixed number formats
// (r to 4 decimals, robust CV in percent to 2 decimals, as the
// policies quote them), targets in the
// order given, lanes in the evidence's order, wheels by name.
package notes

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/wheel"
)

// Release is what the notes of one published version are made of.
type Release struct {
	// Project and Version name the release.
	Project, Version string
	// Changelog is the changelog's section for the version: the release
	// folder's notes as the build wrote them. Empty when the folder holds
	// none; the notes then begin with a heading naming the release.
	Changelog []byte
	// Targets are the released targets, in release.toml's order.
	Targets []Target
}

// Target is one released target and the check of its evidence.
type Target struct {
	// Name is the target's name.
	Name string
	// Evidence is the base name of its evidence archive.
	Evidence string
	// Report is the audit's check of that archive (nil when the release
	// folder holds none): its Manifest and recomputed Summary.
	Report *runner.Report
}

// Markdown returns the release notes of r.
func Markdown(r Release) []byte {
	var b bytes.Buffer
	changelog := strings.TrimSpace(strings.ReplaceAll(string(r.Changelog), "\r\n", "\n"))
	level := 2
	if changelog == "" {
		fmt.Fprintf(&b, "# %s %s\n", r.Project, r.Version)
	} else {
		b.WriteString(changelog)
		b.WriteString("\n")
		level = headingLevel(changelog) + 1
	}
	h := strings.Repeat("#", min(level, 5))
	fmt.Fprintf(&b, "\n%s Validation\n\n", h)
	b.WriteString("Every figure below is recomputed by mkrelease from the raw records of the signed verifier evidence of each target;\n")
	b.WriteString("r > 1 means this release is faster than the reference. The verification summary of the release signs this file.\n")
	for _, t := range r.Targets {
		writeTarget(&b, h+"#", t)
	}
	return b.Bytes()
}

// headingLevel is the level of the first line of text when it is an ATX
// heading, else 1.
func headingLevel(text string) int {
	first, _, _ := strings.Cut(text, "\n")
	n := len(first) - len(strings.TrimLeft(first, "#"))
	if n < 1 || n > 6 || len(first) > n && first[n] != ' ' && first[n] != '\t' {
		return 1
	}
	return n
}

func writeTarget(b *bytes.Buffer, h string, t Target) {
	fmt.Fprintf(b, "\n%s %s\n\n", h, t.Name)
	rep := t.Report
	if rep == nil || rep.Manifest == nil || rep.Summary == nil {
		fmt.Fprintf(b, "No recomputed evidence (%s).\n", t.Evidence)
		return
	}
	// The check compared this identity with the store's and the signed
	// statements'; one that does not decode quotes nothing.
	id, err := store.ParseIdentity(rep.Manifest.RunID, rep.Manifest.Identity)
	if err != nil {
		id = store.Run{}
	}
	fmt.Fprintf(b, "- Evidence: `%s`, run `%s`\n", t.Evidence, rep.Manifest.RunID)
	fmt.Fprintf(b, "- Interpreter: %s\n", orNone(id.Interpreter))
	fmt.Fprintf(b, "- Platform: %s\n", platform(t.Name, id))
	b.WriteString("\n| lane | board | workloads | result |\n| --- | --- | --- | --- |\n")
	var worst stats.WorkloadSummary // the usable workload of the largest robust CV
	found := false
	for _, l := range rep.Summary.Lanes {
		switch {
		case l.Cases != nil:
			fmt.Fprintf(b, "| %s | cases | | %s |\n", cell(l.Name), cell(Cases(l.Cases)))
		case l.Crossover != nil:
			x := l.Crossover
			fmt.Fprintf(b, "| %s | overall | %s | %s |\n", cell(l.Name), workloads(x.Overall), Board(x.Overall))
			for _, p := range x.Phases {
				fmt.Fprintf(b, "| %s | phase %s | %s | %s |\n", cell(l.Name), cell(p.Phase), workloads(p), Board(p))
			}
			for _, w := range x.Workloads {
				if w.Usable && (!found || w.MaxRobustCV > worst.MaxRobustCV) {
					worst, found = w, true
					worst.Lane = l.Name
				}
			}
		default:
			fmt.Fprintf(b, "| %s | %s | | no records |\n", cell(l.Name), cell(l.Kind))
		}
	}
	if found {
		fmt.Fprintf(b, "\nWorst robust CV: %s (%s/%s).\n", Percent(worst.MaxRobustCV), worst.Lane, worst.Workload)
	}
	b.WriteString("\nWheels tested (sha256):\n\n")
	if len(id.Wheels) == 0 {
		b.WriteString("- none recorded\n")
	}
	for _, w := range id.Wheels { // by name: ParseIdentity normalises
		fmt.Fprintf(b, "- `%s  %s`\n", w.SHA256, w.Name)
	}
}

// platform is the target and the platform tags of the wheels its run
// installed (those not "any"), as the run identity records them.
func platform(target string, id store.Run) string {
	if id.Target != "" {
		target = id.Target
	}
	var tags []string
	for _, w := range id.Wheels {
		fn, err := wheel.ParseFilename(w.Name)
		if err != nil {
			continue
		}
		for p := range strings.SplitSeq(fn.Platform, ".") {
			if p != "any" && !slices.Contains(tags, p) {
				tags = append(tags, p)
			}
		}
	}
	slices.Sort(tags)
	if len(tags) == 0 {
		return target + " (pure Python wheels)"
	}
	return target + " (" + strings.Join(tags, ", ") + ")"
}

// Cases renders a cases lane's counts: "319/319 PASS", then every other
// status counted and the ids of the failing cases.
func Cases(c *stats.CaseSummary) string {
	n := c.Counts
	s := fmt.Sprintf("%d/%d PASS", n.Pass, n.Total)
	for _, o := range []struct {
		n    int
		name string
	}{{n.Fail, "FAIL"}, {n.Error, "ERROR"}, {n.Skip, "SKIP"}, {n.Invalid, "invalid"}} {
		if o.n > 0 {
			s += fmt.Sprintf(", %d %s", o.n, o.name)
		}
	}
	if len(c.Failing) > 0 {
		ids := make([]string, len(c.Failing))
		for i, f := range c.Failing {
			ids[i] = f.ID + " " + f.Status
		}
		s += " (" + strings.Join(ids, ", ") + ")"
	}
	return s
}

// Board renders a board's geometric mean of r and its 95 % interval:
// "r = 1.0344 (95 % interval 1.0123–1.0570)"; an unbounded interval (fewer
// than two usable workloads) is said to be so, and a board of no usable
// workload has no r.
func Board(x stats.Board) string {
	switch {
	case x.N == 0:
		return "no usable workload"
	case !x.Bounded || math.IsInf(x.Hi, 0) || math.IsNaN(x.Hi):
		return fmt.Sprintf("r = %s (95 %% interval unbounded)", R(x.Geomean))
	}
	return fmt.Sprintf("r = %s (95 %% interval %s–%s)", R(x.Geomean), R(x.Lo), R(x.Hi))
}

func workloads(x stats.Board) string {
	if x.Unusable > 0 {
		return fmt.Sprintf("%d (%d unusable)", x.N, x.Unusable)
	}
	return fmt.Sprint(x.N)
}

// R renders a ratio to 4 decimals, as the policies quote it.
func R(r float64) string { return fmt.Sprintf("%.4f", r) }

// Percent renders a fraction as a percentage to 2 decimals, as the
// policies quote a robust CV.
func Percent(f float64) string { return fmt.Sprintf("%.2f%%", 100*f) }

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func orNone(s string) string {
	if s == "" {
		return "not recorded"
	}
	return s
}
