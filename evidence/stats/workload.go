package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/mkrelease/mkrelease/evidence"
)

// Reasons a [RetryError] gives.
const (
	// ReasonCandidateRetried: a candidate slot has an attempt other than 1.
	ReasonCandidateRetried = "candidate failures are never retried"
	// ReasonReferenceFailedAfterStartup: a reference slot has an attempt 2
	// although attempt 1 failed, timed out or gave a wrong result after
	// start-up.
	ReasonReferenceFailedAfterStartup = "a reference that failed after start-up is not retried"
	// ReasonReferenceSucceeded: a reference slot has an attempt 2 although
	// attempt 1 was ok.
	ReasonReferenceSucceeded = "a reference that succeeded is not retried"
	// ReasonMoreThanOneRetry: a reference slot has an attempt beyond 2.
	ReasonMoreThanOneRetry = "more than one retry"
	// ReasonRetryWithoutFirst: a slot has a later attempt but no attempt 1.
	ReasonRetryWithoutFirst = "a retry without a first attempt"
)

// Failure reasons, one per outcome other than ok.
const (
	// FailureWrongResult: outcome wrong-result (the result digest differs
	// from the reference's).
	FailureWrongResult = "wrong result"
	// FailureCrash: outcome failure (the worker failed after start-up).
	FailureCrash = "crash"
	// FailureTimeout: outcome timeout (after start-up).
	FailureTimeout = "timeout"
	// FailureStartup: outcome startup-failure of a candidate, of a
	// reference that was not retried, or of a reference's retry.
	FailureStartup = "start-up failure"
)

// RetryError is a breach of the retry rule found by [ChooseAttempts].
type RetryError struct {
	Workload string `json:"workload"`
	Slot     int    `json:"slot"`
	Role     string `json:"role"`
	// Reason is one of the Reason constants.
	Reason string `json:"reason"`
}

// Error implements error.
func (e *RetryError) Error() string {
	return fmt.Sprintf("workload %q slot %d (%s): %s", e.Workload, e.Slot, e.Role, e.Reason)
}

// slotRole is the role of each ABBA slot, indexed by slot.
func slotRole(slot int) string {
	switch slot {
	case 1, 4:
		return evidence.RoleCandidate
	case 2, 3:
		return evidence.RoleReference
	}
	return ""
}

// failureReason maps an outcome to its failure reason ("" for ok, and for
// an unknown outcome).
func failureReason(outcome string) string {
	switch outcome {
	case evidence.OutcomeWrongResult:
		return FailureWrongResult
	case evidence.OutcomeFailure:
		return FailureCrash
	case evidence.OutcomeTimeout:
		return FailureTimeout
	case evidence.OutcomeStartupFailure:
		return FailureStartup
	}
	return ""
}

// workerName names a measurement's worker in errors.
func workerName(m evidence.Measurement) string {
	return fmt.Sprintf("workload %q slot %d (%s) attempt %d", m.Workload, m.Slot, m.Role, m.Attempt)
}

// checkRecord refuses a measurement whose slot, role, attempt or outcome
// is not one the crossover protocol writes.
func checkRecord(m evidence.Measurement) error {
	if m.Slot < 1 || m.Slot > 4 {
		return fmt.Errorf("%s: slot must be 1..4", workerName(m))
	}
	if m.Role != slotRole(m.Slot) {
		return fmt.Errorf("%s: slot %d is a %s slot in ABBA order, record says %q", workerName(m), m.Slot, slotRole(m.Slot), m.Role)
	}
	if m.Attempt < 1 {
		return fmt.Errorf("%s: attempt must be ≥ 1", workerName(m))
	}
	if m.Outcome != evidence.OutcomeOK && failureReason(m.Outcome) == "" {
		return fmt.Errorf("%s: unknown outcome %q", workerName(m), m.Outcome)
	}
	return nil
}

