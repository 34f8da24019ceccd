package e2e

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/artdiff"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/spdxschema"
	"github.com/mkrelease/mkrelease/sbom"
)

// checkOneTarget builds linux-x86_64 alone into dist-x86, from the warm
// action cache of a's full build, and compares every file of that target
// with what the full build wrote into dist: both wheels, the bundle, their
// sidecars and build/linux-x86_64/. A differing bundle is shown by its
// first differing member (artdiff) and the list of every member that
// differs. The bundle's SBOM is its target's, valid SPDX 2.3, and holds
// nothing of the other targets.
func checkOneTarget(t *testing.T, a run) {
	t.Run("one target alone builds the same files", func(t *testing.T) {
		const target = "linux-x86_64"
		out := a.mustMkrelease(t, "build", "--target", target, "--out", "dist-x86")
		if !strings.Contains(out, "3 actions (0 ran, 3 cached)") {
			t.Errorf("building %s alone from the warm cache ran actions:\n%s", target, out)
		}
		full, alone := filepath.Join(a.dir, "dist"), filepath.Join(a.dir, "dist-x86")
		// The target's files: build/TARGET/..., and the top-level files
		// named for its architecture (wheels, bundle, sidecars), not the
		// verifier evidence an evidence run adds.
		ofTarget := func(m map[string][]byte) map[string][]byte {
			out := map[string][]byte{}
			for rel, data := range m {
				top := !strings.Contains(rel, "/") && (strings.Contains(rel, target) || strings.Contains(rel, targetNamed(target).tag)) && !isEvidence(rel)
				if top || strings.HasPrefix(rel, "build/"+target+"/") {
					out[rel] = data
				}
			}
			return out
		}
		tf, ta := ofTarget(tree(t, full)), ofTarget(tree(t, alone))
		names := keys(tf)
		if got := keys(ta); !slices.Equal(got, names) {
			t.Fatalf("the files of %s differ:\nfull build: %v\nalone:      %v", target, names, got)
		}
		kinds := map[string]int{}
		for _, n := range names {
			kinds[filepath.Ext(n)]++
		}
		if kinds[".whl"] != 2 || kinds[".gz"] != 1 || kinds[".sha256"] != 3 {
			t.Fatalf("files of %s: %v, want 2 wheels, a bundle and their sidecars", target, names)
		}
		for _, f := range []string{"vexlc", "libvexl.so", "libvexl.h"} {
			if !slices.Contains(names, "build/"+target+"/"+f) {
				t.Errorf("files of %s: %v, want build/%s/%s", target, names, target, f)
			}
		}
		for _, n := range names {
			if bytes.Equal(tf[n], ta[n]) {
				continue
			}
			msg := n + " differs between the full build and the build of " + target + " alone"
			if d, err := artdiff.Compare(n, filepath.Join(full, n), filepath.Join(alone, n)); err != nil {
				msg += ": " + err.Error()
			} else if d != nil {
				msg += ": first difference " + d.String()
			}
			if strings.HasSuffix(n, ".tar.gz") {
				msg += "; members that differ: " + strings.Join(differingMembers(t, tf[n], ta[n]), ", ")
			}
			t.Error(msg)
		}

		// The bundle carries its own target's SBOM.
		root := "vexl-0.3.0-" + target
		var doc []byte
		for _, e := range readTarGz(t, tf[root+".tar.gz"]) {
			if e.hdr.Name == root+"/"+root+".spdx.json" {
				doc = e.data
			}
		}
		if doc == nil {
			t.Fatalf("%s.tar.gz holds no %s.spdx.json", root, root)
		}
		var cdx []byte
		for _, e := range readTarGz(t, tf[root+".tar.gz"]) {
			if e.hdr.Name == root+"/"+root+".cdx.json" {
				cdx = e.data
			}
		}
		if err := sbom.CheckSerialNumber(cdx); cdx == nil || err != nil {
			t.Errorf("%s.tar.gz holds no CycloneDX SBOM %s.cdx.json with its content-derived serial number (%v)", root, root, err)
		}
		if err := spdxschema.Validate(doc); err != nil {
			t.Errorf("the bundle's SBOM is not valid SPDX 2.3:\n%v", err)
		}
		if err := sbom.CheckNamespace(doc); err != nil {
			t.Errorf("the bundle's SBOM: %v", err)
		}
		if s, err := sbom.Parse(doc); err != nil {
			t.Errorf("the bundle's SBOM: %v", err)
		} else if s.Name != root {
			t.Errorf("the bundle's SBOM is named %q, want %q", s.Name, root)
		}
		for _, tg := range targets {
			if tg.name != target && (bytes.Contains(doc, []byte(tg.name)) || bytes.Contains(doc, []byte(tg.tag))) {
				t.Errorf("the SBOM of the %s bundle mentions %s", target, tg.name)
			}
		}
		// The folder built for one target verifies as a release of its own.
		if out := a.mustMkrelease(t, "verify", "dist-x86"); !strings.Contains(out, "every check holds") {
			t.Errorf("verify dist-x86:\n%s", out)
		}
	})
}

// differingMembers names the members of two .tar.gz files whose header or
// content differ, and those only one of them holds.
func differingMembers(t *testing.T, a, b []byte) []string {
	t.Helper()
	index := func(es []tarEntry) map[string]tarEntry {
		m := map[string]tarEntry{}
		for _, e := range es {
			m[e.hdr.Name] = e
		}
		return m
	}
	ma, mb := index(readTarGz(t, a)), index(readTarGz(t, b))
	var out []string
	for n, ea := range ma {
		eb, ok := mb[n]
		switch {
		case !ok:
			out = append(out, n+" (only in the full build)")
		case !bytes.Equal(ea.data, eb.data) || ea.hdr.Mode != eb.hdr.Mode || !ea.hdr.ModTime.Equal(eb.hdr.ModTime):
			out = append(out, n)
		}
	}
	for n := range mb {
		if _, ok := ma[n]; !ok {
			out = append(out, n+" (only in the build of one target)")
		}
	}
	slices.Sort(out)
	return out
}

// isEvidence reports whether a release folder's file is evidence or its
// sidecar: taken after the build, never reproducible.
func isEvidence(name string) bool {
	c, _ := dist.Guess(name)
	k := c.Kind
	if k == dist.KindSidecar {
		k = c.Of
	}
	return k == dist.KindEvidence || k == dist.KindEvidenceStatements
}

// evidenceRoot is the root folder (and the name without extension) of a
// target's evidence, as dist spells it.
func evidenceRoot(project, version, target string) string {
	return dist.NamesOf(project, version).EvidenceRoot(target)
}

// evidenceInfix marks evidence files' names.
const evidenceInfix = dist.EvidenceInfix
