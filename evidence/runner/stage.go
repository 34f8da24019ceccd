package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// StoreFile is the name of the SQLite store in the evidence.
const StoreFile = "evidence.sqlite3"

// writeStage lays out the evidence folder:
//
//	manifest.json           run identity, lanes, protocol, sanitised environment
//	summary.json            every aggregate, recomputed from the records
//	LANE/cases.jsonl        the raw records (cases lanes) or
//	LANE/measurements.jsonl   (crossover lanes)
//	LANE/summary.json       the lane's aggregates
//	LANE/report.md          the same for people
//	evidence.sqlite3        runs, cases and measurements
//	SHA256SUMS              every file above
//
// host is the watch of the host's load the crossover lanes ran under
// (each lane's own limits are recorded in its manifest entry).
func writeStage(dir string, c *config.Config, target string, run store.Run, lanes []config.Lane, host hostWatch, cases []evidence.Case, ms []evidence.Measurement, sum *Summary, started, finished time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ident, err := run.CanonicalIdentity()
	if err != nil {
		return fmt.Errorf("evidence: run identity: %w", err)
	}
	m := Manifest{Schema: ManifestSchema, Project: c.Project.NormalizedName, Version: c.Project.Version, Target: target,
		RunID: run.ID, Started: started.Format(time.RFC3339), Finished: finished.Format(time.RFC3339), Identity: ident}
	for _, l := range lanes {
		ml := ManifestLane{Name: l.Name, Kind: l.Kind, Timeout: l.Timeout.Duration.String(), Env: l.Env, CandidateEnv: l.CandidateEnv, ReferenceEnv: l.ReferenceEnv}
		sub := filepath.Join(dir, l.Name)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		var records bytes.Buffer
		enc := json.NewEncoder(&records)
		file := "cases.jsonl"
		switch l.Kind {
		case config.LaneCases:
			for _, cs := range cases {
				if cs.Lane == l.Name {
					if err := enc.Encode(cs); err != nil {
						return err
					}
				}
			}
		case config.LaneCrossover:
			file = "measurements.jsonl"
			ml.Steps, ml.Warmups, ml.Workloads = l.Steps, l.Warmups, l.Workloads
			ml.HostWatch = host.record(l)
			for _, x := range ms {
				if x.Lane == l.Name {
					if err := enc.Encode(x); err != nil {
						return err
					}
				}
			}
		}
		ls, _ := sum.Lane(l.Name)
		files := map[string][]byte{file: records.Bytes(), "report.md": report(ls)}
		js, err := json.MarshalIndent(ls, "", "  ")
		if err != nil {
			return err
		}
		files["summary.json"] = append(js, '\n')
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(sub, name), data, 0o644); err != nil {
				return err
			}
			ml.Files = append(ml.Files, l.Name+"/"+name)
		}
		sort.Strings(ml.Files)
		m.Lanes = append(m.Lanes, ml)
	}
	for name, v := range map[string]any{dist.ManifestFile: m, "summary.json": sum} {
		js, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(js, '\n'), 0o644); err != nil {
			return err
		}
	}
	if err := store.Write(filepath.Join(dir, StoreFile), run, cases, ms); err != nil {
		return fmt.Errorf("evidence: store: %w", err)
	}
	return writeSums(dir)
}

// writeSums writes SHA256SUMS over every other file of dir.
func writeSums(dir string) error {
	var sums checksum.Sums
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == dist.ChecksumsFile {
			return nil
		}
		sha, _, err := checksum.File(p)
		if err != nil {
			return err
		}
		sums = append(sums, checksum.Sum{Name: rel, SHA256: sha})
		return nil
	})
	if err != nil {
		return err
	}
	return checksum.WriteSums(filepath.Join(dir, dist.ChecksumsFile), sums)
}

// report renders a lane's summary for people.
func report(l LaneSummary) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Lane %s (%s)\n\n", l.Name, l.Kind)
	if cs := l.Cases; cs != nil {
		n := cs.Counts
		fmt.Fprintf(&b, "| total | PASS | FAIL | ERROR | SKIP |\n| --- | --- | --- | --- | --- |\n| %d | %d | %d | %d | %d |\n\n", n.Total, n.Pass, n.Fail, n.Error, n.Skip)
		if len(cs.Failing) == 0 {
			b.WriteString("Every case passed or was skipped.\n")
		} else {
			b.WriteString("Failing cases:\n\n")
			for _, f := range cs.Failing {
				fmt.Fprintf(&b, "- `%s` %s\n", f.ID, f.Status)
			}
		}
	}
	if x := l.Crossover; x != nil {
		b.WriteString("r > 1: the candidate is faster. Each r is sqrt(T_R1·T_R2)/sqrt(T_C1·T_C2) over fresh workers in ABBA order.\n\n")
		b.WriteString("| workload | phase | r | max robust CV | status |\n| --- | --- | --- | --- | --- |\n")
		for _, w := range x.Workloads {
			status := "ok"
			if !w.Usable {
				var why []string
				for _, f := range w.Failures {
					why = append(why, fmt.Sprintf("slot %d %s", f.Slot, f.Outcome))
				}
				status = "unusable: " + strings.Join(why, ", ")
			}
			fmt.Fprintf(&b, "| %s | %s | %.3f | %.1f %% | %s |\n", w.Workload, w.Phase, w.R, 100*w.MaxRobustCV, status)
		}
		b.WriteString("\n| board | n | geometric mean | 95 % interval |\n| --- | --- | --- | --- |\n")
		for _, bd := range append(append([]stats.Board(nil), x.Phases...), x.Overall) {
			name, interval := bd.Phase, "unbounded (fewer than 2 workloads)"
			if name == "" {
				name = "overall"
			}
			if bd.Bounded {
				interval = fmt.Sprintf("%.3f – %.3f", bd.Lo, bd.Hi)
			}
			fmt.Fprintf(&b, "| %s | %d | %.3f | %s |\n", name, bd.N, bd.Geomean, interval)
		}
	}
	return []byte(b.String())
}