// ChooseAttempts applies the retry rule to one workload's measurements and
// returns, for slots 1..4 in order, the index in ms of the attempt to use:
// attempt 1, or attempt 2 of a reference whose attempt 1 is a
// startup-failure. Every record must belong to the same lane, workload and
// phase and have a valid slot, role, attempt and outcome; every slot must
// have an attempt 1, and no slot may repeat an attempt. A breach of the
// retry rule is a *[RetryError]; other errors name the record.
func ChooseAttempts(ms []evidence.Measurement) ([4]int, error) {
	var chosen [4]int
	if len(ms) == 0 {
		return chosen, fmt.Errorf("no measurements")
	}
	first := ms[0]
	if first.Workload == "" {
		return chosen, fmt.Errorf("measurement of lane %q has no workload name", first.Lane)
	}
	if first.Phase == "" {
		return chosen, fmt.Errorf("workload %q has no phase", first.Workload)
	}
	// bySlot[s-1][a-1] is the index in ms of attempt a of slot s.
	var bySlot [4]map[int]int
	for i, m := range ms {
		if m.Lane != first.Lane || m.Workload != first.Workload || m.Phase != first.Phase {
			return chosen, fmt.Errorf("measurements mix lane/workload/phase %q/%q/%q and %q/%q/%q",
				first.Lane, first.Workload, first.Phase, m.Lane, m.Workload, m.Phase)
		}
		if err := checkRecord(m); err != nil {
			return chosen, err
		}
		s := m.Slot - 1
		if bySlot[s] == nil {
			bySlot[s] = map[int]int{}
		}
		if _, dup := bySlot[s][m.Attempt]; dup {
			return chosen, fmt.Errorf("%s: recorded twice", workerName(m))
		}
		bySlot[s][m.Attempt] = i
	}
	for s := range 4 {
		slot, role := s+1, slotRole(s+1)
		attempts := bySlot[s]
		if len(attempts) == 0 {
			return chosen, fmt.Errorf("workload %q slot %d (%s): no measurement", first.Workload, slot, role)
		}
		retryErr := func(reason string) error {
			return &RetryError{Workload: first.Workload, Slot: slot, Role: role, Reason: reason}
		}
		first1, ok := attempts[1]
		switch {
		case len(attempts) == 1 && ok:
			chosen[s] = first1
			continue
		case role == evidence.RoleCandidate:
			return chosen, retryErr(ReasonCandidateRetried)
		case !ok:
			return chosen, retryErr(ReasonRetryWithoutFirst)
		}
		switch ms[first1].Outcome {
		case evidence.OutcomeStartupFailure:
		case evidence.OutcomeOK:
			return chosen, retryErr(ReasonReferenceSucceeded)
		default:
			return chosen, retryErr(ReasonReferenceFailedAfterStartup)
		}
		second, ok := attempts[2]
		if len(attempts) > 2 || !ok {
			return chosen, retryErr(ReasonMoreThanOneRetry)
		}
		chosen[s] = second
	}
	return chosen, nil
}

// Failure is one chosen attempt that was not ok, which makes its workload
// unusable.
type Failure struct {
	Slot    int    `json:"slot"`
	Role    string `json:"role"`
	Attempt int    `json:"attempt"`
	Outcome string `json:"outcome"`
	// Reason is one of the Failure constants.
	Reason string `json:"reason"`
	// Error is the error text the worker's record carries, if any.
	Error string `json:"error,omitempty"`
}

// WorkerResult is the attempt chosen for one slot of a workload.
type WorkerResult struct {
	Slot int    `json:"slot"`
	Role string `json:"role"`
	// Attempt is the attempt chosen for the slot.
	Attempt int `json:"attempt"`
	// Attempts is how many attempts the slot has in the evidence (2 when
	// a reference start-up was retried).
	Attempts int    `json:"attempts"`
	Outcome  string `json:"outcome"`
	// Stats are the step statistics, present only when Outcome is ok.
	Stats *WorkerStats `json:"stats,omitempty"`
}

