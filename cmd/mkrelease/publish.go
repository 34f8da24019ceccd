package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/pipeline"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/publish"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
	"github.com/spf13/cobra"
)

// PublishOptions are the inputs of `mkrelease publish`.
type PublishOptions struct {
	Factory        *Factory
	Global         *globalOptions
	To             string
	Dist           string
	Targets        []string
	Keys           []string
	SignKey        string
	AllowDowngrade bool
	DryRun         bool
	JSON           bool
	JSONFields     []string

	// states keeps the state of the channel this publish made (options
	// sets it).
	states *channelStates
}

// NewCmdPublish gates and publishes a built release.
func NewCmdPublish(f *Factory, g *globalOptions, runF func(*PublishOptions) error) *cobra.Command {
	opts := &PublishOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "publish",
		Short: "Verify the release, evaluate the release policies, and publish it atomically",
		Long: `Publish verifies everything in the release folder (as verify does), checks the
provenance and each target's verifier evidence against the exact wheels of its
bundle (every figure recomputed from the raw records), and evaluates the release
policies (policies/ in mkrelease, thresholds and further .rego files from
[policy] in release.toml) on that input. Every denial is printed and nothing is
published (exit status 1).

When the policies allow the release it signs a SLSA verification summary
(NAME-VERSION.vsa.intoto.jsonl) and publishes every asset into the channel
(--to, else [publish] to): releases/VERSION/, a PEP 503 simple/ index with
core-metadata files, find-links.html and index.html. The channel changes in one
rename: a reader, or a kill at any moment, sees the old channel or the new one.
Publishing a version again with the same bytes does nothing; with other bytes
it is refused, as is a version lower than the newest unless --allow-downgrade.

Each generation's channel.json (generation number, time, every file's sha256) is
signed with the same key as the summary (channel.intoto.jsonl). Before anything
is written, the channel's current state must verify with a trusted key (--key,
[signing] trusted_keys, or the signing key's own), and must not be older than the
state this machine last published or verified there (kept in the cache folder,
as verify keeps it): a rolled back or tampered channel is refused (exit 1).

--dry-run prints the decision and the full policy input as JSON and writes
nothing; a --json field selection does not apply to it.`,
		Example: `  mkrelease publish --to /srv/channel
  mkrelease publish --dry-run
  mkrelease publish --target linux-x86_64 --key release.pub --to file:///srv/channel`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			_, err := publishRun(cmd.Context(), opts)
			return err
		},
	}
	addPublishFlags(cmd, opts)
	cmd.Flags().StringVar(&opts.Dist, "dist", "dist", "release folder to publish")
	cmd.Flags().StringArrayVarP(&opts.Targets, "target", "t", nil, "publish this target (repeatable; default: every target)")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the decision and the policy input as JSON; write nothing")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"input", "decision", "assets", "noop", "vsa", "channel", "channel_refused", "skipped_targets")
	return cmd
}

// addPublishFlags adds the flags publish and release share.
func addPublishFlags(cmd *cobra.Command, opts *PublishOptions) {
	cmd.Flags().StringVar(&opts.To, "to", "", "channel: a folder or file:// URL (default: [publish] to)")
	cmd.Flags().StringArrayVar(&opts.Keys, "key", nil, "trusted public key (PEM) for the provenance and evidence signatures (repeatable; [signing] trusted_keys are trusted too)")
	cmd.Flags().StringVar(&opts.SignKey, "sign-key", "", "signing key URI for the verification summary (default: [signing] key, else the local development key)")
	cmd.Flags().BoolVar(&opts.AllowDowngrade, "allow-downgrade", false, "publish even if the version is lower than the newest published")
}

// dryRunReport is what --dry-run prints.
type dryRunReport struct {
	Decision *policies.Decision `json:"decision"`
	Input    policies.Input     `json:"input"`
	Assets   []string           `json:"assets"`
}

