package channel

import (
	"context"
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/fsmode"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
)

// Release is what to publish.
type Release struct {
	// Project is the project's name (normalised when recorded).
	Project string
	// Version is the release's PEP 440 version (normalised when recorded).
	Version string
	// Assets are the paths of every file to publish: wheels, bundles,
	// SBOM, provenance, evidence, sidecars, SHA256SUMS, the VSA. They are
	// published under their base names, byte for byte.
	Assets []string
	// AllowDowngrade allows publishing a version lower than the newest
	// published.
	AllowDowngrade bool
	// Volatile are base names of assets made anew on every publish of the
	// same release (the signed verification summary and its sidecar):
	// they are published with the version but left out when deciding
	// whether the version is already published with the same bytes, on
	// both sides. A republish whose other assets are identical is a no-op
	// and keeps the published ones.
	Volatile []string
	// Known are digests and sizes the caller already computed for these
	// paths (e.g. when it loaded the release folder), keyed by the path
	// exactly as given in Assets; each Asset's SHA256 must be 64
	// lower-case hex digits and its Name empty or the path's base name.
	// They are trusted for the plan, so neither Plan nor Publish hashes
	// those assets again; the copy into the channel still checks every
	// byte it copies against them, so a file that changed since is
	// refused. An asset whose size on disk differs from its Known size is
	// refused at once (it changed). Assets missing from Known are hashed;
	// entries for paths not in Assets are ignored.
	Known map[string]Asset
	// Signer signs the new generation's channel.json
	// (channel.intoto.jsonl); Publish refuses to publish without one.
	Signer provenance.Signer
	// TrustedKeys may have signed the channel's current state; the
	// Signer's key is trusted too. A channel whose state no trusted key
	// verifies is refused (RuleStateNotVerified).
	TrustedKeys []crypto.PublicKey
	// Seen, when set, is the state of this channel the publisher saw last
	// (as Result.Checkpoint gave it): a channel older than it, or forked
	// from it, is refused (RuleRollback).
	Seen *Checkpoint
	// Time is when the new generation is published (channel.json's
	// "published"); the zero time means now.
	Time time.Time
}

// Plan is the facts about publishing a release into a channel, for a
// policy gate to evaluate before publishing and for Publish to decide.
type Plan struct {
	// Project and Version are the release's, normalised.
	Project string `json:"project"`
	Version string `json:"version"`
	// Assets are the release's files as they would be published, sorted
	// by name.
	Assets []Asset `json:"assets"`
	// Wheels describe the assets that are wheels.
	Wheels []Wheel `json:"wheels"`
	// ChannelProject is the project the channel serves ("" when empty).
	ChannelProject string `json:"channel_project"`
	// OtherProject is true when the channel serves another project.
	OtherProject bool `json:"other_project"`
	// Published are the versions already published, ascending.
	Published []string `json:"published"`
	// Newest is the highest version published ("" when none).
	Newest string `json:"newest"`
	// SameVersionPublished is true when a version equal to Version (PEP
	// 440: "1.0" equals "1.0.0") is published; PublishedAs is its
	// spelling there.
	SameVersionPublished bool   `json:"same_version_published"`
	PublishedAs          string `json:"published_as,omitempty"`
	// SameVersionIdentical is true when that version's assets are exactly
	// the release's: the same names with the same bytes.
	SameVersionIdentical bool `json:"same_version_identical"`
	// Differing are the assets that differ from the published version's,
	// when SameVersionPublished.
	Differing []AssetDiff `json:"differing"`
	// LowerThanNewest is true when Version is lower than Newest.
	LowerThanNewest bool `json:"lower_than_newest"`
	// AllowDowngrade is the release's AllowDowngrade.
	AllowDowngrade bool `json:"allow_downgrade"`
	// Restart is set when the channel is empty although Release.Seen
	// records a generation published there: publishing starts the channel
	// again, after that generation, without the versions it listed.
	Restart *Checkpoint `json:"restart,omitempty"`

	dest     string
	volatile []string
	sources  map[string]string // asset name -> path given
	meta     map[string][]byte // wheel name -> METADATA bytes
}

// AssetDiff is an asset that differs between a release and the same
// version as published.
type AssetDiff struct {
	// Name is the asset's name.
	Name string `json:"name"`
	// Published is its sha256 in the channel, "" when it is not there.
	Published string `json:"published"`
	// Given is its sha256 in the release, "" when the release lacks it.
	Given string `json:"given"`
}

// String says how the asset differs.
func (d AssetDiff) String() string {
	switch {
	case d.Published == "":
		return d.Name + " (not in the published version)"
	case d.Given == "":
		return d.Name + " (published, missing from the release)"
	default:
		return fmt.Sprintf("%s (published sha256 %s, given %s)", d.Name, d.Published, d.Given)
	}
}

