package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/stats"
	"github.com/mkrelease/mkrelease/pipeline"
	"github.com/spf13/cobra"
)

// NewCmdEvidence groups the evidence verbs.
func NewCmdEvidence(f *Factory, g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "evidence",
		Short: "Run the verifier lanes on the built bundles, or import evidence",
		Long: `Evidence shows that the exact wheels of a release work and are fast enough.
"evidence run" installs each target's bundle offline into a fresh virtualenv per
lane and runs the [[evidence.lane]] tables of release.toml; "evidence import"
accepts evidence produced on another machine after checking it.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdEvidenceRun(f, g, nil), NewCmdEvidenceImport(f, g, nil))
	return cmd
}

// EvidenceRunOptions are the inputs of `mkrelease evidence run`.
type EvidenceRunOptions struct {
	Factory    *Factory
	Global     *globalOptions
	Targets    []string
	Lanes      []string
	Dist       string
	Python     string
	Key        string
	JSON       bool
	JSONFields []string
}

// NewCmdEvidenceRun runs the verifier lanes.
func NewCmdEvidenceRun(f *Factory, g *globalOptions, runF func(*EvidenceRunOptions) error) *cobra.Command {
	opts := &EvidenceRunOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the verifier lanes against the exact wheels of each bundle",
		Long: `Run installs the target's bundle from the release folder offline into a fresh
virtualenv per lane and runs the lane there with a clean environment (HOME and
TMPDIR in a scratch folder, fixed locale and hash seed):
  cases      the command writes one JSON line per case to $MKRELEASE_CASES; each
             case's id, status, tier, metrics, tolerance and duration is recorded;
             the lane is stopped after its timeout, or after case_timeout without
             a new case
  crossover  for each workload, fresh candidate, reference, reference, candidate
             workers (ABBA); only a reference that fails during start-up is run
             again, once; every attempt is kept. The whole lane is bounded by its
             lane_timeout (default 30m); on Linux the host's run queue and steal
             time are watched while it runs, and when the machine is too busy for
             timings to mean anything the lane stops within seconds with
             [evidence.host_too_busy]: rerun on an idle machine. The lane's
             max_host_load sets the limit (default 2 runnable tasks per CPU
             beyond its own; 0 turns the watch off)
Every aggregate is recomputed from the raw records. The staged evidence is scanned
for private paths, user and host names and credentials: a hit rejects it, naming
the file and offset. Otherwise NAME-VERSION-verifier-evidence-TARGET.tar.gz, its
sidecar and the signed statements (.intoto.jsonl: an in-toto test-result per
lane and the recomputed summary, subjects the archive and the exact wheels) are
written into the release folder.

The exit status is 0 when every lane passed, 1 when the evidence was written but
a case did not pass or a workload has no usable measurement (or it was rejected,
or a crossover lane was stopped: then nothing is written).`,
		Example: `  mkrelease evidence run
  mkrelease evidence run --target linux-x86_64 --lane semantic --lane throughput
  mkrelease evidence run --dist dist --python /usr/bin/python3.12 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return evidenceRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Targets, "target", "t", nil, "run for this target only (repeatable; default: all)")
	cmd.Flags().StringArrayVarP(&opts.Lanes, "lane", "l", nil, "run this lane only (repeatable; default: all)")
	cmd.Flags().StringVar(&opts.Dist, "dist", "dist", "release folder with the bundles; the evidence is written into it")
	cmd.Flags().StringVar(&opts.Python, "python", "", "interpreter for the virtualenvs (default: the newest supported one found)")
	cmd.Flags().StringVar(&opts.Key, "key", "", "signing key URI for the evidence (default: [signing] key, else the local development key)")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonList,
		"target", "archive", "statements", "passed", "summary")
	return cmd
}

type evidenceRunReport struct {
	Target     string          `json:"target"`
	Archive    string          `json:"archive"`
	Statements string          `json:"statements"`
	Passed     bool            `json:"passed"`
	Summary    *runner.Summary `json:"summary"`
}

