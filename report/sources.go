package report

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/publish"
)

// Release reports on the release folder o.Dist through a dry run of the
// publish gate (o.DryRun is forced; nothing is signed or written). When
// o.To is empty the decision is made against an empty channel, as for a
// first publish, and the report says so. A refusal by the policies is
// the report's content, not an error; any other failure of the gate is
// returned.
func Release(ctx context.Context, o publish.Options) (*Report, error) {
	o.DryRun, o.Signer = true, nil
	to := o.To
	if o.To == "" && o.Destination == nil {
		tmp, err := os.MkdirTemp("", "mkrelease-report-")
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		defer os.RemoveAll(tmp)
		o.To = filepath.Join(tmp, "no-channel")
	}
	res, err := publish.Run(ctx, o)
	if res == nil || res.Decision == nil {
		if err == nil {
			err = errors.New("report: the publish gate gave no decision")
		}
		return nil, err
	}
	var refused *policies.RefusedError
	if err != nil && !errors.As(err, &refused) && !isChannelRefusal(err) {
		return nil, err
	}
	return fromResult(o.Dist, to, res, boundsOf(res.Input.Parameters)), nil
}

// isChannelRefusal reports a refusal by the channel (same version with
// other bytes, a downgrade): the policies deny it too, so it is content.
func isChannelRefusal(err error) bool {
	var cr *channel.RefusedError
	return errors.As(err, &cr)
}

func boundsOf(p policies.Parameters) Bounds {
	return Bounds{MaxRobustCV: p.MaxRobustCV, MinWorkload: p.MinWorkload}
}

// fromResult turns the gate's result into a report.
func fromResult(path, to string, res *publish.Result, b Bounds) *Report {
	in := res.Input
	r := &Report{Schema: Schema, Kind: KindRelease, Path: path, Project: in.Release.Project, Version: in.Release.Version,
		Targets: slices.Clone(in.Release.Targets), Artifacts: []Artifact{}, Evidence: []Evidence{}}
	if r.Targets == nil {
		r.Targets = []string{}
	}
	for _, a := range in.Artifacts {
		f := slices.Clone(a.Findings)
		if f == nil {
			f = []string{}
		}
		r.Artifacts = append(r.Artifacts, Artifact{Name: a.Name, Kind: a.Kind, Target: a.Target, SHA256: a.SHA256, Verified: a.Verified, Findings: f})
	}
	slices.SortFunc(r.Artifacts, func(a, b Artifact) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range in.Evidence {
		r.Evidence = append(r.Evidence, EvidenceOf(e.Target, e.File, res.Evidence[e.File], b))
	}
	d := res.Decision
	r.Decision = &Decision{Allow: d.Allow, Channel: to, Denials: slices.Clone(d.Denials), Remedies: slices.Clone(d.Remedies), Policies: slices.Clone(d.Policies)}
	if r.Decision.Denials == nil {
		r.Decision.Denials = []policies.Denial{}
	}
	if r.Decision.Remedies == nil {
		r.Decision.Remedies = []policies.Remedy{}
	}
	if r.Decision.Policies == nil {
		r.Decision.Policies = []policies.PolicyDigest{}
	}
	return r
}

// ChannelOptions say how to read a channel.
type ChannelOptions struct {
	// TrustedKeys may sign the verification summaries and the evidence.
	TrustedKeys []crypto.PublicKey
	// Bounds are the thresholds the plots draw (default [DefaultBounds]).
	Bounds *Bounds
}

// FromChannel reports on the channel at dest: its versions, every asset
// with its digest, each version's verification summary, and any evidence
// archive published with a version (checked as publish checks it, against
// the wheels of the target's bundle published beside it).
func FromChannel(ctx context.Context, dest string, o ChannelOptions) (*Report, error) {
	ch, err := channel.Open(dest)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	st := ch.State()
	b := DefaultBounds()
	if o.Bounds != nil {
		b = *o.Bounds
	}
	r := &Report{Schema: Schema, Kind: KindChannel, Path: dest, Project: st.Project, Targets: []string{},
		Artifacts: []Artifact{}, Evidence: []Evidence{},
		Channel: &Channel{Generation: st.Generation, Newest: st.Newest, Versions: []Version{}}}
	var v *provenance.Verifier
	if len(o.TrustedKeys) > 0 {
		if v, err = provenance.NewVerifier(o.TrustedKeys...); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	root := strings.TrimPrefix(dest, "file://")
	for _, ver := range st.Versions {
		dir := filepath.Join(root, channel.ReleasesDir, ver.Version)
		out := Version{Version: ver.Version, Assets: []Asset{}}
		for _, a := range ver.Assets {
			out.Assets = append(out.Assets, Asset{Name: a.Name, SHA256: a.SHA256, Size: a.Size})
		}
		slices.SortFunc(out.Assets, func(a, b Asset) int { return strings.Compare(a.Name, b.Name) })
		for _, a := range out.Assets {
			c, names := dist.Guess(a.Name)
			switch c.Kind {
			case dist.KindVSA:
				vsa := readVSA(filepath.Join(dir, a.Name), v)
				out.VSA = &vsa
			case dist.KindEvidence:
				e, err := channelEvidence(ctx, dir, a, c.Target, names, o.TrustedKeys, b)
				if err != nil {
					return nil, err
				}
				e.Version = ver.Version
				r.Evidence = append(r.Evidence, e)
			}
		}
		r.Channel.Versions = append(r.Channel.Versions, out)
	}
	return r, nil
}

// channelEvidence checks an evidence archive published in dir against the
// exact wheels of its target's bundle beside it. A bundle that is not
// published there, or does not check out, leaves no wheels to compare:
// the identity check fails, and the evidence with it.
func channelEvidence(ctx context.Context, dir string, a Asset, target string, names dist.Names, keys []crypto.PublicKey, b Bounds) (Evidence, error) {
	path := filepath.Join(dir, a.Name)
	o := runner.CheckOptions{TrustedKeys: keys, ArchiveSHA256: a.SHA256, ArchiveSize: a.Size}
	if wheels, err := runner.BundleWheels(ctx, filepath.Join(dir, names.Bundle(target))); err == nil {
		o.Wheels = wheels
	} else if ctx.Err() != nil {
		return Evidence{}, ctx.Err()
	}
	rep, err := runner.Check(ctx, path, o)
	if err != nil {
		return Evidence{}, fmt.Errorf("report: checking %s: %w", path, err)
	}
	return EvidenceOf(target, a.Name, rep, b), nil
}

// readVSA reads a verification summary, verifying its signature when a
// verifier is given.
func readVSA(path string, v *provenance.Verifier) VSA {
	out := VSA{File: filepath.Base(path)}
	env, err := os.ReadFile(path)
	if err != nil {
		out.Finding = err.Error()
		return out
	}
	var st []byte
	switch {
	case v == nil:
		out.Finding = "signature not checked: pass --key PUB.pem (or list it in [signing] trusted_keys)"
		st, err = provenance.EnvelopePayload(env)
	default:
		_, st, err = v.VerifyEnvelope(env)
		if err == nil {
			out.SignatureVerified = true
		} else {
			out.Finding = err.Error()
			st, err = provenance.EnvelopePayload(env)
		}
	}
	if err != nil {
		out.Finding = err.Error()
		return out
	}
	s, err := provenance.ParseVSA(st)
	if err != nil {
		out.SignatureVerified = false
		out.Finding = err.Error()
		return out
	}
	out.Result, out.PolicyURI, out.PolicySHA256, out.Subjects = s.Result, s.PolicyURI, s.PolicyDigest["sha256"], len(s.Subjects)
	return out
}
