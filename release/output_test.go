package release

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/dist"
)

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, files map[string]string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(p, 0o755)
		for f, c := range files {
			os.WriteFile(filepath.Join(p, f), []byte(c), 0o644)
		}
		return p
	}
	ok := []string{filepath.Join(dir, "absent"), mk("empty", nil), mk("earlier", map[string]string{"manifest.json": `{"schema":"` + dist.ManifestSchema + `"}`})}
	for _, p := range ok {
		if err := CheckOutput(p); err != nil {
			t.Errorf("CheckOutput(%s) = %v", p, err)
		}
	}
	bad := []string{mk("notes", map[string]string{"notes.txt": "mine"}), mk("other", map[string]string{"manifest.json": `{"schema":"x"}`})}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	bad = append(bad, filepath.Join(dir, "file"))
	for _, p := range bad {
		var oe *OutputError
		if err := CheckOutput(p); !errors.As(err, &oe) || oe.ExitCode() != 2 {
			t.Errorf("CheckOutput(%s) = %v, want an OutputError", p, err)
		}
	}
}

// The manifest holds no run-specific paths and is byte-stable.
func TestManifestIsStable(t *testing.T) {
	build := func(stage string) []byte {
		r := &Release{
			Config:  &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}, SHA256: "aa", Targets: []config.Target{{Name: "t1", Env: map[string]string{"GOOS": "linux", "CC": "gcc"}}}},
			Lock:    &lock.Lock{SHA256: "bb"},
			Targets: []config.Target{{Name: "t1", Env: map[string]string{"GOOS": "linux", "CC": "gcc"}}},
			Epoch:   1793491200, Stage: stage,
			Found: &lock.Lock{Sources: []lock.Source{{Name: "s", Kind: "local", Location: "src", Tree: "h1:x", Files: []string{"should not appear"}}}},
		}
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindBinary, Path: "build/t1/b", Target: "t1", SHA256: "cc", Size: 1},
			dist.Artifact{Kind: dist.KindBinary, Path: "build/t1/a", Target: "t1", SHA256: "dd", Size: 2})
		if err := (ManifestStage{}).Run(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(stage, "manifest.json"))
		return b
	}
	a, b := build(t.TempDir()), build(t.TempDir())
	if string(a) != string(b) {
		t.Errorf("manifest differs between runs:\n%s\n%s", a, b)
	}
	var m dist.Manifest
	if err := json.Unmarshal(a, &m); err != nil {
		t.Fatal(err)
	}
	if m.Targets[0].Outputs[0].Path != "build/t1/a" || a[len(a)-1] != '\n' {
		t.Errorf("outputs not sorted or no trailing newline: %s", a)
	}
	if strings.Contains(string(a), "should not appear") || strings.Contains(string(a), os.TempDir()) {
		t.Errorf("manifest leaks file lists or temporary paths:\n%s", a)
	}
}

// twoTargetRelease is a release of two targets, linux-x86_64 and
// linux-aarch64, of which it builds those named: a step and a toolchain
// for both, a step (reading a source of its own, with an overlay) and a
// toolchain for aarch64 alone, and outputs, a wheel and a bundle per
// target built.
func twoTargetRelease(build ...string) *Release {
	targets := []config.Target{{Name: "linux-x86_64", Env: map[string]string{"CC": "gcc"}}, {Name: "linux-aarch64", Env: map[string]string{"CC": "aarch64-linux-gnu-gcc"}}}
	c := &config.Config{Project: config.Project{NormalizedName: "demo", Version: "1.0"}, SHA256: "aa", Targets: targets,
		Build: config.Build{Steps: []config.Step{
			{Name: "lib", Source: "core", Outputs: []string{"lib.so"}},
			{Name: "arm-fixups", Source: "arm-headers", Targets: []string{"linux-aarch64"}},
		}}}
	r := &Release{Config: c, Lock: &lock.Lock{SHA256: "bb"}, Epoch: 1793491200,
		Found: &lock.Lock{
			Sources: []lock.Source{{Name: "core", Kind: "local", Location: "src", Tree: "h1:core"},
				{Name: "arm-headers", Kind: "local", Location: "arm", Tree: "h1:arm"}},
			Overlays: []lock.Overlay{{Name: "fix", Source: "core", Kind: "patch", Path: "fix.patch", Digest: "sha256:01", Result: "h1:core2"},
				{Name: "arm-fix", Source: "arm-headers", Kind: "patch", Path: "arm.patch", Digest: "sha256:02", Result: "h1:arm2"}},
			Toolchains: []lock.Toolchain{{Name: "go", Version: "go1.26", SHA256: strings.Repeat("a", 64), Executable: "/usr/local/go/bin/go"},
				{Name: "cc", Target: "linux-x86_64", Version: "gcc 12", SHA256: strings.Repeat("b", 64), Executable: "/usr/bin/x86_64-linux-gnu-gcc-12"},
				{Name: "cc", Target: "linux-aarch64", Version: "aarch64-linux-gnu-gcc 12", SHA256: strings.Repeat("c", 64), Executable: "/usr/bin/aarch64-linux-gnu-gcc-12"}},
		}}
	for _, t := range targets {
		if !slices.Contains(build, t.Name) {
			continue
		}
		r.Targets = append(r.Targets, t)
		r.Artifacts.Add(
			dist.Artifact{Kind: dist.KindBinary, Path: "build/" + t.Name + "/lib.so", Target: t.Name, Step: "lib", SHA256: "lib " + t.Name, Size: 1},
			dist.Artifact{Kind: dist.KindWheel, Path: "demo-1.0-py3-none-" + t.Name + ".whl", Name: "demo", Target: t.Name, PlatformTag: t.Name, SHA256: "whl " + t.Name, Size: 2},
			dist.Artifact{Kind: dist.KindBundle, Path: "demo-1.0-" + t.Name + ".tar.gz", Target: t.Name, SHA256: "bundle " + t.Name, Size: 3})
	}
	return r
}