func evidenceRun(ctx context.Context, o *EvidenceRunOptions) error {
	s := newSession(o.Factory, o.Global)
	cfg, err := s.config()
	if err != nil {
		return err
	}
	targets, err := selectTargets(cfg, o.Targets)
	if err != nil {
		return err
	}
	eo, err := o.runOptions(ctx, s)
	if err != nil {
		return err
	}
	runs, err := pipeline.Evidence(ctx, eo, targets, len(o.Targets) > 0, skippedTarget(s.log))
	if err != nil {
		return err
	}
	return o.report(runs)
}

// runOptions are the options of the runner, but for the target.
func (o *EvidenceRunOptions) runOptions(ctx context.Context, s *session) (runner.RunOptions, error) {
	cfg, err := s.config()
	if err != nil {
		return runner.RunOptions{}, err
	}
	signer, err := s.signingKey(ctx, o.Key)
	if err != nil {
		return runner.RunOptions{}, err
	}
	return runner.RunOptions{Config: cfg, Dist: o.Dist, Lanes: o.Lanes, Python: o.Python,
		Signer: signer, Getenv: o.Factory.Getenv, Logger: s.log}, nil
}

// skippedTarget warns about a target whose evidence this machine cannot
// run.
func skippedTarget(log *slog.Logger) func(string, *runner.NotRunnableError) {
	return func(t string, nr *runner.NotRunnableError) {
		log.Warn("skipped a target this machine cannot run", "target", t, "wheel", nr.Wheel,
			"remedy", "run `mkrelease evidence run --target "+t+"` on a machine of its platform and `mkrelease evidence import` the result")
	}
}

// report prints each target's lanes and what was written; a lane that did
// not pass is exit status 1.
func (o *EvidenceRunOptions) report(runs []pipeline.EvidenceRun) error {
	var reports []evidenceRunReport
	allPassed := true
	for _, r := range runs {
		passed := lanesPassed(r.Result.Summary)
		allPassed = allPassed && passed
		reports = append(reports, evidenceRunReport{Target: r.Target, Archive: r.Result.Archive, Statements: r.Result.Statements, Passed: passed, Summary: r.Result.Summary})
	}
	if o.JSON {
		if err := writeJSON(o.Factory.IO.Out, reports, o.JSONFields); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			printEvidenceSummary(o.Factory.IO.Out, r.Target, r.Summary)
			fmt.Fprintf(o.Factory.IO.Out, "wrote %s and %s\n", r.Archive, r.Statements)
		}
	}
	if !allPassed {
		if !o.JSON {
			fmt.Fprintln(o.Factory.IO.ErrOut, "mkrelease: evidence written, but not every lane passed: publishing will be refused")
		}
		return &silentError{code: 1}
	}
	return nil
}

// lanesPassed: every case passed (or was skipped) and every workload has a
// usable measurement.
func lanesPassed(s *runner.Summary) bool {
	for _, l := range s.Lanes {
		if l.Cases != nil && len(l.Cases.Failing) > 0 {
			return false
		}
		if l.Crossover != nil && l.Crossover.Unusable > 0 {
			return false
		}
	}
	return true
}

