// Package publish is the release gate: it verifies everything a release
// folder holds, builds the policy input, evaluates the release
// policies, and only when they allow it signs a SLSA verification summary
// and publishes the release atomically into a channel (package channel).
//
// The order of a publish:
//
//  1. choose the assets: every file of the release folder, except those of
//     targets not being released (their bundle, their evidence, wheels
//     only their bundle holds) and the build/ folder, with the release
//     notes (5) in place of the folder's; the published SHA256SUMS is the
//     folder's lines for those files, with the notes' digest, written
//     once;
//  2. audit the folder (package audit): each asset is an artifact of the
//     policy input, verified or not with its findings;
//  3. check the provenance: present, signed by a trusted key, subjects =
//     the folder's wheels, bundles and SBOM;
//  4. check each released target's evidence (evidence/runner.Check) against
//     the exact wheels of its bundle; the figures the policies see are the
//     ones recomputed from the raw records, beside the lanes release.toml
//     declares (each must be in the evidence); how the build steps ran (in
//     a sandbox or not, and for a merged release, which parts no trusted
//     key vouched for) is read from the provenance once its signature
//     verifies;
//  5. write the release notes (package notes): the folder's
//     RELEASE_NOTES.md (the changelog's section), then a Validation
//     section from the evidence the audit recomputed; they are published
//     in place of the folder's, with their own sidecar and SHA256SUMS line;
//  6. plan the publish in the channel: its state must verify (channel.json
//     signed by a trusted key or the Signer's) and not be older than the
//     state the publisher saw last (Options.Seen), else the publish is
//     refused before the policies run; then the facts (same version
//     published, with the same bytes, lower than the newest);
//  7. evaluate the policies: every denial is reported and nothing is
//     written; a dry run stops here;
//  8. when the channel already holds this version with the same bytes (the
//     notes are a pure function of the folder and its evidence), the
//     publish is a no-op and nothing is signed;
//  9. sign the VSA (NAME-VERSION.vsa.intoto.jsonl and its sidecar; its
//     subjects the published wheels, bundles, SBOM and release notes),
//     then channel.Publish everything in one rename, the next
//     generation's channel.json signed with the same key.
package publish

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/provenance"
)

