package part_test

import (
	"context"
	"crypto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/part"
	"github.com/mkrelease/mkrelease/pipeline"
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