// printEvidenceSummary prints one line per lane and board.
func printEvidenceSummary(w io.Writer, target string, s *runner.Summary) {
	for _, l := range s.Lanes {
		switch {
		case l.Cases != nil:
			n := l.Cases.Counts
			status := "PASS"
			if len(l.Cases.Failing) > 0 {
				status = "FAIL"
			}
			fmt.Fprintf(w, "%-4s  %s %s: %d cases: %d passed, %d failed, %d errors, %d skipped\n", status, target, l.Name, n.Total, n.Pass, n.Fail, n.Error+n.Invalid, n.Skip)
			for _, c := range l.Cases.Failing {
				fmt.Fprintf(w, "        %s %s\n", c.Status, c.ID)
			}
		case l.Crossover != nil:
			x := l.Crossover
			status := "PASS"
			if x.Unusable > 0 {
				status = "FAIL"
			}
			fmt.Fprintf(w, "%-4s  %s %s: %d workloads, %d unusable; %s\n", status, target, l.Name, len(x.Workloads), x.Unusable, board("overall", x.Overall))
			for _, p := range x.Phases {
				fmt.Fprintf(w, "        %s\n", board(p.Phase, p))
			}
			for _, wl := range x.Workloads {
				if !wl.Usable {
					var why []string
					for _, f := range wl.Failures {
						why = append(why, fmt.Sprintf("slot %d %s: %s", f.Slot, f.Role, f.Reason))
					}
					fmt.Fprintf(w, "        unusable %s (%s)\n", wl.Workload, strings.Join(why, "; "))
				}
			}
		}
	}
}

func board(name string, b stats.Board) string {
	if !b.Bounded {
		return fmt.Sprintf("%s r = %.3f (n = %d, no interval)", name, b.Geomean, b.N)
	}
	return fmt.Sprintf("%s r = %.3f [%.3f, %.3f] (n = %d)", name, b.Geomean, b.Lo, b.Hi, b.N)
}

// EvidenceImportOptions are the inputs of `mkrelease evidence import`.
type EvidenceImportOptions struct {
	Factory    *Factory
	Global     *globalOptions
	File       string
	Dist       string
	Keys       []string
	JSON       bool
	JSONFields []string
}

// NewCmdEvidenceImport accepts evidence made elsewhere.
func NewCmdEvidenceImport(f *Factory, g *globalOptions, runF func(*EvidenceImportOptions) error) *cobra.Command {
	opts := &EvidenceImportOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Check evidence produced on another machine and add it to the release folder",
		Long: `Import checks the evidence archive FILE and the signed statements beside it
(FILE's name with .intoto.jsonl) as verify does: the sidecar, a safe extraction,
SHA256SUMS, sanitising, the raw records, the store (integrity, row for row the
same as the records), every aggregate recomputed from the records (a lane's own
summary is never trusted), the run identity against the exact wheels of the
target's bundle in the release folder, and the signatures (a --key, or a key of
[signing] trusted_keys). Only when every check holds are the archive and the
statements copied into the release folder, with fresh sidecars.`,
		Example: `  mkrelease evidence import ~/Downloads/vexl-0.3.0-verifier-evidence-linux-x86_64.tar.gz
  mkrelease evidence import e.tar.gz --dist dist --key verifier.pub`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("evidence import takes one evidence archive (see mkrelease evidence import --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if runF != nil {
				return runF(opts)
			}
			return evidenceImport(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Dist, "dist", "dist", "release folder holding the target's bundle")
	cmd.Flags().StringArrayVar(&opts.Keys, "key", nil, "trusted public key (PEM) for the evidence signatures (repeatable)")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"archive", "checks", "findings", "key_id")
	return cmd
}

func evidenceImport(ctx context.Context, o *EvidenceImportOptions) error {
	keys, err := newSession(o.Factory, o.Global).trustedKeys(o.Keys)
	if err != nil {
		return err
	}
	rep, err := runner.Import(ctx, o.File, runner.ImportOptions{Dist: o.Dist, TrustedKeys: keys})
	if rep == nil {
		return err
	}
	if o.JSON {
		if jerr := writeJSON(o.Factory.IO.Out, rep, o.JSONFields); jerr != nil {
			return jerr
		}
		if err != nil {
			return &silentError{code: exitCode(err)}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if rep.Summary != nil {
		printEvidenceSummary(o.Factory.IO.Out, rep.Manifest.Target, rep.Summary)
	}
	fmt.Fprintf(o.Factory.IO.Out, "imported %s into %s (%d checks hold)\n", o.File, o.Dist, len(rep.Checks))
	return nil
}
