package attest

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pin"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

func TestInvocationIDIsAnRFC9562UUID(t *testing.T) {
	uuid := regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 64 {
		id := InvocationID(func(string) string { return "" })
		if !uuid.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}
	if got := InvocationID(func(k string) string { return gh[k] }); got != "https://github.com/o/r/actions/runs/7/attempts/2" {
		t.Errorf("GitHub run: %s", got)
	}
}

// TestMaterialsToolchains checks that each toolchain is a resolved
// dependency with the digest of its executable and its version line.
func TestMaterialsToolchains(t *testing.T) {
	goSHA, ccSHA := strings.Repeat("a", 64), strings.Repeat("b", 64)
	m := &dist.Manifest{Toolchains: []dist.ManifestToolchain{
		{Name: "go", Version: "go version go1.26.8 linux/amd64", SHA256: goSHA},
		{Name: "mingw-gcc", Target: "windows-x86_64", Version: "x86_64-w64-mingw32-gcc (GCC) 12-win32", SHA256: ccSHA},
	}}
	got := Materials(m, pin.Project{Name: "demo", Version: "1.0"})
	want := []provenance.Dependency{
		{Name: "toolchain:go", URI: "urn:mkrelease:toolchain:go", Digest: map[string]string{"sha256": goSHA},
			Annotations: map[string]any{"version": "go version go1.26.8 linux/amd64"}},
		{Name: "toolchain:mingw-gcc [windows-x86_64]", URI: "urn:mkrelease:toolchain:mingw-gcc:windows-x86_64", Digest: map[string]string{"sha256": ccSHA},
			Annotations: map[string]any{"version": "x86_64-w64-mingw32-gcc (GCC) 12-win32"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Materials = %+v\nwant %+v", got, want)
	}
}

// TestProvenanceIsPathIndependent checks that two checkouts of a project in
// different folders record the same provenance predicate, every resolved
// dependency with an absolute URI that names no folder of the machine: the
// project's repository when the checkout is a work tree of one [project]
// urls names, else the project's package URL.
func TestProvenanceIsPathIndependent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const commit = "0123456789abcdef0123456789abcdef01234567"
	sha := strings.Repeat("5", 64)
	started := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/release.yml@refs/tags/v1",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "1"}
	manifest := &dist.Manifest{
		Sources: []dist.ManifestSource{
			{Name: "core", Kind: "local", Location: "backend/src", Tree: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
			{Name: "up", Kind: "git", Location: "https://github.com/upstream/up.git", Commit: commit, Tree: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
			{Name: "vendored", Kind: "archive", Location: "third_party/v-1.0.tar.gz", SHA256: sha, Tree: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
			{Name: "fetched", Kind: "archive", Location: "https://example.org/f-2.0.tar.gz", SHA256: sha, Tree: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
		},
		Overlays: []dist.ManifestOverlay{{Name: "fix", Source: "core", Kind: "patch", Path: "backend/overlays/0001-fix.patch", Digest: "sha256:" + sha, Result: "h1:x"}},
		Targets: []dist.ManifestTarget{
			{Name: "linux-x86_64", Dependencies: []dist.ManifestArtifact{{Path: "dependencies/Typing_Extensions-4.12.2+local-py3-none-any.whl", Name: "Typing_Extensions==4.12.2+local", SHA256: sha, Size: 1}}},
		},
	}
	// checkout makes a copy of the project in its own folder, at
	// packaging/ of a work tree whose remote is remote ("": not a work
	// tree), and the release built there.
	checkout := func(t *testing.T, name, remote string) *release.Release {
		t.Helper()
		top := filepath.Join(t.TempDir(), name)
		dir := filepath.Join(top, "packaging")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if remote != "" {
			for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", remote}} {
				cmd := exec.Command("git", append([]string{"-C", top}, args...)...)
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
		}
		c := &config.Config{Dir: dir, SHA256: sha, Project: config.Project{NormalizedName: "demo", Version: "1.0",
			URLs: map[string]string{"Homepage": "https://demo.example.org", "Repository": "https://github.com/demo-dev/demo"}}}
		r := &release.Release{Config: c, Lock: &lock.Lock{SHA256: sha}, Epoch: 1793491200, Targets: []config.Target{{Name: "linux-x86_64"}},
			Manifest: manifest}
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindWheel, Path: "demo-1.0-py3-none-any.whl", SHA256: sha, Size: 1})
		return r
	}
	for _, tc := range []struct {
		name                 string
		remotes              [2]string
		local, vendored, fix string
	}{
		{"clones of the project's repository (remotes spelt differently)",
			[2]string{"git@github.com:demo-dev/demo.git", "https://github.com/demo-dev/demo"},
			"git+https://github.com/demo-dev/demo#packaging/backend/src",
			"git+https://github.com/demo-dev/demo#packaging/third_party/v-1.0.tar.gz",
			"git+https://github.com/demo-dev/demo#packaging/backend/overlays/0001-fix.patch"},
		{"copies outside any work tree", [2]string{},
			"pkg:generic/demo@1.0#backend/src",
			"pkg:generic/demo@1.0#third_party/v-1.0.tar.gz",
			"pkg:generic/demo@1.0#backend/overlays/0001-fix.patch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var statements [2][]byte
			for i, name := range []string{"a", "a-checkout-in-another-folder"} {
				r := checkout(t, name, tc.remotes[i])
				p := Stage{Getenv: func(k string) string { return gh[k] }}.Provenance(r, ProjectOf(context.Background(), r.Config), started, started.Add(time.Minute))
				uris := map[string]string{}
				for _, d := range p.ResolvedDependencies {
					uris[d.Name] = d.URI
					if u, err := url.Parse(d.URI); err != nil || !u.IsAbs() {
						t.Errorf("%s: URI %q is not absolute (%v)", d.Name, d.URI, err)
					}
				}
				for dep, want := range map[string]string{
					"source:core": tc.local, "source:up": "git+https://github.com/upstream/up.git@" + commit,
					"source:vendored": tc.vendored, "source:fetched": "https://example.org/f-2.0.tar.gz", "overlay:fix": tc.fix,
					// A dependency wheel by the purl the SBOM gives it: the
					// file_name qualifier tells the wheels of one version apart.
					"dependencies/Typing_Extensions-4.12.2+local-py3-none-any.whl": "pkg:pypi/typing-extensions@4.12.2%2Blocal?file_name=Typing_Extensions-4.12.2%2Blocal-py3-none-any.whl",
				} {
					if uris[dep] != want {
						t.Errorf("%s: URI %q, want %q", dep, uris[dep], want)
					}
				}
				st, err := p.Statement()
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(st), r.Config.Dir) || strings.Contains(string(st), "file:") {
					t.Errorf("the statement names a folder of the machine:\n%s", st)
				}
				statements[i] = st
			}
			if string(statements[0]) != string(statements[1]) {
				t.Errorf("two checkouts give different statements:\n%s\n%s", statements[0], statements[1])
			}
		})
	}
}

// TestProvenanceMetadataFiles checks that the pyproject.toml files a
// release takes its metadata from are recorded as configuration, beside
// release.toml, and that a release without any records none.
func TestProvenanceMetadataFiles(t *testing.T) {
	sha := strings.Repeat("6", 64)
	for _, tc := range []struct {
		name  string
		files []config.FileDigest
		want  any
	}{
		{"from", []config.FileDigest{{Path: "py/pyproject.toml", SHA256: sha}}, map[string]any{"py/pyproject.toml": sha}},
		{"release.toml alone", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &config.Config{Dir: t.TempDir(), SHA256: sha, MetadataFiles: tc.files, Project: config.Project{NormalizedName: "demo", Version: "1.0"}}
			r := &release.Release{Config: c, Lock: &lock.Lock{SHA256: sha}, Targets: []config.Target{{Name: "linux-x86_64"}}}
			p := Stage{Getenv: func(string) string { return "" }}.Provenance(r, pin.Project{Name: "demo", Version: "1.0"}, time.Unix(0, 0), time.Unix(1, 0))
			got, ok := p.ExternalParameters["metadata_files_sha256"]
			if !ok {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("externalParameters.metadata_files_sha256 = %v, want %v", got, tc.want)
			}
		})
	}
}

