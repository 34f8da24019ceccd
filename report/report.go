// Package report summarises a release folder or a release channel for
// people (a terminal summary, or one self-contained HTML page with the
// evidence plots) and for programs (the [Report] value as JSON).
//
// A report states facts other stages establish; it checks and decides
// nothing itself. For a release folder the facts come from a dry run of
// the publish gate (package publish): the artifacts and their digests as
// verified, every target's evidence as checked, the policy decision and
// every denial; nothing is signed or written. Every figure of the
// evidence is recomputed from the raw records of the archive (package
// evidence/stats), never read from the summaries the archive carries: the
// boards from the check's recomputed summary, the per-worker statistics
// by stats.Workload over the same records, and the step-time traces are
// the records themselves, every attempt included.
//
// For a channel the report lists the published versions with every asset
// and its digest, and each version's verification summary (result and
// policy); an evidence archive published with a version is checked and
// reported as for a release folder.
//
// The output is a function of its input: lists are sorted, and no clock,
// host or random value is read, so the same input gives the same bytes.
// The HTML page holds its CSS and its plots (SVG, written here) inline; it
// loads no script, style sheet, font or image from anywhere.
package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/policies"
)

// Schema identifies the JSON format of a [Report].
const Schema = "https://mkrelease.dev/schemas/report/v1"

// Kinds of report.
const (
	KindRelease = "release"
	KindChannel = "channel"
)

// Report is what mkrelease report shows, and what --json prints. Its JSON
// field names are a contract (see TestJSONFields); every list is encoded,
// as [] when empty.
type Report struct {
	// Schema is [Schema].
	Schema string `json:"schema"`
	// Kind is KindRelease or KindChannel.
	Kind string `json:"kind"`
	// Path is the folder reported on, as given.
	Path string `json:"path"`
	// Project is the normalised project name; Version the release's
	// version (empty for a channel).
	Project string `json:"project"`
	Version string `json:"version"`
	// Targets are the targets of the release the decision is about.
	Targets []string `json:"targets"`
	// Artifacts are the release's files with their digests and whether
	// they verified, by name (a release folder only).
	Artifacts []Artifact `json:"artifacts"`
	// Evidence has one entry per target (per version and target for a
	// channel), with every figure recomputed from the raw records.
	Evidence []Evidence `json:"evidence"`
	// Decision is the release policies' verdict on publishing the folder
	// (a release folder only).
	Decision *Decision `json:"decision,omitempty"`
	// Channel is what the channel holds (a channel only).
	Channel *Channel `json:"channel,omitempty"`
}

// Artifact is one file of a release folder.
type Artifact struct {
	Name string `json:"name"`
	// Kind is the artifact's kind ("wheel", "bundle", "sbom", …).
	Kind string `json:"kind"`
	// Target is the target it is for; "" when it is for every target.
	Target string `json:"target"`
	SHA256 string `json:"sha256"`
	// Verified says every check of it held; Findings say what did not.
	Verified bool     `json:"verified"`
	Findings []string `json:"findings"`
}

// Evidence is one evidence archive and what checking it established.
type Evidence struct {
	// Version is the published version it belongs to (a channel only).
	Version string `json:"version,omitempty"`
	Target  string `json:"target"`
	// File is the archive's name (or the name it was expected under).
	File string `json:"file"`
	// Present says the archive was found.
	Present bool `json:"present"`
	// OK says every check of it held; Findings say what did not
	// ("check: file: message").
	OK       bool     `json:"ok"`
	Findings []string `json:"findings"`
	// Lanes are its lanes, in the order the run declares them.
	Lanes []Lane `json:"lanes"`
}

// Lane is one lane of an evidence run.
type Lane struct {
	Name string `json:"name"`
	// Kind is "cases" or "crossover"; the field of that name is set.
	Kind      string     `json:"kind"`
	Cases     *Cases     `json:"cases,omitempty"`
	Crossover *Crossover `json:"crossover,omitempty"`
}

// Cases are a cases lane's results.
type Cases struct {
	// Counts are by status, over every case.
	Counts stats.Counts `json:"counts"`
	// Results are every case, by id (then tier, then status).
	Results []Case `json:"results"`
}

// Case is one case's result as its record states it.
type Case struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	Tier      string  `json:"tier"`
	DurationS float64 `json:"duration_s"`
	Message   string  `json:"message"`
}

