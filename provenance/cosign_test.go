package provenance_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/testpart"
	"github.com/mkrelease/mkrelease/provenance"
)

// findCosign returns cosign's path: missing, the test skips in the default
// part of the suite and fails in the whole suite (scripts/test -full), which
// CI prepares for.
func findCosign(t *testing.T) string { return testpart.Cosign(t) }

// runCosign runs cosign with no network at all (a network namespace: cosign
// otherwise tries Sigstore's TUF mirror on the internet, and tests here
// reach no outside host), its own HOME (TUF cache) and a time limit. It
// returns the combined output and whether it exited 0.
func runCosign(t *testing.T, cosign, dir string, args ...string) (string, bool) {
	t.Helper()
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Fatalf("unshare -n does not work here (%v): cosign is run without network", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"-n", cosign}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"))
	out, err := cmd.CombinedOutput()
	t.Logf("cosign %s\n%s", strings.Join(args, " "), out)
	return string(out), err == nil
}

// TestCosignVerifiesProvenance: `cosign verify-blob-attestation`, as the
// auditor runs it, accepts the .intoto.jsonl and the .sigstore.json for
// every subject, and refuses a file changed by one byte.
func TestCosignVerifiesProvenance(t *testing.T) {
	cosign := findCosign(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "home"), 0o700)
	privPath, pubPath := keygen(t, dir)
	s, err := provenance.LoadSigner(context.Background(), "file://"+privPath, provenance.StaticPassword([]byte(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"vexl-0.3.0-py3-none-manylinux_2_17_x86_64.whl": bytes.Repeat([]byte("wheel bytes "), 1000),
		"vexl-0.3.0-linux-x86_64.tar.gz":                bytes.Repeat([]byte("bundle bytes "), 3000),
	}
	p := sampleProvenance()
	p.Subjects = nil
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		p.Subjects = append(p.Subjects, provenance.Subject{Name: name, SHA256: hex.EncodeToString(sum[:])})
	}
	st, err := p.Statement()
	if err != nil {
		t.Fatal(err)
	}
	envelope, bundle, err := provenance.Sign(context.Background(), s, st)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "vexl-0.3.0.intoto.jsonl"), envelope, 0o644)
	os.WriteFile(filepath.Join(dir, "vexl-0.3.0.sigstore.json"), bundle, 0o644)
	// cosign's bundle path wants a trusted root even for a key; an empty
	// one (no CAs, logs or timestamp authorities) keeps it offline.
	os.WriteFile(filepath.Join(dir, "trusted_root.json"), []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644)

	jsonl := func(file string) []string {
		return []string{"verify-blob-attestation", "--key", filepath.Base(pubPath), "--signature", "vexl-0.3.0.intoto.jsonl",
			"--type", "slsaprovenance1", "--insecure-ignore-tlog=true", file}
	}
	sigstoreBundle := func(file string) []string {
		return []string{"verify-blob-attestation", "--key", filepath.Base(pubPath), "--bundle", "vexl-0.3.0.sigstore.json",
			"--new-bundle-format", "--trusted-root", "trusted_root.json",
			"--type", "slsaprovenance1", "--insecure-ignore-tlog=true", file}
	}
	for name := range files {
		for form, args := range map[string][]string{".intoto.jsonl": jsonl(name), ".sigstore.json": sigstoreBundle(name)} {
			out, ok := runCosign(t, cosign, dir, args...)
			if !ok || !strings.Contains(out, "Verified OK") {
				t.Errorf("cosign does not verify %s with the %s: %s", name, form, out)
			}
		}
	}
	// One changed byte: the file is no longer a subject.
	name := "vexl-0.3.0-linux-x86_64.tar.gz"
	data := bytes.Clone(files[name])
	data[len(data)/2] ^= 1
	os.WriteFile(filepath.Join(dir, name), data, 0o644)
	for form, args := range map[string][]string{".intoto.jsonl": jsonl(name), ".sigstore.json": sigstoreBundle(name)} {
		if out, ok := runCosign(t, cosign, dir, args...); ok || strings.Contains(out, "Verified OK") {
			t.Errorf("cosign verifies a changed %s with the %s: %s", name, form, out)
		}
	}
	// Another key: refused.
	otherPriv, otherPub := filepath.Join(dir, "other.key"), filepath.Join(dir, "other.pub")
	if err := provenance.Keygen(otherPriv, otherPub, []byte("other")); err != nil {
		t.Fatal(err)
	}
	args := jsonl("vexl-0.3.0-py3-none-manylinux_2_17_x86_64.whl")
	args[2] = "other.pub"
	if out, ok := runCosign(t, cosign, dir, args...); ok || strings.Contains(out, "Verified OK") {
		t.Errorf("cosign verifies with an untrusted key: %s", out)
	}
}