// WorkloadResult is everything recomputed for one workload of a crossover
// lane.
type WorkloadResult struct {
	Lane     string `json:"lane"`
	Workload string `json:"workload"`
	Phase    string `json:"phase"`
	// Workers are the chosen attempts, slots 1..4 in order.
	Workers []WorkerResult `json:"workers"`
	// Usable is true when all four chosen attempts are ok; only then are
	// R, MaxCV and MaxRobustCV set.
	Usable bool `json:"usable"`
	// Failures lists each chosen attempt that is not ok, in slot order.
	Failures []Failure `json:"failures,omitempty"`
	// R is sqrt(T_R1·T_R2)/sqrt(T_C1·T_C2): > 1 means the candidate is
	// faster. 0 when not usable.
	R float64 `json:"r"`
	// MaxCV is the largest CV of the four workers.
	MaxCV float64 `json:"max_cv"`
	// MaxRobustCV is the largest robust CV of the four workers.
	MaxRobustCV float64 `json:"max_robust_cv"`
}

// Workload recomputes one workload from its raw measurements (every
// attempt of its four workers, in any order) with the given number of
// warm-ups per worker (normally [DefaultWarmups]). It errors when the
// records break the protocol ([ChooseAttempts]), when any step time of any
// attempt is not finite and > 0, or when an ok worker has too few steps;
// the errors name the worker. Workers that failed do not make an error:
// the result is then not Usable and lists the Failures.
func Workload(ms []evidence.Measurement, warmups int) (WorkloadResult, error) {
	idx, err := ChooseAttempts(ms)
	if err != nil {
		return WorkloadResult{}, err
	}
	for _, m := range ms {
		if err := checkSteps(m.Steps); err != nil {
			return WorkloadResult{}, fmt.Errorf("%s: %w", workerName(m), err)
		}
	}
	attempts := [4]int{}
	for _, m := range ms {
		attempts[m.Slot-1]++
	}
	res := WorkloadResult{Lane: ms[0].Lane, Workload: ms[0].Workload, Phase: ms[0].Phase, Workers: make([]WorkerResult, 4)}
	var logT [4]float64
	for s, i := range idx {
		m := ms[i]
		w := WorkerResult{Slot: m.Slot, Role: m.Role, Attempt: m.Attempt, Attempts: attempts[s], Outcome: m.Outcome}
		if m.Outcome == evidence.OutcomeOK {
			st, err := Worker(m.Steps, warmups)
			if err != nil {
				return WorkloadResult{}, fmt.Errorf("%s: %w", workerName(m), err)
			}
			w.Stats = &st
			logT[s] = math.Log(st.T)
		} else {
			res.Failures = append(res.Failures, Failure{
				Slot: m.Slot, Role: m.Role, Attempt: m.Attempt, Outcome: m.Outcome,
				Reason: failureReason(m.Outcome), Error: m.Error,
			})
		}
		res.Workers[s] = w
	}
	if len(res.Failures) > 0 {
		return res, nil
	}
	// ln r = ½(ln T_R1 + ln T_R2) − ½(ln T_C1 + ln T_C2); logs keep the
	// products from overflowing.
	r := math.Exp(0.5*(logT[1]+logT[2]) - 0.5*(logT[0]+logT[3]))
	if r == 0 || math.IsInf(r, 0) {
		return WorkloadResult{}, fmt.Errorf("workload %q: ratio of the worker means (%g, %g, %g, %g s) is not representable",
			res.Workload, res.Workers[0].Stats.T, res.Workers[1].Stats.T, res.Workers[2].Stats.T, res.Workers[3].Stats.T)
	}
	res.Usable, res.R = true, r
	for _, w := range res.Workers {
		res.MaxCV = max(res.MaxCV, w.Stats.CV)
		res.MaxRobustCV = max(res.MaxRobustCV, w.Stats.RobustCV)
	}
	return res, nil
}

// compareWorkloads orders workloads by name, then lane.
func compareWorkloads(a, b WorkloadResult) int {
	return cmp.Or(cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Lane, b.Lane))
}

// sortedWorkloads returns a sorted copy of rs.
func sortedWorkloads(rs []WorkloadResult) []WorkloadResult {
	s := slices.Clone(rs)
	slices.SortStableFunc(s, compareWorkloads)
	return s
}