func publishRun(ctx context.Context, o *PublishOptions) (*publish.Result, error) {
	if o.DryRun && o.JSONFields != nil {
		return nil, usageErrorf("--dry-run prints its own report (decision, input, assets) whole: drop --json=%s, or drop --dry-run", strings.Join(o.JSONFields, ","))
	}
	s := newSession(o.Factory, o.Global)
	opts, err := o.options(ctx, s)
	if err != nil {
		return nil, err
	}
	res, err := publish.Run(ctx, opts)
	return o.report(opts, res, err)
}

// options resolves publish's flags, with the session's configuration,
// lock and keys, into publish's options (the destination from --to, else
// [publish] to; the extra policy files loaded).
func (o *PublishOptions) options(ctx context.Context, s *session) (publish.Options, error) {
	cfg, err := s.config()
	if err != nil {
		return publish.Options{}, err
	}
	l, err := s.lockIfPresent()
	if err != nil {
		return publish.Options{}, err
	}
	keys, err := s.trustedKeys(o.Keys)
	if err != nil {
		return publish.Options{}, err
	}
	var extra []policies.Module
	if len(cfg.Policy.Files) > 0 {
		// Read beneath the project, and named as configured
		// (project-relative) in denials, digests and the summary: never a
		// path of this machine.
		if extra, err = policies.LoadProjectFiles(cfg.Dir, cfg.Policy.Files); err != nil {
			return publish.Options{}, err
		}
	}
	to := o.To
	if to == "" && cfg.Publish.To != "" {
		to = cfg.Publish.To
		if !strings.HasPrefix(to, "file://") {
			to = filepath.Join(cfg.Dir, filepath.FromSlash(to))
		}
	}
	o.states = newChannelStates(s)
	seen, err := o.states.Seen(to)
	if err != nil {
		return publish.Options{}, err
	}
	opts := publish.Options{
		Config: cfg, Lock: l, Dist: o.Dist, To: to, Targets: o.Targets, TrustedKeys: keys,
		AllowDowngrade: o.AllowDowngrade, DryRun: o.DryRun, Policies: extra, Logger: s.log, Seen: seen,
	}
	if !o.DryRun {
		if opts.Signer, err = s.signingKey(ctx, o.SignKey); err != nil {
			return publish.Options{}, err
		}
	}
	return opts, nil
}

// report prints publish's outcome: the decision and input as JSON for a
// dry run, the result with --json, else where the release went and how to
// install it. Every reason for a refusal (exit status 1) is printed on
// stderr, whatever is printed on stdout.
func (o *PublishOptions) report(opts publish.Options, res *publish.Result, err error) (*publish.Result, error) {
	w, ew := o.Factory.IO.Out, o.Factory.IO.ErrOut
	if res == nil {
		return nil, err
	}
	if o.DryRun {
		if jerr := writeJSON(w, dryRunReport{Decision: res.Decision, Input: res.Input, Assets: res.Assets}, nil); jerr != nil {
			return nil, jerr
		}
		if err != nil {
			printRefusal(ew, err)
			return res, &silentError{code: exitCode(err)}
		}
		return res, nil
	}
	if o.JSON {
		if jerr := writeJSON(w, res, o.JSONFields); jerr != nil {
			return nil, jerr
		}
		if err != nil {
			// The report's decision may say allow (the channel refused
			// after the policies allowed) and holds no other reason: the
			// refusal goes to stderr, as on a dry run.
			printRefusal(ew, err)
			return res, &silentError{code: exitCode(err)}
		}
		return res, o.keepState(opts, res)
	}
	if err != nil {
		printRefusal(ew, err)
		return res, &silentError{code: exitCode(err)}
	}
	if err := o.keepState(opts, res); err != nil {
		return res, err
	}
	for _, t := range res.Skipped {
		opts.Logger.Warn("target not published", "target", t)
	}
	printPublished(w, opts.Config, opts.To, res)
	return res, nil
}

