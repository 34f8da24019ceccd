// Package publish is the release gate: it verifies everything a release
// folder holds, builds the policy input (DESIGN §8), evaluates the release
// policies, and only when they allow it signs a SLSA verification summary
// and publishes the release atomically into a channel (package channel).
//
// The order of a publish:
//
//  1. choose the assets: every file of the release folder, except those of
//     targets not being released (their bundle, their evidence, wheels
//     only their bundle holds) and the build/ folder; when targets are
//     left out, a SHA256SUMS of the remaining files (the folder's lines,
//     filtered) is published instead of the folder's;
//  2. audit the folder (package audit): each asset is an artifact of the
//     policy input, verified or not with its findings;
//  3. check the provenance: present, signed by a trusted key, subjects =
//     the folder's wheels, bundles and SBOM;
//  4. check each released target's evidence (evidence/runner.Check) against
//     the exact wheels of its bundle; the figures the policies see are the
//     ones recomputed from the raw records, beside the lanes release.toml
//     declares (each must be in the evidence); how the build steps ran (in
//     a sandbox or not) is read from the provenance once its signature
//     verifies;
//  5. plan the publish in the channel (same version published, with the
//     same bytes, lower than the newest);
//  6. evaluate the policies: every denial is reported and nothing is
//     written; a dry run stops here;
//  7. when the channel already holds this version with the same bytes, the
//     publish is a no-op and nothing is signed;
//  8. sign the VSA (NAME-VERSION.vsa.intoto.jsonl and its sidecar), then
//     channel.Publish everything in one rename.
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

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/channel"
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
	// DryRun stops after the decision: nothing is signed or written.
	DryRun bool
	// Policies are the user's policy modules, evaluated with the defaults.
	Policies []policies.Module
	// Now is the time the VSA records (default time.Now).
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
	// Skipped are configured targets not being released.
	Skipped []string `json:"skipped_targets"`
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
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Config == nil {
		return nil, errors.New("publish: no configuration")
	}
	if o.To == "" {
		return nil, &UsageError{Msg: fmt.Sprintf("no channel to publish to: pass --to DEST or set [publish] to in %s", o.Config.File)}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	cfg := o.Config
	project, version := cfg.Project.NormalizedName, cfg.Project.Version
	targets, skipped, err := chooseTargets(cfg, o.Targets)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(o.Dist); err != nil || !st.IsDir() {
		return nil, &UsageError{Msg: fmt.Sprintf("release folder %s not found: run mkrelease build first (or pass --dist)", o.Dist)}
	}

	ev, err := policies.NewEvaluator(ctx, o.Policies)
	if err != nil {
		return nil, err
	}

	staging, err := os.MkdirTemp("", "mkrelease-publish-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staging)

	// The folder is loaded once, hashing every file once; the audit
	// extracts each bundle once and checks each evidence archive once;
	// the selection, the plan, the policy input and the summary read
	// those digests and facts, and check nothing a second time.
	log.Info("verifying the release folder", "dist", o.Dist)
	loaded, err := dist.Open(ctx, o.Dist)
	if err != nil {
		return nil, fmt.Errorf("publish: loading %s: %w", o.Dist, err)
	}
	aopts := audit.Options{TrustedKeys: o.TrustedKeys, Lock: o.Lock}
	folder, err := audit.Release(ctx, loaded, aopts)
	if err != nil {
		return nil, fmt.Errorf("publish: verifying %s: %w", o.Dist, err)
	}

	log.Info("choosing the assets", "dist", o.Dist, "targets", strings.Join(targets, ","))
	names := dist.NamesOf(project, version)
	sel, err := selectAssets(loaded, folder, names, targets, skipped, staging)
	if err != nil {
		return nil, err
	}

	dest := o.Destination
	if dest == nil {
		if dest, err = OpenFolder(o.To); err != nil {
			return nil, err
		}
	}
	vsaName := names.VSA()
	volatile := []string{vsaName, dist.Sidecar(vsaName)}
	rel := channel.Release{Project: project, Version: version, Assets: sel.paths, Known: sel.known, AllowDowngrade: o.AllowDowngrade, Volatile: volatile}
	plan, err := dest.Plan(ctx, rel)
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, a := range plan.Assets {
		digests[a.Name] = a.SHA256
	}

	in := policies.Input{
		Release:    policies.Release{Project: project, Version: version, Targets: targets},
		Parameters: parameters(cfg.Policy, o.AllowDowngrade),
	}
	in.Parameters.AllowUnsandboxed = cfg.Build.AllowUnsandboxed
	in.Artifacts = artifacts(o.Dist, folder, sel, digests)
	pf := folder.Provenance
	in.Provenance = policies.Provenance{
		Present: pf.Present, File: pf.File, SignedByTrustedKey: pf.Signed, KeyID: pf.KeyID,
		SubjectsMatch: pf.SubjectsMatch, Findings: findingTexts(pf.Findings),
	}
	if pf.Signed {
		// Only a statement signed by a trusted key says how the build ran.
		in.Provenance.Sandbox = sandboxFacts(pf.Statement)
	}
	for _, t := range targets {
		e := evidenceFacts(names.Evidence(t), t, folder.Evidence[names.Evidence(t)], sel.wheelsOf[t], digests, o.TrustedKeys)
		e.DeclaredLanes = declaredLanes(cfg.Evidence)
		in.Evidence = append(in.Evidence, e)
	}

	in.Channel = policies.Channel{
		Exists: dest.Exists(), PublishedVersions: plan.Published, Newest: plan.Newest,
		SameVersionPublished: plan.SameVersionPublished, SameVersionIdentical: plan.SameVersionIdentical,
		VersionLowerThanNewest: plan.LowerThanNewest,
	}

	d, err := ev.Evaluate(ctx, in)
	if err != nil {
		return nil, err
	}
	res := &Result{Input: in, Decision: d, Assets: sel.names(), Skipped: skipped}
	if !d.Allow {
		return res, d.Err()
	}
	if ref := plan.Refusal(); ref != nil {
		return res, ref
	}
	if o.DryRun {
		return res, nil
	}
	if plan.NoOp() {
		res.NoOp = true
		log.Info("already published with the same bytes: nothing to do", "version", version, "channel", o.To)
		return res, nil
	}

	if o.Signer == nil {
		return nil, errors.New("publish: no key to sign the verification summary with")
	}
	vsaPath := filepath.Join(staging, vsaName)
	if err := writeVSA(ctx, vsaPath, o.Signer, loaded, in, d, pf, now()); err != nil {
		return nil, err
	}
	rel.Assets = append(slices.Clone(sel.paths), vsaPath, dist.SidecarPath(vsaPath))
	log.Info("publishing", "channel", o.To, "version", version, "assets", len(rel.Assets))
	cres, err := dest.Publish(ctx, rel)
	if err != nil {
		return res, err
	}
	res.Channel, res.NoOp, res.VSA = cres, cres.NoOp, vsaName
	res.Assets = append(res.Assets, vsaName, vsaName+dist.SidecarSuffix)
	slices.Sort(res.Assets)
	return res, nil
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