// Crossover is a crossover lane's figures.
type Crossover struct {
	// Overall and Phases are the boards: the geometric mean of r with
	// its 95 % interval (null bounds when unbounded).
	Overall stats.Board   `json:"overall"`
	Phases  []stats.Board `json:"phases"`
	// Workloads are every workload, by name.
	Workloads []Workload `json:"workloads"`
	// MaxRobustCV is the policy's bound on every worker's robust CV.
	MaxRobustCV float64 `json:"max_robust_cv"`
	// MinWorkload is the policy's least r of a workload.
	MinWorkload float64 `json:"min_workload"`
}

// Workload is one workload of a crossover lane.
type Workload struct {
	Name  string `json:"name"`
	Phase string `json:"phase"`
	// Usable is true when all four chosen workers succeeded; only then
	// are R, MaxCV and MaxRobustCV set.
	Usable      bool    `json:"usable"`
	R           float64 `json:"r"`
	MaxCV       float64 `json:"max_cv"`
	MaxRobustCV float64 `json:"max_robust_cv"`
	// Failures say why it is not usable ("slot 1 candidate: crash").
	Failures []string `json:"failures"`
	// Workers are every worker attempt recorded, by slot (ABBA order:
	// 1 candidate, 2 reference, 3 reference, 4 candidate), then attempt.
	Workers []Worker `json:"workers"`
}

// Worker is one worker attempt and its step times.
type Worker struct {
	Slot    int    `json:"slot"`
	Role    string `json:"role"`
	Attempt int    `json:"attempt"`
	// Chosen says this attempt is the one the statistics use for its
	// slot (a failed reference start-up's retry replaces attempt 1).
	Chosen  bool   `json:"chosen"`
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
	// StepsS are the step times in seconds, warm-ups included, as
	// recorded.
	StepsS []float64 `json:"steps_s"`
	// Dropped are the indices in StepsS left out of the statistics (the
	// warm-ups, then the slowest step); set for a chosen ok attempt.
	Dropped []int `json:"dropped"`
	// TS, CV and RobustCV are the worker's mean step time, CV and robust
	// CV (set for a chosen ok attempt).
	TS       float64 `json:"t_s"`
	CV       float64 `json:"cv"`
	RobustCV float64 `json:"robust_cv"`
	// OverBound says RobustCV exceeds the policy's bound.
	OverBound bool `json:"over_bound"`
}

// Decision is the release policies' verdict.
type Decision struct {
	// Allow is true when no policy denies the release.
	Allow bool `json:"allow"`
	// Channel is the channel the decision was made against ("" when
	// none was configured: the decision is then as for a first publish).
	Channel string `json:"channel"`
	// Denials are every reason to refuse, in report order.
	Denials []policies.Denial `json:"denials"`
	// Remedies say what to do about each default rule denied, in report
	// order (see [policies.Remedies]).
	Remedies []policies.Remedy `json:"remedies"`
	// Policies are the modules evaluated, with their digests.
	Policies []policies.PolicyDigest `json:"policies"`
}

// Channel is what a release channel holds.
type Channel struct {
	// Generation is the published generation the channel shows.
	Generation int `json:"generation"`
	// Newest is the highest published version.
	Newest string `json:"newest"`
	// Versions are the published versions, ascending (PEP 440).
	Versions []Version `json:"versions"`
}

// Version is one published version.
type Version struct {
	Version string `json:"version"`
	// Assets are every published file, by name.
	Assets []Asset `json:"assets"`
	// VSA is the version's verification summary; nil when none is
	// published.
	VSA *VSA `json:"vsa"`
}

// Asset is one published file.
type Asset struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// VSA is what a version's verification summary says.
type VSA struct {
	File string `json:"file"`
	// SignatureVerified says a trusted key's signature verified; when it
	// did not (or no key was given), the rest is what the unverified
	// statement says and Finding says why.
	SignatureVerified bool   `json:"signature_verified"`
	Finding           string `json:"finding"`
	// Result is PASSED or FAILED.
	Result string `json:"result"`
	// PolicyURI and PolicySHA256 name the policy set that was applied.
	PolicyURI    string `json:"policy_uri"`
	PolicySHA256 string `json:"policy_sha256"`
	// Subjects is how many artifacts it covers.
	Subjects int `json:"subjects"`
}

// Bounds are the policy thresholds the plots draw.
type Bounds struct {
	// MaxRobustCV bounds every worker's robust CV; MinWorkload is the
	// least r of a workload.
	MaxRobustCV, MinWorkload float64
}

// DefaultBounds are the default policies' thresholds.
func DefaultBounds() Bounds {
	p := policies.DefaultParameters()
	return Bounds{MaxRobustCV: p.MaxRobustCV, MinWorkload: p.MinWorkload}
}

