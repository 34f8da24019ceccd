package part_test

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/part"
	"github.com/mkrelease/mkrelease/pipeline"
	"github.com/mkrelease/mkrelease/policies"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/publish"
	"github.com/mkrelease/mkrelease/wheel"
)

// A refused merge writes nothing: no output folder, no staging folder
// beside it, and an output folder that was there stays as it was.
func TestRefusedMergeWritesNothing(t *testing.T) {
	key := part.DevKey(t)
	for name, make := range map[string]func(root string) []string{
		"missing target": func(root string) []string {
			return []string{part.MakePart(t, root+"/a", key, nil, "linux-x86_64")}
		},
		"untrusted": func(root string) []string {
			return []string{part.MakePart(t, root+"/a", part.DevKey(t), nil, "linux-x86_64", "linux-aarch64")}
		},
		"changed file": func(root string) []string {
			a := part.MakePart(t, root+"/a", key, nil, "linux-x86_64", "linux-aarch64")
			os.WriteFile(filepath.Join(a, "RELEASE_NOTES.md"), []byte("changed"), 0o644)
			return []string{a}
		},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dirs := make(root)
			out := filepath.Join(root, "out")
			_, _, err := pipeline.Merge(context.Background(), pipeline.MergeOptions{Config: part.TestConfig(), Lock: &lock.Lock{SHA256: part.LockSHA},
				Parts: dirs, Out: out, Trusted: []crypto.PublicKey{key.Public()}, Signer: key})
			if err == nil || !strings.HasPrefix(err.Error(), "merge: ") {
				t.Fatalf("Merge = %v, want a refusal", err)
			}
			entries, _ := os.ReadDir(root)
			for _, e := range entries {
				if e.Name() != "a" {
					t.Errorf("a refused merge left %s", e.Name())
				}
			}
		})
	}
}

