package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/provenance"
)

// A release signs three times (provenance, evidence, summary) through one
// session: an encrypted key's password is asked once, release.toml read
// once.
func TestSessionLoadsOnce(t *testing.T) {
	dir := t.TempDir()
	key, pub := filepath.Join(dir, "release.key"), filepath.Join(dir, "release.pub")
	if err := provenance.Keygen(key, pub, []byte("s3cret")); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "release.toml")
	if err := os.WriteFile(cfgPath, []byte(`[project]
name = "demo"
version = "1.0"
[[source]]
name = "up"
local = "src"
[[target]]
name = "t1"
[[build.step]]
name = "copy"
source = "up"
run = ["true"]
outputs = ["hello"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	asked := 0
	f := &Factory{
		IO:     &IOStreams{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		Getenv: func(string) string { return "" },
		LookupEnv: func(k string) (string, bool) {
			if k == passwordEnv {
				asked++
				return "s3cret", true
			}
			return "", false
		},
	}
	s := newSession(f, &globalOptions{ConfigPath: cfgPath})
	var signers []provenance.Signer
	for range 3 {
		sg, err := s.signingKey(t.Context(), "file://"+key)
		if err != nil {
			t.Fatal(err)
		}
		signers = append(signers, sg)
	}
	if asked != 1 {
		t.Errorf("the password was asked %d times, want once", asked)
	}
	if signers[0] != signers[1] || signers[1] != signers[2] {
		t.Error("the stages got different signers")
	}
	c1, _ := s.config()
	os.Remove(cfgPath)
	c2, err := s.config()
	if err != nil || c1 != c2 {
		t.Errorf("release.toml read again: %v", err)
	}
	// Another verb's session loads its own.
	other := newSession(f, &globalOptions{ConfigPath: cfgPath})
	if _, err := other.config(); err == nil {
		t.Error("a new session served the old configuration")
	}
}

// lock says which fields of an entry changed, not the same hash twice.
func TestLockChangesNameTheFields(t *testing.T) {
	old := &lock.Lock{
		Sources:  []lock.Source{{Name: "up", Kind: "local", Location: "src", Tree: "h1:aaa"}},
		Overlays: []lock.Overlay{{Name: "fix", Source: "up", Kind: "patch", Path: "fix.patch", Digest: "sha256:1", Result: "h1:bbb"}},
	}
	cur := &lock.Lock{
		Sources:  []lock.Source{{Name: "up", Kind: "git", Location: "https://example.org/up.git", Commit: strings.Repeat("c", 40), Tree: "h1:aaa"}},
		Overlays: []lock.Overlay{{Name: "fix", Source: "up", Kind: "patch", Path: "fix.patch", Digest: "sha256:2", Result: "h1:bbb"}},
	}
	got := strings.Join(lockChanges(old, cur), "\n")
	want := "source up: kind local -> git, location src -> https://example.org/up.git, commit none -> " + strings.Repeat("c", 40) + "\n" +
		"overlay fix: digest sha256:1 -> sha256:2"
	if got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}
}
