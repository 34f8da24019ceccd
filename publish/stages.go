package publish

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
)

// gate is the state of one publish: what each stage found, for the next.
type gate struct {
	o       Options
	log     *slog.Logger
	now     func() time.Time
	names   dist.Names
	targets []string
	skipped []string
	staging string
	ev      *policies.Evaluator

	loaded     *dist.Release   // load
	audited    *audit.Folder   // audit
	notesFiles []staged        // notes: the notes and their sidecar
	sel        *selection      // select
	dest       Destination     // plan
	rel        channel.Release // plan; sign adds the summary
	plan       *channel.Plan
	digests    map[string]string // plan: the published digests, by name
	in         policies.Input    // input
	res        *Result           // decide
}

// errDone ends a publish early without an error: a dry run, or a release
// the channel already holds with the same bytes.
var errDone = errors.New("publish: done")

// stage is one step of a publish.
type stage struct {
	name string
	run  func(*gate, context.Context) error
}

// stages are the steps of a publish, in order.
func stages() []stage {
	return []stage{
		{"load", (*gate).load},      // the release folder, every file hashed once
		{"audit", (*gate).audit},    // every check, each bundle extracted once, each evidence archive checked once
		{"notes", (*gate).notes},    // RELEASE_NOTES.md from the audit's recomputed evidence
		{"select", (*gate).choose},  // the assets of the released targets, the notes in place of the folder's
		{"plan", (*gate).planIt},    // the destination's facts, from the loaded digests
		{"input", (*gate).input},    // the policy input, from the audit's facts
		{"decide", (*gate).decide},  // the policies; a refusal, a dry run or a no-op ends here
		{"sign", (*gate).sign},      // the verification summary
		{"publish", (*gate).commit}, // into the destination, in one step
	}
}

func (g *gate) load(ctx context.Context) error {
	g.log.Info("verifying the release folder", "dist", g.o.Dist)
	var err error
	if g.loaded, err = dist.Open(ctx, g.o.Dist); err != nil {
		return fmt.Errorf("publish: loading %s: %w", g.o.Dist, err)
	}
	return nil
}

func (g *gate) audit(ctx context.Context) error {
	var err error
	g.audited, err = audit.Release(ctx, g.loaded, audit.Options{TrustedKeys: g.o.TrustedKeys, Lock: g.o.Lock})
	if err != nil {
		return fmt.Errorf("publish: verifying %s: %w", g.o.Dist, err)
	}
	return nil
}

func (g *gate) choose(context.Context) error {
	g.log.Info("choosing the assets", "dist", g.o.Dist, "targets", strings.Join(g.targets, ","))
	var err error
	g.sel, err = selectAssets(g.loaded, g.audited, g.names, g.targets, g.skipped, g.staging, g.notesFiles)
	return err
}

func (g *gate) notes(context.Context) (err error) {
	g.notesFiles, err = writeNotes(g.loaded, g.audited, g.names, g.o.Config.Project.NormalizedName, g.o.Config.Project.Version, g.targets, g.staging)
	return err
}

func (g *gate) planIt(ctx context.Context) error {
	g.dest = g.o.Destination
	if g.dest == nil {
		var err error
		if g.dest, err = OpenFolder(g.o.To); err != nil {
			return err
		}
	}
	vsaName := g.names.VSA()
	cfg := g.o.Config
	g.rel = channel.Release{Project: cfg.Project.NormalizedName, Version: cfg.Project.Version, Assets: g.sel.paths, Known: g.sel.known,
		AllowDowngrade: g.o.AllowDowngrade, Volatile: []string{vsaName, dist.Sidecar(vsaName)},
		Signer: g.o.Signer, TrustedKeys: g.o.TrustedKeys, Seen: g.o.Seen}
	var err error
	if g.plan, err = g.dest.Plan(ctx, g.rel); err != nil {
		return err
	}
	g.digests = map[string]string{}
	for _, a := range g.plan.Assets {
		g.digests[a.Name] = a.SHA256
	}
	return nil
}