// Two checked parts merge into one folder: each target's files from its
// part, the notes, a manifest listing both targets, the artifact list,
// the sidecars and SHA256SUMS, and a signed provenance.
func TestMergeJoinsParts(t *testing.T) {
	key := part.DevKey(t)
	root := t.TempDir()
	a := part.MakePart(t, root+"/a", key, nil, "linux-aarch64")
	b := part.MakePart(t, root+"/b", key, nil, "linux-x86_64")
	out := filepath.Join(root, "dist")
	r, parts, err := pipeline.Merge(context.Background(), pipeline.MergeOptions{Config: part.TestConfig(), Lock: &lock.Lock{SHA256: part.LockSHA},
		Parts: []string{a, b}, Out: out, Trusted: []crypto.PublicKey{key.Public()}, Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Dir != b {
		t.Errorf("parts not in release.toml's order: %v", parts)
	}
	if got := []string{r.Manifest.Targets[0].Name, r.Manifest.Targets[1].Name}; got[0] != "linux-x86_64" || got[1] != "linux-aarch64" {
		t.Errorf("manifest targets %v, want release.toml's order", got)
	}
	for _, f := range []string{"build/linux-x86_64/tool", "build/linux-aarch64/tool", "RELEASE_NOTES.md", "RELEASE_NOTES.md.sha256",
		"manifest.json", "artifacts.json", "SHA256SUMS", "demo-1.0.spdx.json", "demo-1.0.cdx.json", "demo-1.0.cdx.json.sha256"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("merged folder: %v", err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(out, "build/linux-aarch64/tool")); string(data) != "binary of linux-aarch64" {
		t.Errorf("aarch64 tool = %q", data)
	}
	// The artifact list records each part's binaries as that part did, and
	// SHA256SUMS, derived from it, holds for every file.
	list, err := dist.ReadArtifactList(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dist.Artifact{}
	for _, a := range list.Artifacts {
		got[a.Path] = a
	}
	for _, p := range []string{a, b} {
		pl, err := dist.ReadArtifactList(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range pl.Artifacts {
			if want.Kind == dist.KindBinary && got[want.Path] != want {
				t.Errorf("merged list: %+v, part %s: %+v", got[want.Path], p, want)
			}
		}
	}
	sums, err := checksum.ReadSums(filepath.Join(out, dist.ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := checksum.Verify(context.Background(), out, sums, checksum.VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Errorf("SHA256SUMS of the merged folder: %v %v", err, rep.Err())
	}
}

// pureWheel returns the bytes of a valid pure-Python wheel,
// demo_py-1.0-py3-none-any.whl, the file name MakePartWith gives them.
func pureWheel(t *testing.T) string {
	t.Helper()
	fn, err := wheel.NewFilename("demo_py", "1.0", "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	md := &wheel.Metadata{}
	md.Add("Metadata-Version", "2.1")
	md.Add("Name", "demo-py")
	md.Add("Version", "1.0")
	meta, err := md.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := wheel.Write(t.Context(), &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: "demo_py/__init__.py", Data: []byte("\n"), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: meta, Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644},
		},
		Epoch: 1700000000,
	}, dir); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "demo_py-1.0-py3-none-any.whl"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// merged merges parts a (linux-aarch64) and b (linux-x86_64) into root/out,
// trusting key, and returns the folder's manifest.json, its verified
// provenance and the release policies' denials of it (a dry-run publish of
// the folder, as mkrelease publish --dry-run decides).
func merged(t *testing.T, root, out string, a, b string, key provenance.Signer, allowUnsigned bool) ([]byte, provenance.Provenance, []policies.Denial) {
	t.Helper()
	dir := filepath.Join(root, out)
	_, _, err := pipeline.Merge(context.Background(), pipeline.MergeOptions{Config: part.TestConfig(), Lock: &lock.Lock{SHA256: part.LockSHA},
		Parts: []string{a, b}, Out: dir, Trusted: []crypto.PublicKey{key.Public()}, AllowUnsigned: allowUnsigned, Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, dist.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(filepath.Join(dir, dist.NamesOf("demo", "1.0").Provenance()))
	if err != nil {
		t.Fatal(err)
	}
	v, err := provenance.NewVerifier(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(env, provenance.WithoutArtifactsUnsafe())
	if err != nil {
		t.Fatal(err)
	}
	pub, err := publish.Run(context.Background(), publish.Options{Config: part.TestConfig(), Lock: &lock.Lock{SHA256: part.LockSHA}, Dist: dir,
		To: filepath.Join(root, "channel-"+out), TrustedKeys: []crypto.PublicKey{key.Public()}, DryRun: true})
	if pub == nil {
		t.Fatalf("publish --dry-run: %v", err)
	}
	return manifest, res.Provenance, pub.Decision.Denials
}

// A merge that takes an unsigned part (--allow-unsigned-parts) says so:
// manifest.json and the signed provenance name the part, its part.json
// digest and why, the part's builder is not "signed", and the default
// release policy refuses to publish the folder under its own rule. The
// same merge of signed parts records none of it.
func TestMergeRecordsUnsignedParts(t *testing.T) {
	key := part.DevKey(t)
	root := t.TempDir()
	// A channel takes a release with a wheel: each part carries the
	// pure-Python one.
	whl := pureWheel(t)
	a := part.MakePartWith(t, root+"/a", key, nil, whl, "linux-aarch64")
	unsignedB := part.MakePartWith(t, root+"/b", nil, nil, whl, "linux-x86_64")
	signedB := part.MakePartWith(t, root+"/c", key, nil, whl, "linux-x86_64")
	partSHA, _, err := checksum.File(filepath.Join(unsignedB, dist.PartFile))
	if err != nil {
		t.Fatal(err)
	}
	manifest, prov, denials := merged(t, root, "unsigned", a, unsignedB, key, true)

	var m dist.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		t.Fatal(err)
	}
	want := []dist.ManifestPart{{Targets: []string{"linux-x86_64"}, PartSHA256: partSHA, Reason: part.ReasonNoStatement}}
	if !reflect.DeepEqual(m.Build.UnsignedParts, want) {
		t.Errorf("manifest.json build.unsigned_parts = %+v, want %+v", m.Build.UnsignedParts, want)
	}
	raw, _ := json.Marshal(prov.InternalParameters["unsigned_parts"])
	var recorded []dist.ManifestPart
	if err := json.Unmarshal(raw, &recorded); err != nil || !reflect.DeepEqual(recorded, want) {
		t.Errorf("provenance internalParameters.unsigned_parts = %s (%v), want %+v", raw, err, want)
	}
	if prov.ExternalParameters["allow_unsigned_parts"] != true {
		t.Errorf("provenance externalParameters.allow_unsigned_parts = %v, want true", prov.ExternalParameters["allow_unsigned_parts"])
	}
	for _, b := range prov.Byproducts {
		signed := b.Name == "builder:linux-aarch64"
		if b.Annotations["signed"] != signed || (b.Annotations["key"] != nil) != signed {
			t.Errorf("byproduct %s: signed %v, key %v; want signed %v", b.Name, b.Annotations["signed"], b.Annotations["key"], signed)
		}
	}
	wantDenial := "[build.parts_signed] the part of linux-x86_64 (part.json sha256 " + partSHA + ") was merged without a trusted signature (no part statement), with mkrelease merge --allow-unsigned-parts"
	if !slices.ContainsFunc(denials, func(d policies.Denial) bool {
		return d.Rule == policies.RuleBuildPartsSigned && d.Message == wantDenial
	}) {
		t.Errorf("publish --dry-run denials %+v\nwant %s", denials, wantDenial)
	}

	// The negative control: signed parts, with the flag given or not.
	for _, allow := range []bool{false, true} {
		out := fmt.Sprintf("signed-%v", allow)
		signed, prov, denials := merged(t, root, out, a, signedB, key, allow)
		if strings.Contains(string(signed), "unsigned_parts") {
			t.Errorf("%s: manifest.json of signed parts records unsigned parts:\n%s", out, signed)
		}
		if _, ok := prov.InternalParameters["unsigned_parts"]; ok {
			t.Errorf("%s: the provenance of signed parts records unsigned parts", out)
		}
		if _, ok := prov.ExternalParameters["allow_unsigned_parts"]; ok {
			t.Errorf("%s: the provenance of signed parts records allow_unsigned_parts", out)
		}
		if slices.ContainsFunc(denials, func(d policies.Denial) bool { return d.Rule == policies.RuleBuildPartsSigned }) {
			t.Errorf("%s: publish --dry-run refuses signed parts under %s: %+v", out, policies.RuleBuildPartsSigned, denials)
		}
		// But for the digest of the one part whose bytes differ (its
		// statement is not in part.json), the manifest is the unsigned
		// merge's without the record.
		var sm dist.Manifest
		if err := json.Unmarshal(signed, &sm); err != nil {
			t.Fatal(err)
		}
		m.Build.UnsignedParts = nil
		if !reflect.DeepEqual(sm, m) {
			t.Errorf("%s: manifest.json differs from the unsigned merge's beyond its record:\n%+v\n%+v", out, sm, m)
		}
	}
}