// Options are the inputs of a publish.
type Options struct {
	// Config is the project's release.toml.
	Config *config.Config
	// Lock, when set, is release.lock: the provenance must record it.
	Lock *lock.Lock
	// Dist is the release folder.
	Dist string
	// To is the channel: a folder or a file:// URL.
	To string
	// Destination, when set, is where to publish instead of the folder
	// channel at To (which then only names it in messages).
	Destination Destination
	// Targets are the targets being released (default: every target of
	// Config).
	Targets []string
	// TrustedKeys may sign the provenance and the evidence.
	TrustedKeys []crypto.PublicKey
	// Signer signs the verification summary (not needed for a dry run).
	Signer provenance.Signer
	// AllowDowngrade allows a version lower than the newest published.
	AllowDowngrade bool
	// Seen, when set, is the state of the channel the publisher saw last
	// (Result.Channel.Checkpoint of its last publish there): a channel
	// older than it is refused (channel.Release.Seen).
	Seen *channel.Checkpoint
	// DryRun stops after the decision: nothing is signed or written.
	DryRun bool
	// Policies are the user's policy modules, evaluated with the defaults.
	Policies []policies.Module
	// Now is the time the VSA and the channel's new generation record
	// (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Result is what a publish decided and did.
type Result struct {
	// Input is the policy input and Decision the policies' verdict.
	Input    policies.Input     `json:"input"`
	Decision *policies.Decision `json:"decision"`
	// Assets are the base names published (or that would be).
	Assets []string `json:"assets"`
	// NoOp is true when the channel already held this version with the
	// same bytes: nothing was signed or written.
	NoOp bool `json:"noop"`
	// VSA is the file name of the verification summary published.
	VSA string `json:"vsa,omitempty"`
	// Channel is the channel's outcome (nil on a dry run or refusal).
	Channel *channel.Result `json:"channel,omitempty"`
	// ChannelRefused are the channel's reasons when it refused the
	// release after the policies allowed it (another project's channel,
	// the version published with other bytes, a downgrade): the decision
	// then says allow, and these say why nothing was published.
	ChannelRefused []channel.Reason `json:"channel_refused,omitempty"`
	// Skipped are configured targets not being released.
	Skipped []string `json:"skipped_targets"`
	// Evidence are the checks of each evidence archive of the folder, by
	// file name: the recomputed summaries and the raw records behind the
	// input's figures (for mkrelease report; not encoded).
	Evidence map[string]*runner.Report `json:"-"`
}

// UsageError is a publish that cannot be attempted as asked (exit 2).
type UsageError struct{ Msg string }

// Error says what is wrong.
func (e *UsageError) Error() string { return e.Msg }

// ExitCode is 2.
func (e *UsageError) ExitCode() int { return 2 }

// VerifierID is the verifier.id of the summaries mkrelease signs.
const VerifierID = "https://github.com/mkrelease/mkrelease/publish"

// PolicyURI names the policy set in a summary; its digest covers every
// module evaluated (see PolicyDigest).
const PolicyURI = "https://github.com/mkrelease/mkrelease/policies"

// Run publishes the release folder o.Dist into o.To when the policies
// allow it. A refusal is a *policies.RefusedError (exit 1) with every
// reason, returned with the Result; nothing is written then.
//
// A publish is a stage list (see [stages]) over one gate: the folder is
// loaded once, hashing every file once; the audit extracts each bundle
// once and checks each evidence archive once; the selection, the plan,
// the policy input and the summary read those digests and facts, and
// check nothing a second time.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Config == nil {
		return nil, errors.New("publish: no configuration")
	}
	if o.To == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("no channel to publish to: pass --to DEST or set [publish] to in %s", o.Config.File)}
	}
	g := &gate{o: o, log: o.Logger, now: o.Now}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.now == nil {
		g.now = time.Now
	}
	cfg := o.Config
	g.names = dist.NamesOf(cfg.Project.NormalizedName, cfg.Project.Version)
	var err error
	if g.targets, g.skipped, err = chooseTargets(cfg, o.Targets); err != nil {
		return nil, err
	}
	if st, err := os.Stat(o.Dist); err != nil || !st.IsDir() {
		return nil, &UsageError{Msg: fmt.Sprintf("release folder %s not found: run mkrelease build first (or pass --dist)", o.Dist)}
	}
	if g.ev, err = policies.NewEvaluator(ctx, o.Policies); err != nil {
		return nil, err
	}
	if g.staging, err = os.MkdirTemp("", "mkrelease-publish-"); err != nil {
		return nil, err
	}
	defer os.RemoveAll(g.staging)
	for _, s := range stages() {
		if err := ctx.Err(); err != nil {
			return g.res, err
		}
		g.log.Debug("publish stage", "stage", s.name)
		if err := s.run(g, ctx); err != nil {
			if errors.Is(err, errDone) {
				return g.res, nil
			}
			var ref *channel.RefusedError
			if g.res != nil && g.res.Decision != nil && g.res.Decision.Allow && errors.As(err, &ref) {
				g.res.ChannelRefused = ref.Reasons
			}
			return g.res, err
		}
	}
	return g.res, nil
}

// chooseTargets returns the targets released (in release.toml's order)
// and those left out.
func chooseTargets(cfg *config.Config, names []string) (released, skipped []string, err error) {
	for _, n := range names {
		if _, ok := cfg.Target(n); !ok {
			return nil, nil, &UsageError{Msg: fmt.Sprintf("unknown target %q: %s declares %s", n, cfg.File, strings.Join(cfg.TargetNames(), ", "))}
		}
	}
	for _, t := range cfg.TargetNames() {
		if len(names) == 0 || slices.Contains(names, t) {
			released = append(released, t)
		} else {
			skipped = append(skipped, t)
		}
	}
	if len(released) == 0 {
		return nil, nil, &UsageError{Msg: cfg.File + " declares no target"}
	}
	return released, skipped, nil
}

// parameters are the default thresholds with release.toml's overrides.
func parameters(p config.Policy, allowDowngrade bool) policies.Parameters {
	out := policies.DefaultParameters()
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&out.MinThroughputGeomean, p.MinThroughputGeomean)
	set(&out.MinOverall, p.MinOverall)
	set(&out.MinPhase, p.MinPhase)
	set(&out.MinWorkload, p.MinWorkload)
	set(&out.MaxRobustCV, p.MaxRobustCV)
	out.AllowDowngrade = allowDowngrade
	return out
}

// TargetsWithEvidence splits the targets of cfg, in its order, into those
// whose evidence archive is in the release folder dist and those whose is
// not.
func TargetsWithEvidence(cfg *config.Config, dir string) (with, without []string) {
	for _, t := range cfg.TargetNames() {
		if _, err := os.Stat(filepath.Join(dir, dist.NamesOf(cfg.Project.NormalizedName, cfg.Project.Version).Evidence(t))); err == nil {
			with = append(with, t)
		} else {
			without = append(without, t)
		}
	}
	return with, without
}
