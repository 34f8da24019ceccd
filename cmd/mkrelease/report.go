package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/report"
	"github.com/spf13/cobra"
)

// ReportOptions are the inputs of `mkrelease report`.
type ReportOptions struct {
	Factory *Factory
	Global  *globalOptions
	// Path is the release folder or channel (default dist).
	Path string
	// HTML, when set, is the page to write.
	HTML       string
	JSON       bool
	JSONFields []string
	// Publish holds the flags the decision is made with (--to, --key,
	// --target, --allow-downgrade), as publish --dry-run takes them.
	Publish PublishOptions
}

// NewCmdReport summarises a release folder or a channel.
func NewCmdReport(f *Factory, g *globalOptions, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Factory: f, Global: g, Publish: PublishOptions{Factory: f, Global: g}}
	cmd := &cobra.Command{
		Use:   "report [PATH]",
		Short: "Summarise a release folder or a channel: artifacts, evidence figures, the policy decision",
		Long: `Report summarises a release folder (default dist) or a channel published by
mkrelease publish, on the terminal, as JSON (--json), or as one self-contained
HTML page (--html FILE: inline CSS and SVG plots, nothing loaded from anywhere).

For a release folder it runs the publish gate as publish --dry-run does (with
release.toml, --to or [publish] to, --key, --target; nothing is signed or
written) and shows the artifacts with their digests and whether they verify,
each target's evidence, and the policy decision with every denial. Without a
channel the decision is made as for a first publish. For a channel it shows the
published versions, every asset with its digest, and each version's
verification summary (result and policy); evidence published with a version is
checked and shown too.

Every evidence figure is recomputed from the archive's raw records, never read
from the summaries it carries: per lane the cases and their status; per
crossover workload r, the boards' geometric means with their 95 % intervals (a
dot plot), each worker's step times in ABBA order, every attempt included, and
each worker's CV and robust CV against the policy's bound.

Report describes; it refuses nothing: the exit status is 0 whatever the
decision (publish --dry-run is the gate), 2 for bad input.`,
		Example: `  mkrelease report
  mkrelease report dist --html report.html --key release.pub
  mkrelease report /srv/channel --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("report takes one release folder or channel, got %d paths (see mkrelease report --help)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path = "dist"
			if len(args) == 1 {
				opts.Path = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	addPublishFlags(cmd, &opts.Publish)
	// report signs nothing.
	_ = cmd.Flags().MarkHidden("sign-key")
	cmd.Flags().StringArrayVarP(&opts.Publish.Targets, "target", "t", nil, "decide on publishing this target (repeatable; default: every target)")
	cmd.Flags().StringVar(&opts.HTML, "html", "", "also write the report as a self-contained HTML page to `FILE`")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"schema", "kind", "path", "project", "version", "targets", "artifacts", "evidence", "decision", "channel")
	return cmd
}

func reportRun(ctx context.Context, o *ReportOptions) error {
	r, err := o.build(ctx)
	if err != nil {
		return err
	}
	return o.print(r)
}

// build loads the report of o.Path: a channel's, or a release folder's
// through the publish gate's dry run.
func (o *ReportOptions) build(ctx context.Context) (*report.Report, error) {
	st, err := os.Stat(o.Path)
	if err != nil || !st.IsDir() {
		return nil, usageErrorf("%s: no release folder or channel there: run mkrelease build first, or name one (mkrelease report DIR)", o.Path)
	}
	s := newSession(o.Factory, o.Global)
	if audit.IsChannel(o.Path) {
		keys, err := s.trustedKeys(o.Publish.Keys)
		if err != nil {
			return nil, err
		}
		return report.FromChannel(ctx, o.Path, report.ChannelOptions{TrustedKeys: keys})
	}
	p := o.Publish
	p.Dist, p.DryRun = o.Path, true
	opts, err := p.options(ctx, s)
	if err != nil {
		return nil, err
	}
	return report.Release(ctx, opts)
}

// print writes the page (--html), then JSON (--json) or the summary.
func (o *ReportOptions) print(r *report.Report) error {
	if o.HTML != "" {
		var b bytes.Buffer
		if err := report.WriteHTML(&b, r); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(o.HTML, b.Bytes(), 0o644); err != nil {
			return usageErrorf("--html %s: %v", o.HTML, err)
		}
		fmt.Fprintf(o.Factory.IO.ErrOut, "mkrelease: wrote %s\n", o.HTML)
	}
	if o.JSON && o.JSONFields != nil {
		return writeJSON(o.Factory.IO.Out, r, o.JSONFields)
	}
	if o.JSON {
		return report.WriteJSON(o.Factory.IO.Out, r)
	}
	return report.WriteText(o.Factory.IO.Out, r)
}