// keepState keeps the state of the channel a publish made (or found, for
// a no-op), for the next publish or verify on this machine to compare with.
// A channel started again says so: its old versions are gone from it.
func (o *PublishOptions) keepState(opts publish.Options, res *publish.Result) error {
	if o.states == nil || res.Channel == nil || res.Channel.Checkpoint == nil {
		return nil
	}
	if old := res.Channel.Plan.Restart; old != nil {
		missing, changed := old.Lost(res.Channel.Checkpoint)
		names := func(vs []channel.CheckpointVersion) string {
			var out []string
			for _, v := range vs {
				out = append(out, v.Version)
			}
			return strings.Join(out, " ")
		}
		opts.Logger.Warn("the channel was empty, but it had been published before: it starts again after the generation seen; "+
			"clients that verified the old channel refuse it for each version it lost or publishes with other assets",
			"channel", res.Channel.Dest, "generation_seen", old.Generation, "now", res.Channel.GenerationNumber,
			"versions_lost", names(missing), "versions_changed", names(changed), "remembered_in", old.File)
	}
	return o.states.Verified(opts.To, res.Channel.Checkpoint)
}

// printRefusal prints every reason a publish was refused, what to do about
// each rule denied, and that nothing was published.
func printRefusal(w io.Writer, err error) {
	var pr *policies.RefusedError
	var cr *channel.RefusedError
	switch {
	case errors.As(err, &pr):
		fmt.Fprintf(w, "mkrelease: publish refused by the release policies (%d reason%s):\n", len(pr.Denials), plural(len(pr.Denials)))
		for _, d := range pr.Denials {
			fmt.Fprintf(w, "  %s\n", d.Message)
		}
		if len(pr.Remedies) > 0 {
			fmt.Fprintln(w, "mkrelease: what to do:")
			for _, r := range pr.Remedies {
				fmt.Fprintf(w, "  [%s] %s\n", r.Rule, r.Text)
			}
		}
	case errors.As(err, &cr):
		fmt.Fprintf(w, "mkrelease: %v\n", cr)
	default:
		fmt.Fprintf(w, "mkrelease: %v\n", err)
	}
	fmt.Fprintln(w, "mkrelease: nothing was published")
}

// printPublished says where the release is and how to install it.
func printPublished(w io.Writer, cfg *config.Config, to string, res *publish.Result) {
	if res.NoOp {
		fmt.Fprintf(w, "%s %s is already published in %s with the same bytes: nothing to do\n", cfg.Project.NormalizedName, cfg.Project.Version, to)
	} else {
		fmt.Fprintf(w, "published %s %s to %s (generation %d, %d assets, verification summary %s)\n",
			cfg.Project.NormalizedName, cfg.Project.Version, res.Channel.Dest, res.Channel.GenerationNumber, len(res.Assets), res.VSA)
	}
	dest := to
	if res.Channel != nil {
		dest = res.Channel.Dest
	}
	if u, err := url.Parse(dest); err == nil && u.Scheme == "file" {
		dest = u.Path
	}
	if abs, err := filepath.Abs(dest); err == nil {
		dest = abs
	}
	index := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dest) + "/simple/"}).String()
	var dists []string
	for _, a := range res.Assets {
		if fn, err := wheel.ParseFilename(a); err == nil {
			d := pyname.Normalize(fn.Distribution) + "==" + cfg.Project.Version
			if !slices.Contains(dists, d) {
				dists = append(dists, d)
			}
		}
	}
	slices.Sort(dists)
	fmt.Fprintf(w, "channel: %s\n", dest)
	fmt.Fprintf(w, "install: python3 -m pip install --index-url %s %s\n", index, strings.Join(dists, " "))
	fmt.Fprintf(w, "serve it with any static server, e.g. python3 -m http.server --directory %s, and use --index-url http://HOST:PORT/simple/\n", dest)
}

// ReleaseOptions are the inputs of `mkrelease release`.
type ReleaseOptions struct {
	Publish PublishOptions
	Python  string
	NoCache bool
	// RemoteCache, RemoteUpload and RemoteUploadSet are build's.
	RemoteCache     string
	RemoteUpload    bool
	RemoteUploadSet bool
}

