package evidence

// The raw records of a verifier run. Lanes write them (cases) or mkrelease
// writes them while it orchestrates workers (measurements); every aggregate
// is recomputed from them, never read from a lane's own summary.

// Case statuses.
const (
	StatusPass  = "PASS"
	StatusFail  = "FAIL"
	StatusError = "ERROR"
	StatusSkip  = "SKIP"
)

// Case is one line of a cases lane's cases.jsonl, as the lane's command
// writes it.
type Case struct {
	Lane      string             `json:"lane"`
	ID        string             `json:"id"`
	Status    string             `json:"status"` // PASS, FAIL, ERROR or SKIP
	Tier      string             `json:"tier,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"`
	Tolerance map[string]float64 `json:"tolerance,omitempty"`
	Duration  float64            `json:"duration_s"`
	Message   string             `json:"message,omitempty"`
}

// Worker roles in a crossover lane.
const (
	RoleCandidate = "candidate"
	RoleReference = "reference"
)

// Worker attempt outcomes.
const (
	OutcomeOK             = "ok"
	OutcomeStartupFailure = "startup-failure" // exited or timed out before reporting ready
	OutcomeFailure        = "failure"         // failed after start-up
	OutcomeTimeout        = "timeout"         // after start-up
	OutcomeWrongResult    = "wrong-result"    // result digest differs from the reference's
)

// Measurement is one worker attempt of a crossover lane: one line of its
// measurements.jsonl. A workload runs four workers in ABBA order: slot 1
// candidate, 2 reference, 3 reference, 4 candidate; a reference worker that
// fails during start-up is retried once (attempt 2), and both attempts are
// kept.
type Measurement struct {
	Lane         string    `json:"lane"`
	Workload     string    `json:"workload"`
	Phase        string    `json:"phase"`
	Role         string    `json:"role"`    // candidate or reference
	Slot         int       `json:"slot"`    // 1..4, ABBA order
	Attempt      int       `json:"attempt"` // 1, or 2 for a retried reference start-up
	Outcome      string    `json:"outcome"`
	Steps        []float64 `json:"steps_s"` // seconds per step, in order, warm-ups included
	ResultSHA256 string    `json:"result_sha256,omitempty"`
	Error        string    `json:"error,omitempty"`
}
