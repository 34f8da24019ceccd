package provenance_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/provenance"
)

// fakeVault imitates the two endpoints of Vault's transit secrets engine
// that sigstore's hashivault provider calls: reading a key
// (GET /v1/transit/keys/NAME) and signing a digest
// (PUT /v1/transit/sign/NAME/sha2-256, prehashed), with an ECDSA P-256 key.
func fakeVault(t *testing.T, token string) (*httptest.Server, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := provenance.MarshalPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Vault-Token") != token {
				reply(w, http.StatusForbidden, map[string]any{"errors": []string{"permission denied"}})
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /v1/transit/keys/release", auth(func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{
			"name": "release", "type": "ecdsa-p256", "latest_version": 1,
			"keys": map[string]any{"1": map[string]any{"name": "P-256", "public_key": string(pubPEM)}},
		}})
	}))
	mux.HandleFunc("PUT /v1/transit/sign/release/sha2-256", auth(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input     string `json:"input"`
			Prehashed bool   `json:"prehashed"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Prehashed {
			reply(w, http.StatusBadRequest, map[string]any{"errors": []string{"bad request"}})
			return
		}
		digest, err := base64.StdEncoding.DecodeString(req.Input)
		if err != nil || len(digest) != 32 {
			reply(w, http.StatusBadRequest, map[string]any{"errors": []string{"input is not a sha2-256 digest"}})
			return
		}
		sig, err := ecdsa.SignASN1(rand.Reader, k, digest)
		if err != nil {
			t.Error(err)
		}
		reply(w, http.StatusOK, map[string]any{"data": map[string]any{"signature": "vault:v1:" + base64.StdEncoding.EncodeToString(sig), "key_version": 1}})
	}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusNotFound, map[string]any{"errors": []string{}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, k
}

func TestHashiVault(t *testing.T) {
	const token = "hvs.test-token-0123456789"
	srv, k := fakeVault(t, token)
	env := func(extra map[string]string) provenance.LoadOption {
		vars := map[string]string{"VAULT_ADDR": srv.URL, "VAULT_TOKEN": token}
		for key, v := range extra {
			vars[key] = v
		}
		return provenance.WithGetenv(func(key string) string { return vars[key] })
	}
	if !slices.Contains(provenance.KMSSchemes(), "hashivault://") {
		t.Fatalf("KMSSchemes() = %v, want hashivault://", provenance.KMSSchemes())
	}

	t.Run("sign and verify", func(t *testing.T) {
		s, err := provenance.LoadSigner(context.Background(), "hashivault://release", nil, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if provenance.KeyID(s.Public()) != provenance.KeyID(&k.PublicKey) {
			t.Fatal("the signer's public key is not Vault's")
		}
		envelope, bundle, err := provenance.Sign(context.Background(), s, mustStatement(t))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := provenance.NewVerifier(&k.PublicKey)
		for form, f := range map[string]func([]byte, provenance.ArtifactPolicy) (*provenance.Result, error){".intoto.jsonl": v.Verify, ".sigstore.json": v.VerifyBundle} {
			in := envelope
			if form == ".sigstore.json" {
				in = bundle
			}
			if _, err := f(in, provenance.WithArtifacts(releaseDigests())); err != nil {
				t.Errorf("%s: %v", form, err)
			}
		}
	})
	for _, tc := range []struct {
		name, uri string
		env       map[string]string
		want      string
	}{
		{"wrong token", "hashivault://release", map[string]string{"VAULT_TOKEN": "hvs.wrong"}, "permission denied"},
		{"unknown key", "hashivault://nope", nil, "nope"},
		{"malformed reference", "hashivault://a/b", nil, "hashivault://<key>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provenance.LoadSigner(context.Background(), tc.uri, nil, env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), token) || strings.Contains(err.Error(), "hvs.wrong") {
				t.Errorf("error %q contains the token", err)
			}
		})
	}
}
