package assemble

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
)

// PairError is a release pair whose wheels disagree. It names both wheels.
type PairError struct {
	Wheel, Pair string // file names (or names, when a wheel is missing)
	Target      string
	Msg         string
}

// Error names both wheels and what they disagree on.
func (e *PairError) Error() string {
	return fmt.Sprintf("release pair [%s]: %s and %s: %s\n\thint: a pair is built together: same version, same target, the same tag unless one is py3-none-any (no native code), and an exact == requirement",
		e.Target, e.Wheel, e.Pair, e.Msg)
}

// ExitCode is 1.
func (e *PairError) ExitCode() int { return 1 }

// CheckPairs reads back the file name and METADATA of every written wheel
// and checks each declared pair on the artifacts themselves: both exist for
// every target, their versions agree, and the plugin requires the other
// exactly (==VERSION). A pure-Python wheel (py3-none-any, shared by every
// target) pairs with a wheel of any tag; two native wheels share the
// target's tag. (The writer's output as a whole is what the validator's
// tests check; it is not decompressed again here.)
func CheckPairs(r *release.Release) error {
	reports := map[string]*wheel.Report{} // by artifact path
	for _, a := range r.Artifacts.Filter(dist.ByKind(dist.KindWheel)) {
		fn, md, err := wheel.ReadMetadata(filepath.Join(r.Stage, a.Path))
		if err != nil {
			return fmt.Errorf("reading back a wheel mkrelease wrote (a bug, please report it): %w", err)
		}
		reports[a.Path] = &wheel.Report{File: a.Path, Name: fn, Metadata: md}
	}
	for _, w := range r.Config.Wheels {
		if w.Pair == "" {
			continue
		}
		for _, t := range r.Targets {
			if !w.AppliesTo(t.Name) {
				continue
			}
			a, okA := find(r, w.Name, t.Name)
			b, okB := find(r, w.Pair, t.Name)
			switch {
			case !okA:
				continue
			case !okB:
				return &PairError{Wheel: a.Path, Pair: w.Pair, Target: t.Name, Msg: "the paired wheel is not built for this target (check its `targets`)"}
			}
			ra, rb := reports[a.Path], reports[b.Path]
			if err := checkPair(ra, rb); err != "" {
				return &PairError{Wheel: a.Path, Pair: b.Path, Target: t.Name, Msg: err}
			}
		}
	}
	return nil
}

func find(r *release.Release, name, target string) (dist.Artifact, bool) {
	for _, a := range r.Artifacts.Filter(dist.WheelsOf(target)) {
		if a.Name == name {
			return a, true
		}
	}
	return dist.Artifact{}, false
}

// checkPair compares the plugin wheel a with the wheel b it pairs with:
// the same version, the same tags unless either is py3-none-any, and an
// exact pin of b in a.
func checkPair(a, b *wheel.Report) string {
	switch {
	case a.Name.Version != b.Name.Version:
		return fmt.Sprintf("versions differ (%s, %s)", a.Name.Version, b.Name.Version)
	case a.Name.Pure() || b.Name.Pure():
	case a.Name.Platform != b.Name.Platform:
		return fmt.Sprintf("platform tags differ (%s, %s)", a.Name.Platform, b.Name.Platform)
	case a.Name.Python != b.Name.Python || a.Name.ABI != b.Name.ABI:
		return fmt.Sprintf("python/abi tags differ (%s-%s, %s-%s)", a.Name.Python, a.Name.ABI, b.Name.Python, b.Name.ABI)
	}
	want := pyname.Normalize(b.Metadata.Name)
	for _, rd := range a.Metadata.RequiresDist {
		req, err := pep508.ParseRequirement(rd)
		if err != nil || req.NormalizedName() != want {
			continue
		}
		if req.Marker == nil && req.Specifier.String() == "=="+b.Metadata.Version {
			return ""
		}
		return fmt.Sprintf("%s requires %q, not exactly %s==%s", a.Metadata.Name, rd, want, b.Metadata.Version)
	}
	return fmt.Sprintf("%s does not require %s (Requires-Dist: %s)", a.Metadata.Name, want, strings.Join(a.Metadata.RequiresDist, "; "))
}