// The provenance lists every action whose outputs a remote cache's record
// gave, with the writer who signed it: taken in this build, or by an
// earlier one whose local cache served them now. Actions built here are
// not listed, and a build with none has no such parameter.
func TestProvenanceRemoteActions(t *testing.T) {
	sha := strings.Repeat("6", 64)
	key1, key2, key3 := strings.Repeat("1", 64), strings.Repeat("2", 64), strings.Repeat("3", 64)
	writer := strings.Repeat("a", 64)
	const url = "https://cache.example.org/mk"
	for _, tc := range []struct {
		name    string
		actions []build.ActionRecord
		want    any
	}{
		{"every action built here", []build.ActionRecord{{Step: "s", Target: "t", Key: key1}, {Step: "s", Target: "u", Key: key2, Cached: true, RemoteIgnored: true}}, nil},
		{"served now and earlier", []build.ActionRecord{
			{Step: "s", Target: "t", Key: key1, Cached: true, Remote: true, RemoteWriter: writer, RemoteCache: url},
			{Step: "s", Target: "u", Key: key2},
			{Step: "r", Target: "u", Key: key3, Cached: true, RemoteWriter: writer, RemoteCache: url},
		}, []map[string]any{
			{"step": "s", "target": "t", "key": key1, "cache": url, "writer": writer},
			{"step": "r", "target": "u", "key": key3, "cache": url, "writer": writer},
		}},
		{"no compile stage report", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &config.Config{Dir: t.TempDir(), SHA256: sha, Project: config.Project{NormalizedName: "demo", Version: "1.0"}}
			r := &release.Release{Config: c, Lock: &lock.Lock{SHA256: sha}, Targets: []config.Target{{Name: "t"}}}
			s := Stage{Getenv: func(string) string { return "" }}
			if tc.actions != nil {
				s.Compiled = &build.Report{Actions: tc.actions}
			}
			p := s.Provenance(r, pin.Project{Name: "demo", Version: "1.0"}, time.Unix(0, 0), time.Unix(1, 0))
			got, ok := p.InternalParameters[RemoteActionsParameter]
			if !ok {
				got = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("internalParameters.%s = %v, want %v", RemoteActionsParameter, got, tc.want)
			}
		})
	}
}
