package part

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/sbom"
)

const (
	tomlSHA = "1111111111111111111111111111111111111111111111111111111111111111"
	lockSHA = "2222222222222222222222222222222222222222222222222222222222222222"
)

func testConfig() *config.Config {
	return &config.Config{File: "release.toml", SHA256: tomlSHA,
		Project: config.Project{Name: "demo", NormalizedName: "demo", Version: "1.0"},
		Targets: []config.Target{{Name: "linux-x86_64"}, {Name: "linux-aarch64"}}}
}

// makePart writes a small part holding targets into dir, as the part
// stage records one, signed by signer when it is not nil; change edits
// part.json before it is written.
func makePart(t *testing.T, dir string, signer provenance.Signer, change func(*Manifest), targets ...string) string {
	t.Helper()
	return makePartWith(t, dir, signer, change, "", targets...)
}

// pureWheel is the name of the pure-Python wheel makePartWith writes.
const pureWheel = "demo_py-1.0-py3-none-any.whl"

// makePartWith is makePart, and when pure is not empty, the part also
// carries pureWheel with the bytes pure, as a wheel of no one target.
func makePartWith(t *testing.T, dir string, signer provenance.Signer, change func(*Manifest), pure string, targets ...string) string {
	t.Helper()
	write := func(rel, data string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := "# 1.0\n"
	write(dist.NotesFile, notes)
	as := []dist.Artifact{{Kind: dist.KindNotes, Path: dist.NotesFile, SHA256: checksum.Bytes([]byte(notes)), Size: int64(len(notes))}}
	if pure != "" {
		write(pureWheel, pure)
		as = append(as, dist.Artifact{Kind: dist.KindWheel, Path: pureWheel, Name: "demo-py", PlatformTag: "any", SHA256: checksum.Bytes([]byte(pure)), Size: int64(len(pure))})
	}
	m := &dist.Manifest{Schema: dist.ManifestSchema, Project: dist.ManifestProject{Name: "demo", Version: "1.0"}, Mkrelease: release.ToolVersion,
		SourceDateEpoch: 1700000000, Build: dist.ManifestBuild{Sandboxed: true, Isolation: "sandbox"}}
	doc := sbom.Release{Name: "demo", Version: "1.0", Created: 1700000000, Tool: "mkrelease-" + release.ToolVersion}
	for _, tg := range targets {
		rel := dist.BinDir + "/" + tg + "/tool"
		data := "binary of " + tg
		write(rel, data)
		as = append(as, dist.Artifact{Kind: dist.KindBinary, Path: rel, Target: tg, Step: "compile", SHA256: checksum.Bytes([]byte(data)), Size: int64(len(data))})
		m.Targets = append(m.Targets, dist.ManifestTarget{Name: tg})
		doc.Targets = append(doc.Targets, sbom.Target{Name: tg})
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	write(dist.ManifestFile, string(data))
	as = append(as, dist.Artifact{Kind: dist.KindManifest, Path: dist.ManifestFile, SHA256: checksum.Bytes(data), Size: int64(len(data))})
	if _, err := dist.WriteArtifactList(dir, dist.NewArtifactList("demo", "1.0", as)); err != nil {
		t.Fatal(err)
	}
	pm := &Manifest{Schema: Schema, Project: m.Project, Mkrelease: release.ToolVersion, SourceDateEpoch: m.SourceDateEpoch,
		Config: Config{ReleaseTOML: tomlSHA, ReleaseLock: lockSHA}, Toolchains: []dist.ManifestToolchain{{Name: "go", Version: "go1.26.8"}},
		Targets: targets, Host: Host{OS: "linux", Arch: "amd64", Builder: "https://mkrelease.dev/builders/local@v1", Invocation: "urn:uuid:x"},
		Sandbox: Sandbox{Isolated: true, Name: "bubblewrap", Namespaces: []string{"user"}, Network: true}, SBOM: doc}
	folder, err := dist.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range folder.Files(nil) {
		pm.Files = append(pm.Files, File{Path: a.Path, SHA256: a.SHA256, Size: a.Size})
	}
	if change != nil {
		change(pm)
	}
	enc, err := pm.Encode()
	if err != nil {
		t.Fatal(err)
	}
	write(dist.PartFile, string(enc))
	if signer != nil {
		st, err := Statement(pm, checksum.Bytes(enc))
		if err != nil {
			t.Fatal(err)
		}
		env, err := provenance.SignStatement(context.Background(), signer, st)
		if err != nil {
			t.Fatal(err)
		}
		write(dist.PartStatementFile, string(env))
	}
	return dir
}

func devKey(t *testing.T) provenance.Signer {
	t.Helper()
	s, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// refusal runs Check and returns its finding lines, each with the folder
// of the test replaced by $T. Without trusted keys it allows unsigned
// parts: the refusals it is given are about something else.
func refusal(t *testing.T, root string, dirs []string, trusted []crypto.PublicKey) []string {
	t.Helper()
	_, err := Check(context.Background(), dirs, CheckOptions{Config: testConfig(), Lock: &lock.Lock{SHA256: lockSHA}, Trusted: trusted, AllowUnsigned: trusted == nil})
	var fe *finding.Error
	if !errors.As(err, &fe) {
		t.Fatalf("Check = %v, want a *finding.Error", err)
	}
	if fe.ExitCode() != 1 {
		t.Errorf("exit code %d, want 1", fe.ExitCode())
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n")[1:] {
		if strings.HasPrefix(l, "\thint:") {
			continue
		}
		out = append(out, strings.ReplaceAll(strings.TrimPrefix(l, "  "), root, "$T"))
	}
	return out
}

func TestCheckAcceptsParts(t *testing.T) {
	root := t.TempDir()
	key := devKey(t)
	a := makePart(t, filepath.Join(root, "a"), key, nil, "linux-aarch64")
	b := makePart(t, filepath.Join(root, "b"), key, nil, "linux-x86_64")
	parts, err := Check(context.Background(), []string{a, b}, CheckOptions{Config: testConfig(), Lock: &lock.Lock{SHA256: lockSHA}, Trusted: []crypto.PublicKey{key.Public()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Dir != b || parts[1].Dir != a {
		t.Fatalf("parts not in release.toml's target order: %v", parts)
	}
	if parts[0].KeyID != provenance.KeyID(key.Public()) || parts[0].Statement == "" {
		t.Errorf("statement not checked: %+v", parts[0])
	}
}

func TestCheckAcceptsPartsWithOnePureWheel(t *testing.T) {
	root := t.TempDir()
	a := makePartWith(t, filepath.Join(root, "a"), nil, nil, "wheel", "linux-aarch64")
	b := makePartWith(t, filepath.Join(root, "b"), nil, nil, "wheel", "linux-x86_64")
	if _, err := Check(context.Background(), []string{a, b}, CheckOptions{Config: testConfig(), Lock: &lock.Lock{SHA256: lockSHA}, AllowUnsigned: true}); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusals(t *testing.T) {
	key, other := devKey(t), devKey(t)
	trusted := []crypto.PublicKey{key.Public()}
	cases := []struct {
		name    string
		make    func(t *testing.T, root string) []string
		trusted []crypto.PublicKey
		want    []string
	}{
		{"another release.toml", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, func(m *Manifest) { m.Config.ReleaseTOML = strings.Repeat("3", 64) }, "linux-x86_64"),
				makePart(t, root+"/b", nil, nil, "linux-aarch64")}
		}, nil, []string{"$T/a/part.json: config.release_toml_sha256: " + strings.Repeat("3", 64) + ", but release.toml is " + tomlSHA + ": the part was built from another release.toml"}},
		{"another lock", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64"),
				makePart(t, root+"/b", nil, func(m *Manifest) { m.Config.ReleaseLock = "" }, "linux-aarch64")}
		}, nil, []string{"$T/b/part.json: config.release_lock_sha256: (none), but this release.lock is " + lockSHA + ": the part was built from another lock"}},
		{"another mkrelease", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, func(m *Manifest) { m.Mkrelease = "0.0.9" }, "linux-x86_64", "linux-aarch64")}
		}, nil, []string{"$T/a/part.json: mkrelease: 0.0.9, but this mkrelease is " + release.ToolVersion + ": build and merge with one mkrelease"}},
		{"another epoch", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64"),
				makePart(t, root+"/b", nil, func(m *Manifest) { m.SourceDateEpoch = 1 }, "linux-aarch64")}
		}, nil, []string{"$T/b/part.json: source_date_epoch: 1, but part $T/a has 1700000000"}},
		{"two parts for one target", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64", "linux-aarch64"), makePart(t, root+"/b", nil, nil, "linux-aarch64")}
		}, nil, []string{"$T/b/part.json: targets: linux-aarch64: part $T/a holds it too: pass one part per target"}},
		{"a missing target", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64")}
		}, nil, []string{"release.toml: targets: linux-aarch64: no part holds it: build it with mkrelease build --target linux-aarch64 --part, and pass that part too"}},
		{"a target release.toml does not declare", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64", "linux-aarch64", "linux-riscv64")}
		}, nil, []string{"$T/a/part.json: targets: linux-riscv64: release.toml declares no such target (it declares linux-x86_64, linux-aarch64)"}},
		{"a changed, an unlisted and a missing file", func(t *testing.T, root string) []string {
			a := makePart(t, root+"/a", nil, nil, "linux-x86_64", "linux-aarch64")
			os.WriteFile(filepath.Join(a, "build/linux-x86_64/tool"), []byte("binary of linux-x86_6X"), 0o644)
			os.WriteFile(filepath.Join(a, "stray.txt"), []byte("?"), 0o644)
			os.Remove(filepath.Join(a, "build/linux-aarch64/tool"))
			return []string{a}
		}, nil, []string{
			"$T/a/build/linux-x86_64/tool: sha256 " + checksum.Bytes([]byte("binary of linux-x86_6X")) + " (22 bytes), part.json lists " + checksum.Bytes([]byte("binary of linux-x86_64")) + " (22 bytes): the file changed since the part was built",
			"$T/a/stray.txt: part.json does not list it: remove it, or rebuild the part",
			"$T/a/build/linux-aarch64/tool: missing: part.json lists it",
		}},
		{"not a part", func(t *testing.T, root string) []string {
			os.MkdirAll(root+"/dist", 0o755)
			return []string{root + "/dist", makePart(t, root+"/a", nil, nil, "linux-x86_64", "linux-aarch64")}
		}, nil, []string{"$T/dist/part.json: missing: this folder is not a part (build one with mkrelease build --target T --part --out DIR)"}},
		{"a statement by an untrusted key", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", other, nil, "linux-x86_64"), makePart(t, root+"/b", key, nil, "linux-aarch64")}
		}, trusted, []string{"$T/a/part.intoto.jsonl: not signed by a trusted key (*): sign every part with a key [signing] trusted_keys or --trusted-key names"}},
		{"no statement while keys are trusted", func(t *testing.T, root string) []string {
			return []string{makePart(t, root+"/a", nil, nil, "linux-x86_64"), makePart(t, root+"/b", key, nil, "linux-aarch64")}
		}, trusted, []string{"$T/a/part.intoto.jsonl: missing: every part must be signed by a trusted key (build it with a [signing] key or --key), or be accepted unsigned with --allow-unsigned-parts"}},
		{"a pure wheel whose bytes differ between parts", func(t *testing.T, root string) []string {
			return []string{makePartWith(t, root+"/a", nil, nil, "wheel", "linux-x86_64"), makePartWith(t, root+"/b", nil, nil, "other wheel", "linux-aarch64")}
		}, nil, []string{"$T/b/" + pureWheel + ": a pure-Python wheel (py3-none-any, one file for every target) whose bytes differ from part $T/a's (sha256 " + checksum.Bytes([]byte("other wheel")) + ", not " + checksum.Bytes([]byte("wheel")) + "): the parts were not built from the same inputs"}},
		{"a pure wheel one part lacks", func(t *testing.T, root string) []string {
			return []string{makePartWith(t, root+"/a", nil, nil, "wheel", "linux-x86_64"), makePart(t, root+"/b", nil, nil, "linux-aarch64")}
		}, nil, []string{"$T/a/" + pureWheel + ": a pure-Python wheel (py3-none-any, one file for every target) that part $T/b lacks: the parts were not built from the same inputs"}},
		{"another part's statement", func(t *testing.T, root string) []string {
			a := makePart(t, root+"/a", key, nil, "linux-x86_64")
			b := makePart(t, root+"/b", key, nil, "linux-aarch64")
			data, _ := os.ReadFile(filepath.Join(b, dist.PartStatementFile))
			os.WriteFile(filepath.Join(a, dist.PartStatementFile), data, 0o644)
			return []string{a, b}
		}, trusted, []string{"$T/a/part.intoto.jsonl: subject: it must name part.json with sha256 * the part's own; it names \"part.json *\": the statement is another part's"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := tc.make(t, root)
			got := refusal(t, root, dirs, tc.trusted)
			if len(got) != len(tc.want) {
				t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			for i := range got {
				if !match(tc.want[i], got[i]) {
					t.Errorf("finding %d:\n got %s\nwant %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// match compares a finding line with a pattern in which * stands for
// any text.
func match(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1:] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return s == ""
}

func TestParseManifestStrict(t *testing.T) {
	good := `{"schema":"` + Schema + `","targets":["t"],"files":[{"path":"a","sha256":"` + strings.Repeat("a", 64) + `","size":1}]}`
	if _, err := ParseManifest([]byte(good)); err != nil {
		t.Fatalf("good: %v", err)
	}
	for name, data := range map[string]string{
		"unknown field":  strings.Replace(good, `"targets"`, `"extra":1,"targets"`, 1),
		"second value":   good + "{}",
		"other schema":   strings.Replace(good, Schema, "x", 1),
		"no targets":     strings.Replace(good, `["t"]`, `[]`, 1),
		"bad target":     strings.Replace(good, `["t"]`, `["../t"]`, 1),
		"escaping path":  strings.Replace(good, `"path":"a"`, `"path":"../a"`, 1),
		"absolute path":  strings.Replace(good, `"path":"a"`, `"path":"/a"`, 1),
		"short digest":   strings.Replace(good, strings.Repeat("a", 64), "aa", 1),
		"listed twice":   strings.Replace(good, `}]}`, `},{"path":"a","sha256":"`+strings.Repeat("a", 64)+`","size":1}]}`, 1),
		"negative size":  strings.Replace(good, `"size":1`, `"size":-1`, 1),
		"not JSON":       "part",
		"backslash path": strings.Replace(good, `"path":"a"`, `"path":"a\\\\b"`, 1),
	} {
		if _, err := ParseManifest([]byte(data)); err == nil {
			t.Errorf("%s: accepted %s", name, data)
		}
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"schema":"` + Schema + `","targets":["t"],"files":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data)
		if err != nil {
			return
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseManifest(enc); err != nil {
			t.Fatalf("re-encoded part.json refused: %v", err)
		}
	})
}

// TestCheckMetadataFiles checks that parts built from another
// pyproject.toml than the one release.toml takes its metadata from here are
// refused, naming the file, as parts of another release.toml are.
func TestCheckMetadataFiles(t *testing.T) {
	root := t.TempDir()
	local, other := strings.Repeat("4", 64), strings.Repeat("5", 64)
	with := func(sha string) func(*Manifest) {
		return func(m *Manifest) { m.Config.MetadataFiles = map[string]string{"py/pyproject.toml": sha} }
	}
	dirs := []string{makePart(t, root+"/a", nil, with(local), "linux-x86_64"), makePart(t, root+"/b", nil, with(other), "linux-aarch64")}
	c := testConfig()
	c.MetadataFiles = []config.FileDigest{{Path: "py/pyproject.toml", SHA256: local}}
	_, err := Check(context.Background(), dirs, CheckOptions{Config: c, Lock: &lock.Lock{SHA256: lockSHA}, AllowUnsigned: true})
	var fe *finding.Error
	if !errors.As(err, &fe) {
		t.Fatalf("Check = %v, want a *finding.Error", err)
	}
	want := "b/part.json: config.metadata_files_sha256.py/pyproject.toml: " + other + ", but py/pyproject.toml is " + local + ": the part was built from another py/pyproject.toml"
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "a/part.json") {
		t.Errorf("Check = %v\nwant only the finding %s", err, want)
	}
}

// TestCheckTrust: merge takes no part on trust. Without a trusted key it
// refuses (exit 1), naming the missing trust and the remedies, unless
// unsigned parts are allowed; allowed, the parts no trusted key vouches
// for are the ones [Unsigned] lists, with why, and a statement by a key
// that is not trusted is refused all the same.
func TestCheckTrust(t *testing.T) {
	key, other := devKey(t), devKey(t)
	trusted := []crypto.PublicKey{key.Public()}
	const noTrust = "release.toml: [signing] trusted_keys: no trusted key to check the parts' signatures with, and merge takes no part on trust: " +
		"pass the public key of each machine that built a part (--trusted-key PUB.pem, repeatable) or list them in [signing] trusted_keys; " +
		"or accept parts no trusted key vouches for with --allow-unsigned-parts (manifest.json and the provenance record it, and the default release policy refuses to publish such a release)"
	const missing = ": missing: every part must be signed by a trusted key (build it with a [signing] key or --key), or be accepted unsigned with --allow-unsigned-parts"
	tests := []struct {
		name          string
		signers       [2]provenance.Signer // of the x86_64 part, the aarch64 part
		trusted       []crypto.PublicKey
		allowUnsigned bool
		refused       []string // the finding lines; none: accepted
		unsigned      []string // accepted: "TARGET REASON" of each part Unsigned lists
	}{
		{"signed parts, no trusted key", [2]provenance.Signer{key, key}, nil, false, []string{noTrust}, nil},
		{"unsigned parts, no trusted key", [2]provenance.Signer{nil, nil}, nil, false,
			[]string{noTrust, "$T/a/part.intoto.jsonl" + missing, "$T/b/part.intoto.jsonl" + missing}, nil},
		{"signed parts, the key trusted", [2]provenance.Signer{key, key}, trusted, false, nil, nil},
		{"an unsigned part, the key trusted", [2]provenance.Signer{key, nil}, trusted, false, []string{"$T/b/part.intoto.jsonl" + missing}, nil},
		{"an unsigned part allowed, the key trusted", [2]provenance.Signer{key, nil}, trusted, true, nil,
			[]string{"linux-aarch64 " + ReasonNoStatement}},
		{"signed and unsigned parts allowed, no trusted key", [2]provenance.Signer{key, nil}, nil, true, nil,
			[]string{"linux-x86_64 " + ReasonNotChecked, "linux-aarch64 " + ReasonNoStatement}},
		{"a statement by an untrusted key, unsigned parts allowed", [2]provenance.Signer{other, nil}, trusted, true,
			[]string{"$T/a/part.intoto.jsonl: not signed by a trusted key (*): sign every part with a key [signing] trusted_keys or --trusted-key names"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dirs := []string{makePart(t, root+"/a", tt.signers[0], nil, "linux-x86_64"), makePart(t, root+"/b", tt.signers[1], nil, "linux-aarch64")}
			parts, err := Check(context.Background(), dirs, CheckOptions{Config: testConfig(), Lock: &lock.Lock{SHA256: lockSHA}, Trusted: tt.trusted, AllowUnsigned: tt.allowUnsigned})
			if tt.refused != nil {
				var fe *finding.Error
				if !errors.As(err, &fe) || fe.ExitCode() != 1 {
					t.Fatalf("Check = %v, want a refusal with exit status 1", err)
				}
				var got []string
				for _, l := range strings.Split(err.Error(), "\n")[1:] {
					if !strings.HasPrefix(l, "\thint:") {
						got = append(got, strings.ReplaceAll(strings.TrimPrefix(l, "  "), root, "$T"))
					}
				}
				if len(got) != len(tt.refused) {
					t.Fatalf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.refused, "\n"))
				}
				for i := range got {
					if !match(tt.refused[i], got[i]) {
						t.Errorf("finding %d:\n got %s\nwant %s", i, got[i], tt.refused[i])
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Check = %v, want the parts accepted", err)
			}
			var got []string
			sha := map[string]string{}
			for _, p := range parts {
				sha[p.Manifest.Targets[0]] = p.SHA256
			}
			for _, u := range Unsigned(parts) {
				got = append(got, strings.Join(u.Targets, ",")+" "+u.Reason)
				if u.PartSHA256 != sha[u.Targets[0]] {
					t.Errorf("unsigned part %v: part_sha256 %s, want its part.json's %s", u.Targets, u.PartSHA256, sha[u.Targets[0]])
				}
			}
			if !slices.Equal(got, tt.unsigned) {
				t.Errorf("Unsigned = %q, want %q", got, tt.unsigned)
			}
			for _, p := range parts {
				signedByKey := p.Manifest.Targets[0] == "linux-x86_64" && tt.signers[0] == key || p.Manifest.Targets[0] == "linux-aarch64" && tt.signers[1] == key
				if want := signedByKey && tt.trusted != nil; p.Verified() != want {
					t.Errorf("part %v: Verified() = %v, want %v", p.Manifest.Targets, p.Verified(), want)
				}
			}
		})
	}
}