// EvidenceOf reports one evidence archive from its check (nil when the
// archive is absent): the findings, the lanes of the check's recomputed
// summary, each case as recorded, and each crossover workload's workers
// recomputed by stats.Workload from the archive's raw records (the traces
// are those records).
func EvidenceOf(target, file string, checked *runner.Report, b Bounds) Evidence {
	e := Evidence{Target: target, File: file, Findings: []string{}, Lanes: []Lane{}}
	if checked == nil {
		return e
	}
	e.Present = true
	e.OK = len(checked.Findings) == 0
	for _, f := range checked.Findings {
		s := f.Check + ": "
		if f.File != "" {
			s += f.File + ": "
		}
		e.Findings = append(e.Findings, s+f.Msg)
	}
	if checked.Summary == nil {
		return e
	}
	warmups := map[string]int{}
	if checked.Manifest != nil {
		for _, l := range checked.Manifest.Lanes {
			warmups[l.Name] = l.Warmups
		}
	}
	for _, ls := range checked.Summary.Lanes {
		l := Lane{Name: ls.Name, Kind: ls.Kind}
		if ls.Cases != nil {
			l.Cases = casesOf(ls.Name, *ls.Cases, checked.Cases)
		}
		if ls.Crossover != nil {
			l.Crossover = crossoverOf(ls.Name, *ls.Crossover, checked.Measurements, warmups[ls.Name], b)
		}
		e.Lanes = append(e.Lanes, l)
	}
	return e
}

func casesOf(lane string, s stats.CaseSummary, all []evidence.Case) *Cases {
	c := &Cases{Counts: s.Counts, Results: []Case{}}
	for _, r := range all {
		if r.Lane == lane {
			c.Results = append(c.Results, Case{ID: r.ID, Status: r.Status, Tier: r.Tier, DurationS: r.Duration, Message: r.Message})
		}
	}
	slices.SortStableFunc(c.Results, func(a, b Case) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Status, b.Status))
	})
	return c
}

func crossoverOf(lane string, s stats.Summary, all []evidence.Measurement, warmups int, b Bounds) *Crossover {
	x := &Crossover{Overall: s.Overall, Phases: slices.Clone(s.Phases), Workloads: []Workload{}, MaxRobustCV: b.MaxRobustCV, MinWorkload: b.MinWorkload}
	if x.Phases == nil {
		x.Phases = []stats.Board{}
	}
	byWorkload := map[string][]evidence.Measurement{}
	for _, m := range all {
		if m.Lane == lane {
			byWorkload[m.Workload] = append(byWorkload[m.Workload], m)
		}
	}
	for _, ws := range s.Workloads {
		w := Workload{Name: ws.Workload, Phase: ws.Phase, Usable: ws.Usable, R: ws.R, MaxCV: ws.MaxCV, MaxRobustCV: ws.MaxRobustCV,
			Failures: []string{}, Workers: []Worker{}}
		for _, f := range ws.Failures {
			w.Failures = append(w.Failures, fmt.Sprintf("slot %d %s: %s", f.Slot, f.Role, f.Reason))
		}
		ms := byWorkload[ws.Workload]
		// The summary was recomputed from these records, so this holds;
		// without it the traces are still the records.
		res, _ := stats.Workload(ms, warmups)
		for _, m := range ms {
			wk := Worker{Slot: m.Slot, Role: m.Role, Attempt: m.Attempt, Outcome: m.Outcome, Error: m.Error,
				StepsS: slices.Clone(m.Steps), Dropped: []int{}}
			if wk.StepsS == nil {
				wk.StepsS = []float64{}
			}
			for _, r := range res.Workers {
				if r.Slot == m.Slot && r.Attempt == m.Attempt {
					wk.Chosen = true
					if r.Stats != nil {
						wk.Dropped = r.Stats.Dropped()
						wk.TS, wk.CV, wk.RobustCV = r.Stats.T, r.Stats.CV, r.Stats.RobustCV
						wk.OverBound = r.Stats.RobustCV > b.MaxRobustCV
					}
				}
			}
			w.Workers = append(w.Workers, wk)
		}
		slices.SortStableFunc(w.Workers, func(a, b Worker) int {
			return cmp.Or(cmp.Compare(a.Slot, b.Slot), cmp.Compare(a.Attempt, b.Attempt))
		})
		x.Workloads = append(x.Workloads, w)
	}
	slices.SortStableFunc(x.Workloads, func(a, b Workload) int { return cmp.Compare(a.Name, b.Name) })
	return x
}
