package provenance_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/provenance"
)

// fakeSigner is an in-process ECDSA P-256 signer.
type fakeSigner struct{ k *ecdsa.PrivateKey }

func newFakeSigner(t *testing.T) *fakeSigner {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeSigner{k}
}

func (f *fakeSigner) Public() crypto.PublicKey { return &f.k.PublicKey }

func (f *fakeSigner) SignMessage(_ context.Context, msg []byte) ([]byte, error) {
	h := sha256.Sum256(msg)
	return ecdsa.SignASN1(rand.Reader, f.k, h[:])
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// releaseFiles is the artifact set most tests sign: name → content.
func releaseFiles() map[string]string {
	return map[string]string{
		"vexl-0.3.0-py3-none-manylinux_2_17_x86_64.whl":        "compiler wheel",
		"vexl_plugin-0.3.0-py3-none-manylinux_2_17_x86_64.whl": "plugin wheel",
		"vexl-0.3.0-linux-x86_64.tar.gz":                       "bundle",
		"vexl-0.3.0.spdx.json":                                 "sbom",
	}
}

func releaseDigests() map[string]string {
	m := map[string]string{}
	for n, c := range releaseFiles() {
		m[n] = sha(c)
	}
	return m
}

// sampleProvenance is a fixed, complete Provenance (fixed times included).
func sampleProvenance() provenance.Provenance {
	var subjects []provenance.Subject
	for _, n := range []string{ // deliberately not sorted
		"vexl_plugin-0.3.0-py3-none-manylinux_2_17_x86_64.whl",
		"vexl-0.3.0.spdx.json",
		"vexl-0.3.0-py3-none-manylinux_2_17_x86_64.whl",
		"vexl-0.3.0-linux-x86_64.tar.gz",
	} {
		subjects = append(subjects, provenance.Subject{Name: n, SHA256: sha(releaseFiles()[n])})
	}
	return provenance.Provenance{
		Subjects: subjects,
		ExternalParameters: map[string]any{
			"project":             map[string]any{"name": "vexl", "version": "0.3.0"},
			"release_toml_sha256": sha("release.toml"),
			"release_lock_sha256": sha("release.lock"),
			"targets":             []string{"linux-x86_64"},
		},
		InternalParameters: map[string]any{"source_date_epoch": 1700000000},
		ResolvedDependencies: []provenance.Dependency{
			{Name: "vexl-src", URI: "git+https://example.com/vexl.git@" + "0123456789abcdef0123456789abcdef01234567",
				Digest: map[string]string{"sha1": "0123456789abcdef0123456789abcdef01234567"}},
			{Name: "overlays/0001-fix.patch", Digest: map[string]string{"sha256": sha("patch")}},
			{Name: "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl", URI: "https://files.example.org/numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
				Digest: map[string]string{"sha256": sha("numpy")}},
			{Name: "go", URI: "pkg:golang/go@1.26.8", Annotations: map[string]any{"version": "1.26.8"}},
		},
		BuilderID:      "https://mkrelease.dev/builders/local",
		BuilderVersion: map[string]string{"mkrelease": "0.1.0-dev"},
		InvocationID:   "3f1c6a1e-0000-4000-8000-000000000001",
		StartedOn:      time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		FinishedOn:     time.Date(2026, 11, 30, 8, 1, 30, 500_000_000, time.FixedZone("CET", 3600)),
	}
}

// asVerifyError returns err as a *VerifyError or fails the test.
func asVerifyError(t *testing.T, err error) *provenance.VerifyError {
	t.Helper()
	var ve *provenance.VerifyError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *VerifyError", err, err)
	}
	return ve
}
