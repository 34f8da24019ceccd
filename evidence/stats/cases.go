package stats

import (
	"cmp"
	"slices"

	"github.com/mkrelease/mkrelease/evidence"
)

// Counts are case counts by status.
type Counts struct {
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Error int `json:"error"`
	Skip  int `json:"skip"`
	// Invalid counts cases whose status is none of PASS, FAIL, ERROR and
	// SKIP, or that have no id.
	Invalid int `json:"invalid"`
}

// add counts one case.
func (c *Counts) add(cs evidence.Case) {
	c.Total++
	switch {
	case !validCase(cs):
		c.Invalid++
	case cs.Status == evidence.StatusPass:
		c.Pass++
	case cs.Status == evidence.StatusFail:
		c.Fail++
	case cs.Status == evidence.StatusError:
		c.Error++
	case cs.Status == evidence.StatusSkip:
		c.Skip++
	}
}

// validCase reports whether a case has an id and a known status.
func validCase(c evidence.Case) bool {
	switch c.Status {
	case evidence.StatusPass, evidence.StatusFail, evidence.StatusError, evidence.StatusSkip:
		return c.ID != ""
	}
	return false
}

// CaseRef names one case.
type CaseRef struct {
	Lane   string `json:"lane"`
	ID     string `json:"id"`
	Tier   string `json:"tier,omitempty"`
	Status string `json:"status"`
}

// CaseSummary counts a run's cases.
type CaseSummary struct {
	// Counts are over every case.
	Counts Counts `json:"counts"`
	// ByTier has the counts per tier; cases without a tier count under
	// the empty key "".
	ByTier map[string]Counts `json:"by_tier"`
	// Failing lists every case that neither passed nor was skipped (FAIL,
	// ERROR and invalid cases), by lane, then id.
	Failing []CaseRef `json:"failing"`
	// Duplicates lists every lane/id that occurs more than once, once
	// each (with the tier and status of its second occurrence), by lane,
	// then id. Each occurrence is counted.
	Duplicates []CaseRef `json:"duplicates"`
}

// Cases counts cases by status and by tier and lists the failing and the
// duplicated ones. It never fails: a case with an unknown status or no id
// is counted as Invalid and listed as failing.
func Cases(cs []evidence.Case) CaseSummary {
	s := CaseSummary{ByTier: map[string]Counts{}, Failing: []CaseRef{}, Duplicates: []CaseRef{}}
	type key struct{ lane, id string }
	seen := map[key]int{}
	for _, c := range cs {
		s.Counts.add(c)
		t := s.ByTier[c.Tier]
		t.add(c)
		s.ByTier[c.Tier] = t
		ref := CaseRef{Lane: c.Lane, ID: c.ID, Tier: c.Tier, Status: c.Status}
		if !validCase(c) || c.Status == evidence.StatusFail || c.Status == evidence.StatusError {
			s.Failing = append(s.Failing, ref)
		}
		k := key{c.Lane, c.ID}
		seen[k]++
		if seen[k] == 2 {
			s.Duplicates = append(s.Duplicates, ref)
		}
	}
	byLaneID := func(a, b CaseRef) int {
		return cmp.Or(cmp.Compare(a.Lane, b.Lane), cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Tier, b.Tier), cmp.Compare(a.Status, b.Status))
	}
	slices.SortStableFunc(s.Failing, byLaneID)
	slices.SortStableFunc(s.Duplicates, byLaneID)
	return s
}
