package publish

import (
	"crypto"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/policies"
)

// evidenceCheck maps the checks of runner.Check to the facts (and the
// finding categories the default policies quote) of the policy input.
var evidenceCheck = map[string]string{
	runner.CheckSignature:  "signature",
	runner.CheckIdentity:   "identity",
	runner.CheckSanitised:  "sanitised",
	runner.CheckAggregates: "aggregates",
	runner.CheckStore:      "store",
	runner.CheckRecords:    "store",
	runner.CheckSums:       "store",
	runner.CheckArchive:    "store",
	runner.CheckSidecar:    "store",
}

// evidenceFacts turns the audit's check of target's evidence archive
// name (rep; nil when the folder holds no such archive) into the policy
// input's facts. wheels are the exact wheels of the target's bundle (nil
// when the bundle cannot be read), which the audit checked the evidence
// against (without them, its identity check failed); they must also be
// the published ones (digests, by file name).
func evidenceFacts(name, target string, checked *runner.Report, wheels, digests map[string]string, keys []crypto.PublicKey) policies.Evidence {
	e := policies.Evidence{Target: target, File: name}
	if checked == nil {
		return e
	}
	e.Present = true
	rep := *checked
	rep.Findings = slices.Clone(checked.Findings)
	e.KeyID = rep.KeyID
	e.SignedByTrustedKey, e.WheelsMatch, e.Sanitised, e.StoreIntact, e.AggregatesMatch = true, true, true, true, true
	if len(keys) == 0 {
		rep.Findings = append(rep.Findings, runner.Finding{Check: runner.CheckSignature, File: name, Msg: "no trusted key to check the signatures with: pass --key PUB.pem or list it in [signing] trusted_keys"})
	}
	// The wheels published beside the bundle must be the ones in it, which
	// the evidence was taken on.
	for _, w := range slices.Sorted(maps.Keys(wheels)) {
		sha := wheels[w]
		if got, ok := digests[w]; ok && got != sha {
			rep.Findings = append(rep.Findings, runner.Finding{Check: runner.CheckIdentity, File: w,
				Msg: fmt.Sprintf("sha256 %s, but the evidence was taken on the wheel in the bundle, sha256 %s: the wheel changed after the evidence was taken; rebuild and run the evidence again", got, sha)})
		}
	}
	for _, f := range rep.Findings {
		cat, ok := evidenceCheck[f.Check]
		if !ok {
			cat = "store"
		}
		msg := f.Msg
		if cat != f.Check {
			msg = f.Check + ": " + f.Msg
		}
		e.Findings = append(e.Findings, policies.EvidenceFinding{Check: cat, File: f.File, Message: msg})
		switch cat {
		case "signature":
			e.SignedByTrustedKey = false
		case "identity":
			e.WheelsMatch = false
		case "sanitised":
			e.Sanitised = false
		case "aggregates":
			e.AggregatesMatch = false
		default:
			e.StoreIntact = false
		}
	}
	if !e.SignedByTrustedKey {
		e.KeyID = "" // the findings name the keys that signed
	}
	if rep.Summary != nil {
		e.Lanes = lanes(rep.Summary)
	}
	return e
}

// lanes converts recomputed summaries into the policy input's lanes.
func lanes(s *runner.Summary) []policies.Lane {
	var out []policies.Lane
	for _, l := range s.Lanes {
		pl := policies.Lane{Name: l.Name, Kind: l.Kind}
		if c := l.Cases; c != nil {
			pc := &policies.Cases{Total: c.Counts.Total, Pass: c.Counts.Pass, Fail: c.Counts.Fail, Error: c.Counts.Error, Skip: c.Counts.Skip, Invalid: c.Counts.Invalid}
			for _, f := range c.Failing {
				pc.Failing = append(pc.Failing, policies.FailingCase{ID: f.ID, Status: f.Status})
			}
			pl.Cases = pc
		}
		if x := l.Crossover; x != nil {
			px := &policies.Crossover{Overall: board(x.Overall)}
			for _, b := range x.Phases {
				px.Phases = append(px.Phases, board(b))
			}
			for _, w := range x.Workloads {
				pw := policies.Workload{Workload: w.Workload, Phase: w.Phase, R: w.R, Usable: w.Usable, MaxRobustCV: w.MaxRobustCV}
				for _, f := range w.Failures {
					pw.Failures = append(pw.Failures, fmt.Sprintf("slot %d %s: %s", f.Slot, f.Role, f.Reason))
				}
				px.Workloads = append(px.Workloads, pw)
			}
			pl.Crossover = px
		}
		out = append(out, pl)
	}
	return out
}

func board(b stats.Board) policies.Board {
	pb := policies.Board{Phase: b.Phase, Geomean: b.Geomean, Lo: b.Lo, N: b.N, Bounded: b.Bounded, Unusable: b.Unusable}
	if !math.IsInf(b.Hi, 1) && !math.IsNaN(b.Hi) {
		hi := b.Hi
		pb.Hi = &hi
	}
	return pb
}
