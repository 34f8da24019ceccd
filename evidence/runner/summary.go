package runner

import (
	"fmt"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/stats"
)

// SummarySchema identifies the summary.json format.
const SummarySchema = "https://mkrelease.dev/schemas/evidence-summary/v1"

// Summary is every aggregate of a run, recomputed from the raw records
// (package stats): never read from what a lane says of itself.
type Summary struct {
	Schema string        `json:"schema"`
	Lanes  []LaneSummary `json:"lanes"`
}

// LaneSummary is one lane's aggregates.
type LaneSummary struct {
	Name      string             `json:"name"`
	Kind      string             `json:"kind"`
	Cases     *stats.CaseSummary `json:"cases,omitempty"`
	Crossover *stats.Summary     `json:"crossover,omitempty"`
}

// Lane returns the summary of the lane named name.
func (s *Summary) Lane(name string) (LaneSummary, bool) {
	for _, l := range s.Lanes {
		if l.Name == name {
			return l, true
		}
	}
	return LaneSummary{}, false
}

// LaneSpec is what recomputing a lane needs to know of it.
type LaneSpec struct {
	Name, Kind string
	Warmups    int
	Workloads  []config.Workload
}

// Specs turns configured lanes into specs.
func Specs(lanes []config.Lane) []LaneSpec {
	out := make([]LaneSpec, len(lanes))
	for i, l := range lanes {
		out[i] = LaneSpec{Name: l.Name, Kind: l.Kind, Warmups: l.Warmups, Workloads: l.Workloads}
	}
	return out
}

// Recompute computes every lane's aggregates from its raw records.
func Recompute(lanes []config.Lane, cases []evidence.Case, ms []evidence.Measurement) (*Summary, error) {
	return RecomputeSpecs(Specs(lanes), cases, ms)
}

// RecomputeSpecs is Recompute from lane specs (as an evidence manifest
// records them).
func RecomputeSpecs(lanes []LaneSpec, cases []evidence.Case, ms []evidence.Measurement) (*Summary, error) {
	s := &Summary{Schema: SummarySchema}
	for _, l := range lanes {
		ls := LaneSummary{Name: l.Name, Kind: l.Kind}
		switch l.Kind {
		case config.LaneCases:
			var mine []evidence.Case
			for _, c := range cases {
				if c.Lane == l.Name {
					mine = append(mine, c)
				}
			}
			cs := stats.Cases(mine)
			ls.Cases = &cs
		case config.LaneCrossover:
			byWorkload := map[string][]evidence.Measurement{}
			for _, m := range ms {
				if m.Lane == l.Name {
					byWorkload[m.Workload] = append(byWorkload[m.Workload], m)
				}
			}
			var results []stats.WorkloadResult
			for _, w := range l.Workloads {
				wms := byWorkload[w.Name]
				if len(wms) == 0 {
					return nil, fmt.Errorf("lane %s: workload %s has no measurement", l.Name, w.Name)
				}
				res, err := stats.Workload(wms, l.Warmups)
				if err != nil {
					return nil, fmt.Errorf("lane %s: workload %s: %w", l.Name, w.Name, err)
				}
				results = append(results, res)
			}
			board, err := stats.Boards(results)
			if err != nil {
				return nil, fmt.Errorf("lane %s: %w", l.Name, err)
			}
			ls.Crossover = &board
		}
		s.Lanes = append(s.Lanes, ls)
	}
	return s, nil
}