func (g *gate) input(context.Context) error {
	cfg := g.o.Config
	in := policies.Input{
		Release:    policies.Release{Project: cfg.Project.NormalizedName, Version: cfg.Project.Version, Targets: g.targets},
		Parameters: parameters(cfg.Policy, g.o.AllowDowngrade),
	}
	in.Parameters.AllowUnsandboxed = cfg.Build.AllowUnsandboxed
	in.Artifacts = artifacts(g.o.Dist, g.audited, g.sel, g.digests)
	pf := g.audited.Provenance
	in.Provenance = policies.Provenance{
		Present: pf.Present, File: pf.File, SignedByTrustedKey: pf.Signed, KeyID: pf.KeyID,
		SubjectsMatch: pf.SubjectsMatch, Findings: findingTexts(pf.Findings),
	}
	if pf.Signed {
		// Only a statement signed by a trusted key says how the build ran.
		in.Provenance.Sandbox = sandboxFacts(pf.Statement)
		in.Provenance.UnsignedParts = unsignedParts(pf.UnsignedParts)
	}
	for _, t := range g.targets {
		name := g.names.Evidence(t)
		e := evidenceFacts(name, t, g.audited.Evidence[name], g.sel.wheelsOf[t], g.digests, g.o.TrustedKeys)
		e.DeclaredLanes = declaredLanes(cfg.Evidence)
		in.Evidence = append(in.Evidence, e)
	}
	in.Channel = policies.Channel{
		Exists: g.dest.Exists(), PublishedVersions: g.plan.Published, Newest: g.plan.Newest,
		SameVersionPublished: g.plan.SameVersionPublished, SameVersionIdentical: g.plan.SameVersionIdentical,
		VersionLowerThanNewest: g.plan.LowerThanNewest,
	}
	g.in = in
	return nil
}

func (g *gate) decide(ctx context.Context) error {
	d, err := g.ev.Evaluate(ctx, g.in)
	if err != nil {
		return err
	}
	g.res = &Result{Input: g.in, Decision: d, Assets: g.sel.names(), Skipped: g.skipped, Evidence: g.audited.Evidence}
	if !d.Allow {
		return d.Err()
	}
	if ref := g.plan.Refusal(); ref != nil {
		return ref
	}
	if g.o.DryRun {
		return errDone
	}
	if g.plan.NoOp() {
		g.res.NoOp = true
		g.log.Info("already published with the same bytes: nothing to do", "version", g.o.Config.Project.Version, "channel", g.o.To)
		return errDone
	}
	return nil
}

func (g *gate) sign(ctx context.Context) error {
	if g.o.Signer == nil {
		g.res = nil
		return errors.New("publish: no key to sign the verification summary with")
	}
	vsaPath := filepath.Join(g.staging, g.names.VSA())
	// The summary and the channel's new generation record the same time.
	g.rel.Time = g.now()
	if err := writeVSA(ctx, vsaPath, g.o.Signer, g.loaded, g.in, g.res.Decision, g.audited.Provenance, g.rel.Time); err != nil {
		g.res = nil
		return err
	}
	g.rel.Assets = append(slices.Clone(g.sel.paths), vsaPath, dist.SidecarPath(vsaPath))
	return nil
}

func (g *gate) commit(ctx context.Context) error {
	g.log.Info("publishing", "channel", g.o.To, "version", g.o.Config.Project.Version, "assets", len(g.rel.Assets))
	cres, err := g.dest.Publish(ctx, g.rel)
	if err != nil {
		return err
	}
	vsaName := g.names.VSA()
	g.res.Channel, g.res.NoOp, g.res.VSA = cres, cres.NoOp, vsaName
	g.res.Assets = append(g.res.Assets, vsaName, dist.Sidecar(vsaName))
	slices.Sort(g.res.Assets)
	return nil
}