// NewCmdRelease runs build, evidence run and publish.
func NewCmdRelease(f *Factory, g *globalOptions, runF func(*ReleaseOptions) error) *cobra.Command {
	opts := &ReleaseOptions{Publish: PublishOptions{Factory: f, Global: g, Dist: "dist"}}
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Build, gather verifier evidence, and publish: the whole release",
		Long: `Release runs mkrelease build, then mkrelease evidence run for every target this
machine can run, then mkrelease publish of those targets (a target whose
evidence cannot be produced here, such as aarch64 on an x86_64 machine, is left
out with a warning unless its evidence was imported; name targets with --target
to insist). It ends by printing where the channel is and the pip command that
installs from it. The exit status is publish's: 1 when the release policies
refuse, with every reason.`,
		Example: `  mkrelease release
  mkrelease release --to /srv/channel --key release.pub`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.RemoteUploadSet = cmd.Flags().Changed("remote-cache-upload")
			if runF != nil {
				return runF(opts)
			}
			return releaseRun(cmd.Context(), opts)
		},
	}
	addPublishFlags(cmd, &opts.Publish)
	cmd.Flags().StringArrayVarP(&opts.Publish.Targets, "target", "t", nil, "release this target (repeatable; default: every target whose evidence can be run here)")
	cmd.Flags().StringVar(&opts.Python, "python", "", "interpreter for the evidence virtualenvs (default: the newest supported one found)")
	cmd.Flags().BoolVar(&opts.NoCache, "no-cache", false, "run every build action even when cached")
	addRemoteCacheFlags(cmd, &opts.RemoteCache, &opts.RemoteUpload)
	return cmd
}

func releaseRun(ctx context.Context, o *ReleaseOptions) error {
	p := &o.Publish
	// One session for the whole release: release.toml and release.lock are
	// read once, the signing key loaded (its password asked) once.
	s := newSession(p.Factory, p.Global)
	log := s.log
	b := &BuildOptions{Factory: p.Factory, Global: p.Global, Targets: p.Targets, Out: p.Dist, NoCache: o.NoCache, Key: p.SignKey, release: true,
		RemoteCache: o.RemoteCache, RemoteUpload: o.RemoteUpload, RemoteUploadSet: o.RemoteUploadSet}
	e := &EvidenceRunOptions{Factory: p.Factory, Global: p.Global, Targets: p.Targets, Dist: p.Dist, Python: o.Python, Key: p.SignKey}
	bo, err := b.pipelineOptions(ctx, s)
	if err != nil {
		return err
	}
	eo, err := e.runOptions(ctx, s)
	if err != nil {
		return err
	}
	po, err := p.options(ctx, s)
	if err != nil {
		return err
	}
	var compiled build.Report
	bo.Compiled = func(rep build.Report) { compiled = rep }
	res, err := pipeline.Release(ctx, pipeline.ReleaseOptions{Build: bo, Evidence: eo, Publish: po, Named: len(p.Targets) > 0,
		Hooks: pipeline.ReleaseHooks{
			Built:   func(r *release.Release) error { return b.report(bo, r, compiled) },
			Skipped: skippedTarget(log),
			Evidence: func(runs []pipeline.EvidenceRun) error {
				var se *silentError
				if err := e.report(runs); err != nil && !(errors.As(err, &se) && se.code == 1) {
					return err
				}
				return nil // a lane that did not pass is for the policies to report
			},
			Unreleased: func(t string) {
				log.Warn("NOT RELEASING a target without verifier evidence", "target", t,
					"remedy", "run `mkrelease evidence run --target "+t+"` on a machine of its platform, `mkrelease evidence import` it, then `mkrelease publish`")
			},
		}})
	if res == nil || res.Published == nil {
		return err
	}
	po.Targets = res.Targets
	_, err = p.report(po, res.Published, err)
	return err
}