// A target's manifest holds that target's inputs and outputs alone, and
// is the same whether the release builds it alone or with another target.
func TestTargetManifest(t *testing.T) {
	for _, tc := range []struct {
		target, other string
		sources       []string
		overlays      []string
		toolchains    []string
	}{
		{"linux-x86_64", "linux-aarch64", []string{"core"}, []string{"fix"}, []string{"go", "cc/linux-x86_64"}},
		{"linux-aarch64", "linux-x86_64", []string{"core", "arm-headers"}, []string{"fix", "arm-fix"}, []string{"go", "cc/linux-aarch64"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			both, alone := twoTargetRelease(tc.target, tc.other), twoTargetRelease(tc.target)
			encode := func(m *dist.Manifest) []byte {
				data, err := json.MarshalIndent(m, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
			m := TargetManifest(both, tc.target, Facts{})
			got := encode(m)
			if again := encode(TargetManifest(alone, tc.target, Facts{})); string(got) != string(again) {
				t.Errorf("the manifest of %s differs with and without %s:\n%s\n%s", tc.target, tc.other, got, again)
			}
			if strings.Contains(string(got), tc.other) {
				t.Errorf("the manifest of %s mentions %s:\n%s", tc.target, tc.other, got)
			}
			var sources, overlays, toolchains []string
			for _, s := range m.Sources {
				sources = append(sources, s.Name)
			}
			for _, o := range m.Overlays {
				overlays = append(overlays, o.Name)
			}
			for _, tl := range m.Toolchains {
				toolchains = append(toolchains, strings.TrimSuffix(tl.Name+"/"+tl.Target, "/"))
			}
			for _, c := range []struct {
				what      string
				got, want []string
			}{{"sources", sources, tc.sources}, {"overlays", overlays, tc.overlays}, {"toolchains", toolchains, tc.toolchains}} {
				if !slices.Equal(c.got, c.want) {
					t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
				}
			}
			// Its target entry is the release manifest's, less the bundle.
			var want dist.ManifestTarget
			for _, mt := range BuildManifest(both, Facts{}).Targets {
				if mt.Name == tc.target {
					want = mt
				}
			}
			want.Bundle = nil
			if len(m.Targets) != 1 || string(encode(&dist.Manifest{Targets: m.Targets})) != string(encode(&dist.Manifest{Targets: []dist.ManifestTarget{want}})) {
				t.Errorf("targets = %+v, want [%+v]", m.Targets, want)
			}
		})
	}
	// Each toolchain is its version line and the digest of its executable,
	// never the path it was found at on the machine that built.
	m, err := json.Marshal(BuildManifest(twoTargetRelease("linux-x86_64"), Facts{}).Toolchains)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"name":"go","version":"go1.26","sha256":"` + strings.Repeat("a", 64) + `"},` +
		`{"name":"cc","target":"linux-x86_64","version":"gcc 12","sha256":"` + strings.Repeat("b", 64) + `"},` +
		`{"name":"cc","target":"linux-aarch64","version":"aarch64-linux-gnu-gcc 12","sha256":"` + strings.Repeat("c", 64) + `"}]`; string(m) != want {
		t.Errorf("manifest toolchains = %s\nwant %s", m, want)
	}
	// The release's own manifest still lists everything.
	full := BuildManifest(twoTargetRelease("linux-x86_64", "linux-aarch64"), Facts{})
	if len(full.Targets) != 2 || len(full.Sources) != 2 || len(full.Overlays) != 2 || len(full.Toolchains) != 3 || full.Targets[0].Bundle == nil {
		t.Errorf("release manifest narrowed: %+v", full)
	}
}