// NoOp reports whether publishing changes nothing: the same version is
// published with the same bytes of the same assets.
func (p *Plan) NoOp() bool { return p.SameVersionIdentical && !p.OtherProject }

// Refusal returns the error Publish refuses the plan with, listing every
// reason, or nil when the release may be published (or is a no-op).
func (p *Plan) Refusal() *RefusedError {
	var rs []Reason
	if p.OtherProject {
		rs = append(rs, Reason{Rule: RuleOtherProject, Msg: fmt.Sprintf("the channel serves project %s, the release is %s; publish it to its own channel", p.ChannelProject, p.Project)})
	}
	if p.SameVersionPublished && !p.SameVersionIdentical {
		var names, what []string
		for _, d := range p.Differing {
			names = append(names, d.Name)
			what = append(what, d.String())
		}
		rs = append(rs, Reason{Rule: RuleDifferentAssets, Assets: names, Msg: fmt.Sprintf(
			"version %s is already published with other assets: %s; a published version never changes, release a new version", p.PublishedAs, strings.Join(what, ", "))})
	}
	if p.LowerThanNewest && !p.AllowDowngrade && !p.SameVersionPublished {
		rs = append(rs, Reason{Rule: RuleDowngrade, Msg: fmt.Sprintf("version %s is lower than the newest published, %s; allow the downgrade explicitly to publish it", p.Version, p.Newest)})
	}
	if len(rs) == 0 {
		return nil
	}
	return &RefusedError{Dest: p.dest, Version: p.Version, Reasons: rs}
}

// Plan works out what publishing r into the channel would do, without
// writing anything: it checks that the channel's state verifies and is not
// older than r.Seen (a *RefusedError otherwise, before anything else),
// validates the release (a *UsageError for what cannot be published; see
// the package doc), hashes every asset (but those whose digest is in
// r.Known), reads each wheel's METADATA, and compares with the channel's
// state.
func (c *Channel) Plan(ctx context.Context, r Release) (*Plan, error) {
	_, restart, err := c.checkTrust(r)
	if err != nil {
		return nil, err
	}
	p, err := prepare(ctx, r)
	if err != nil {
		return nil, err
	}
	c.compare(p)
	p.Restart = restart
	return p, nil
}

// compare fills in the facts of p that depend on the channel's state.
func (c *Channel) compare(p *Plan) {
	p.dest = c.paths.dest
	st := c.state
	p.ChannelProject = st.Project
	p.OtherProject = st.Project != "" && st.Project != p.Project
	p.Newest = st.Newest
	p.Published = []string{}
	for _, v := range st.Versions {
		p.Published = append(p.Published, v.Version)
	}
	p.Differing = []AssetDiff{}
	if p.OtherProject {
		// Another project's versions are not this one's: neither the same
		// version nor a downgrade of it.
		return
	}
	if pub, ok := st.Lookup(p.Version); ok {
		p.SameVersionPublished, p.PublishedAs = true, pub.Version
		p.Differing = diffAssets(pub.Assets, p.Assets, p.volatile)
		p.SameVersionIdentical = len(p.Differing) == 0
	}
	if st.Newest != "" {
		nv, _ := pep440.Parse(st.Newest)
		rv, _ := pep440.Parse(p.Version)
		p.LowerThanNewest = rv.Compare(nv) < 0
	}
}

