package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"time"

	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/tarball"
	"github.com/mkrelease/mkrelease/provenance"
)

// Predicate types of the evidence statements.
const (
	TestResultPredicate = "https://in-toto.io/attestation/test-result/v0.1"
	SummaryPredicate    = "https://mkrelease.dev/attestation/verifier-evidence/v1"
)

// testResult is the in-toto test-result predicate (v0.1).
type testResult struct {
	Result        string       `json:"result"` // PASSED, WARNED or FAILED
	Configuration []descriptor `json:"configuration"`
	PassedTests   []string     `json:"passedTests"`
	WarnedTests   []string     `json:"warnedTests,omitempty"`
	FailedTests   []string     `json:"failedTests,omitempty"`
}

type descriptor struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest,omitempty"`
}

// summaryPredicate carries the run identity and every recomputed aggregate.
type summaryPredicate struct {
	RunID    string          `json:"run_id"`
	Target   string          `json:"target"`
	Identity json.RawMessage `json:"identity"`
	Summary  *Summary        `json:"summary"`
}

// pack writes the archive of the staged evidence, its sidecar, and the
// signed statements (one test-result statement per lane, then the summary)
// into the release folder, each file atomically.
func pack(ctx context.Context, o RunOptions, stage string, run store.Run, sum *Summary) (string, string, error) {
	names := dist.NamesOf(o.Config.Project.NormalizedName, o.Config.Project.Version)
	if o.Signer == nil {
		return "", "", errors.New("evidence: no signing key: evidence is always signed")
	}
	var entries []tarball.Entry
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(stage, p)
		entries = append(entries, tarball.Entry{Path: filepath.ToSlash(rel), File: p, Mode: 0o644})
		return nil
	})
	if err != nil {
		return "", "", err
	}
	archive := filepath.Join(o.Dist, names.Evidence(o.Target))
	sha, _, err := tarball.WriteFile(ctx, archive, entries, tarball.Options{Root: names.EvidenceRoot(o.Target), MTime: time.Now().Unix()})
	if err != nil {
		return "", "", fmt.Errorf("evidence: %w", err)
	}
	if err := dist.WriteSidecar(archive, sha); err != nil {
		return "", "", err
	}
	subjects := []provenance.Subject{{Name: filepath.Base(archive), SHA256: sha}}
	for _, w := range run.Wheels {
		subjects = append(subjects, provenance.Subject{Name: w.Name, SHA256: w.SHA256})
	}
	conf := []descriptor{{Name: "release.toml", Digest: map[string]string{"sha256": o.Config.SHA256}}}
	if run.SourcesTreeHash != "" {
		conf = append(conf, descriptor{Name: "verifier", Digest: map[string]string{"sha256": run.SourcesTreeHash}})
	}
	var lines bytes.Buffer
	for _, ls := range sum.Lanes {
		tr := testResultOf(ls)
		tr.Configuration = conf
		line, err := sign(ctx, o.Signer, TestResultPredicate, subjects, tr)
		if err != nil {
			return "", "", err
		}
		lines.Write(line)
	}
	ident, err := run.CanonicalIdentity()
	if err != nil {
		return "", "", err
	}
	line, err := sign(ctx, o.Signer, SummaryPredicate, subjects,
		summaryPredicate{RunID: run.ID, Target: run.Target, Identity: ident, Summary: sum})
	if err != nil {
		return "", "", err
	}
	lines.Write(line)
	statements := filepath.Join(o.Dist, names.EvidenceStatements(o.Target))
	if err := atomicfile.WriteFile(statements, lines.Bytes(), 0o644); err != nil {
		return "", "", err
	}
	if err := dist.WriteSidecar(statements, checksum.Bytes(lines.Bytes())); err != nil {
		return "", "", err
	}
	return archive, statements, nil
}

// sign makes and signs one statement about subjects.
func sign(ctx context.Context, s provenance.Signer, predicateType string, subjects []provenance.Subject, predicate any) ([]byte, error) {
	data, err := provenance.NewStatement(predicateType, subjects, predicate)
	if err != nil {
		return nil, fmt.Errorf("evidence statement: %w", err)
	}
	return provenance.SignStatement(ctx, s, data)
}

// testResultOf turns a lane's recomputed aggregates into a test result:
// cases by status; crossover workloads usable (passed) or not (failed).
func testResultOf(ls LaneSummary) testResult {
	tr := testResult{PassedTests: []string{}}
	switch {
	case ls.Cases != nil:
		failing := map[string]bool{}
		for _, f := range ls.Cases.Failing {
			failing[f.ID] = true
			tr.FailedTests = append(tr.FailedTests, f.ID)
		}
		tr.PassedTests = append(tr.PassedTests, fmt.Sprintf("%s: %d of %d cases passed", ls.Name, ls.Cases.Counts.Pass, ls.Cases.Counts.Total))
		if ls.Cases.Counts.Skip > 0 {
			tr.WarnedTests = append(tr.WarnedTests, fmt.Sprintf("%s: %d cases skipped", ls.Name, ls.Cases.Counts.Skip))
		}
	case ls.Crossover != nil:
		for _, w := range ls.Crossover.Workloads {
			if w.Usable {
				tr.PassedTests = append(tr.PassedTests, fmt.Sprintf("%s r=%.4f", w.Workload, w.R))
			} else {
				tr.FailedTests = append(tr.FailedTests, w.Workload)
			}
		}
	}
	sort.Strings(tr.FailedTests)
	switch {
	case len(tr.FailedTests) > 0:
		tr.Result = "FAILED"
	case len(tr.WarnedTests) > 0:
		tr.Result = "WARNED"
	default:
		tr.Result = "PASSED"
	}
	return tr
}