// diffAssets lists the assets that differ between two sorted lists,
// leaving out those named in volatile.
func diffAssets(published, given []Asset, volatile []string) []AssetDiff {
	out := []AssetDiff{}
	pub := map[string]string{}
	for _, a := range published {
		if !slices.Contains(volatile, a.Name) {
			pub[a.Name] = a.SHA256
		}
	}
	for _, a := range given {
		if slices.Contains(volatile, a.Name) {
			continue
		}
		if old, ok := pub[a.Name]; !ok || old != a.SHA256 {
			out = append(out, AssetDiff{Name: a.Name, Published: old, Given: a.SHA256})
		}
		delete(pub, a.Name)
	}
	for name, sha := range pub {
		out = append(out, AssetDiff{Name: name, Published: sha})
	}
	slices.SortFunc(out, func(a, b AssetDiff) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// prepare validates r and gathers the facts about its assets.
func prepare(ctx context.Context, r Release) (*Plan, error) {
	if err := pyname.Valid(r.Project); err != nil {
		return nil, &UsageError{Msg: "release project", Err: err}
	}
	v, err := pep440.Parse(r.Version)
	if err != nil {
		return nil, &UsageError{Msg: "release version", Err: err}
	}
	p := &Plan{
		Project: pyname.Normalize(r.Project), Version: v.String(), AllowDowngrade: r.AllowDowngrade,
		Assets: []Asset{}, Wheels: []Wheel{}, volatile: slices.Clone(r.Volatile),
		sources: map[string]string{}, meta: map[string][]byte{},
	}
	if len(r.Assets) == 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("release %s %s has no assets to publish", p.Project, p.Version)}
	}
	for _, path := range r.Assets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name := filepath.Base(path)
		if err := checkAssetName(name); err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("asset %s cannot be published under the name %q", path, name), Err: err}
		}
		if prev, dup := p.sources[name]; dup {
			return nil, &UsageError{Msg: fmt.Sprintf("assets %s and %s have the same name %s; a version folder holds each name once", prev, path, name)}
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, &UsageError{Msg: "asset " + path, Err: err}
		}
		if !fi.Mode().IsRegular() {
			return nil, &UsageError{Msg: fmt.Sprintf("asset %s is a %s, not a regular file", path, fsmode.Name(fi.Mode()))}
		}
		sha, size, err := assetDigest(path, name, fi, r.Known)
		if err != nil {
			return nil, err
		}
		p.sources[name] = path
		p.Assets = append(p.Assets, Asset{Name: name, SHA256: sha, Size: size})
		if dist.ClaimsWheel(name) {
			w, meta, err := readWheel(path, v)
			if err != nil {
				return nil, err
			}
			p.Wheels = append(p.Wheels, w)
			p.meta[name] = meta
		}
	}
	if len(p.Wheels) == 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("release %s %s has no wheel among its assets; a channel is a Python package index", p.Project, p.Version)}
	}
	for _, w := range p.Wheels {
		if src, clash := p.sources[w.File+MetadataSuffix]; clash {
			return nil, &UsageError{Msg: fmt.Sprintf("asset %s has the name of the core metadata file the channel writes beside wheel %s; rename it", src, w.File)}
		}
	}
	slices.SortFunc(p.Assets, func(a, b Asset) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(p.Wheels, func(a, b Wheel) int { return strings.Compare(a.File, b.File) })
	return p, nil
}

// assetDigest returns the sha256 and size of the asset at path, a regular
// file whose Stat is fi: those in known when it has the path (checked for
// form and against fi's size), else computed by hashing the file.
func assetDigest(path, name string, fi os.FileInfo, known map[string]Asset) (string, int64, error) {
	k, ok := known[path]
	if !ok {
		sha, size, err := checksum.File(path)
		if err != nil {
			return "", 0, &UsageError{Msg: "asset " + path, Err: err}
		}
		return sha, size, nil
	}
	switch {
	case !checksum.IsSHA256(k.SHA256):
		return "", 0, &UsageError{Msg: fmt.Sprintf("asset %s: the known sha256 %q is not 64 lower-case hex digits", path, k.SHA256)}
	case k.Name != "" && k.Name != name:
		return "", 0, &UsageError{Msg: fmt.Sprintf("asset %s: its known digest is given for the name %q, not %q", path, k.Name, name)}
	case k.Size != fi.Size():
		return "", 0, &UsageError{Msg: fmt.Sprintf("asset %s changed since its digest was computed: it has %d bytes, %d were known; load the release again", path, fi.Size(), k.Size)}
	}
	return k.SHA256, k.Size, nil
}

// readWheel reads what the index says about the wheel at path, checking
// that its file name and METADATA are for the release's version.
func readWheel(path string, version pep440.Version) (Wheel, []byte, error) {
	name := filepath.Base(path)
	fail := func(format string, args ...any) (Wheel, []byte, error) {
		return Wheel{}, nil, &UsageError{Msg: "wheel " + path + ": " + fmt.Sprintf(format, args...)}
	}
	fn, err := wheel.ParseFilename(name)
	if err != nil {
		return fail("%v", err)
	}
	if fv, err := pep440.Parse(fn.Version); err != nil || fv.Compare(version) != 0 {
		return fail("the file name's version %s is not the release's, %s", fn.Version, version)
	}
	data, err := coreMetadata(path)
	if err != nil {
		return fail("%v", err)
	}
	md, err := wheel.ParseMetadata(data)
	if err != nil {
		return fail("METADATA: %v", err)
	}
	if !pyname.Equal(md.Name, fn.Distribution) {
		return fail("METADATA names %q, the file name %q", md.Name, fn.Distribution)
	}
	if mv, err := pep440.Parse(md.Version); err != nil || mv.Compare(version) != 0 {
		return fail("METADATA's version %q is not the release's, %s", md.Version, version)
	}
	if _, err := pep440.ParseSpecifiers(md.RequiresPython); err != nil {
		return fail("METADATA's Requires-Python: %v", err)
	}
	return Wheel{
		File:           name,
		Project:        pyname.Normalize(fn.Distribution),
		RequiresPython: md.RequiresPython,
		MetadataSHA256: checksum.Bytes(data),
		MetadataSize:   int64(len(data)),
	}, data, nil
}

// coreMetadata returns the bytes of a wheel's .dist-info/METADATA, the file
// PEP 658 serves beside the wheel.
func coreMetadata(path string) ([]byte, error) { return wheel.MetadataBytes(path) }
