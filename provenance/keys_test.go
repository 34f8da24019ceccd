package provenance_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"golang.org/x/crypto/ssh"

	"github.com/mkrelease/mkrelease/provenance"
)

const testPassword = "correct horse battery staple"

func keygen(t *testing.T, dir string) (priv, pub string) {
	t.Helper()
	priv, pub = filepath.Join(dir, "release.key"), filepath.Join(dir, "release.pub")
	if err := provenance.Keygen(priv, pub, []byte(testPassword)); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// secretsOf returns every form of the private key in the encrypted PEM
// file privPath that must never appear in a file or message: the PKCS#8
// DER (raw, base64, hex), the private scalar (hex and decimal), and the
// password. The test decrypts the file itself: the package never hands a
// private key out.
func secretsOf(t *testing.T, privPath, password string) []string {
	t.Helper()
	k := decryptKey(t, privPath, password)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	scalar, err := k.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(der)
	out := []string{string(der), b64[:40], b64[len(b64)-40:], hex.EncodeToString(der)[:40],
		string(scalar), hex.EncodeToString(scalar), new(big.Int).SetBytes(scalar).String()}
	if password != "" {
		out = append(out, password)
	}
	return out
}

func decryptKey(t *testing.T, privPath, password string) *ecdsa.PrivateKey {
	t.Helper()
	data, err := os.ReadFile(privPath)
	if err != nil {
		t.Fatal(err)
	}
	k, err := cryptoutils.UnmarshalPEMToPrivateKey(data, cryptoutils.StaticPasswordFunc([]byte(password)))
	if err != nil {
		t.Fatal(err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("%T, want an ECDSA key", k)
	}
	return ek
}

func assertNoSecrets(t *testing.T, what string, data []byte, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if bytes.Contains(data, []byte(s)) {
			t.Errorf("%s contains secret material %.12q…", what, s)
		}
	}
}

func TestKeygen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	privPath, pubPath := keygen(t, dir)
	for path, mode := range map[string]os.FileMode{privPath: 0o600, pubPath: 0o644} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", filepath.Base(path), fi.Mode().Perm(), mode)
		}
	}
	privPEM, _ := os.ReadFile(privPath)
	b, rest := pem.Decode(privPEM)
	if b == nil || b.Type != "ENCRYPTED SIGSTORE PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("private key file: PEM type %v, want one ENCRYPTED SIGSTORE PRIVATE KEY block", b)
	}
	if _, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		t.Fatal("the private key block parses as a plain PKCS#8 key")
	}
	s, err := provenance.LoadSigner(context.Background(), "file://"+privPath, provenance.StaticPassword([]byte(testPassword)))
	if err != nil {
		t.Fatal(err)
	}
	k := decryptKey(t, privPath, testPassword)
	if k.Curve != elliptic.P256() {
		t.Errorf("curve %v, want P-256", k.Curve.Params().Name)
	}
	pub, err := provenance.LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	if provenance.KeyID(pub) != provenance.KeyID(s.Public()) {
		t.Error("the public key file does not match the private key")
	}
	secrets := secretsOf(t, privPath, testPassword)
	for _, path := range []string{privPath, pubPath} {
		data, _ := os.ReadFile(path)
		assertNoSecrets(t, filepath.Base(path), data, secrets)
	}
	// Nothing else was left in the folder (no temporary files).
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("folder holds %d entries, want 2", len(ents))
	}

	t.Run("refuses to overwrite", func(t *testing.T) {
		before, _ := os.ReadFile(privPath)
		err := provenance.Keygen(privPath, filepath.Join(dir, "new.pub"), []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("error = %v", err)
		}
		err = provenance.Keygen(filepath.Join(dir, "new.key"), pubPath, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "already exists") {
			t.Errorf("error = %v", err)
		}
		if after, _ := os.ReadFile(privPath); !bytes.Equal(before, after) {
			t.Error("the existing key changed")
		}
		if _, err := os.Stat(filepath.Join(dir, "new.key")); err == nil {
			t.Error("a half key pair was left behind")
		}
	})
	t.Run("refuses an empty password", func(t *testing.T) {
		err := provenance.Keygen(filepath.Join(dir, "e.key"), filepath.Join(dir, "e.pub"), nil)
		if err == nil || !strings.Contains(err.Error(), "password is empty") {
			t.Errorf("error = %v", err)
		}
	})
}

func TestLoadSigner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	privPath, pubPath := keygen(t, dir)
	privPEM, _ := os.ReadFile(privPath)
	pub, err := provenance.LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	wantID := provenance.KeyID(pub)
	secrets := append(secretsOf(t, privPath, testPassword), string(privPEM[40:120]))

	env := map[string]string{
		"RELEASE_KEY":          string(privPEM),
		provenance.PasswordEnv: testPassword,
		"PUBLIC_KEY":           mustRead(t, pubPath),
		"PLAIN_KEY":            plainKeyPEM(t),
		"WRONG_" + "PASSWORD":  "hunter2",
	}
	getenv := func(k string) string { return env[k] }
	wrongPassword := func(string) string { return "hunter2" }

	for _, tc := range []struct {
		name     string
		uri      string
		password provenance.PasswordFunc
		wantErr  string // empty: must load and sign
		errAs    any
	}{
		{name: "file URI", uri: "file://" + privPath, password: provenance.PasswordFromEnv(getenv)},
		{name: "plain path", uri: privPath, password: provenance.PasswordFromEnv(getenv)},
		{name: "env URI", uri: "env://RELEASE_KEY", password: provenance.PasswordFromEnv(getenv)},
		{name: "wrong password", uri: "file://" + privPath, password: provenance.PasswordFromEnv(wrongPassword), wantErr: "wrong password"},
		{name: "wrong password, env key", uri: "env://RELEASE_KEY", password: provenance.StaticPassword([]byte("hunter2")), wantErr: "wrong password"},
		{name: "password variable unset", uri: "file://" + privPath, password: provenance.PasswordFromEnv(func(string) string { return "" }),
			wantErr: "MKRELEASE_KEY_PASSWORD is not set", errAs: new(*provenance.MissingPasswordError)},
		{name: "no password source", uri: "file://" + privPath, wantErr: "no password source"},
		{name: "missing file", uri: "file://" + filepath.Join(dir, "nope.key"), wantErr: "no such file"},
		{name: "empty env var", uri: "env://NOPE", wantErr: "NOPE is not set"},
		{name: "public key given", uri: "env://PUBLIC_KEY", wantErr: "this is a public key"},
		{name: "unencrypted key", uri: "env://PLAIN_KEY", wantErr: "not encrypted"},
		{name: "empty URI", uri: "", wantErr: "no key given"},
		{name: "not compiled in", uri: "awskms:///arn:aws:kms:eu-west-1:1:key/x", wantErr: "not compiled into this mkrelease"},
		{name: "unknown scheme", uri: "s3://bucket/key", wantErr: `unknown scheme "s3"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := provenance.LoadSigner(context.Background(), tc.uri, tc.password, provenance.WithGetenv(getenv))
			if err == nil {
				if _, pending := s.(provenance.Pending); pending {
					t.Errorf("LoadSigner without InBackground returned a %T", s)
				}
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if provenance.KeyID(s.Public()) != wantID {
					t.Errorf("KeyID = %s, want %s", provenance.KeyID(s.Public()), wantID)
				}
				envelope, _, err := provenance.Sign(context.Background(), s, mustStatement(t))
				if err != nil {
					t.Fatal(err)
				}
				v, _ := provenance.NewVerifier(pub)
				if _, err := v.Verify(envelope, provenance.WithArtifacts(releaseDigests())); err != nil {
					t.Error(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			// The error names the key once, first: callers add no prefix.
			if tc.uri != "" {
				ref := tc.uri
				if !strings.Contains(ref, "://") {
					ref = "file://" + ref
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "signing key "+ref) || strings.Count(msg, "signing key "+ref) != 1 {
					t.Errorf("error = %q, want it to start with %q, once", msg, "signing key "+ref)
				}
			}
			if tc.errAs != nil && !errors.As(err, tc.errAs) {
				t.Errorf("errors.As(%v, %T) = false", err, tc.errAs)
			}
			assertNoSecrets(t, "error message", []byte(err.Error()), append(secrets, "hunter2", env["PLAIN_KEY"][30:90]))
		})
	}
}

// TestLoadSignerInBackground loads the same keys with InBackground: an
// encrypted key is returned before it is decrypted, as a Pending signer
// that signs like the key once ready, and whose wrong password is its
// Wait's, Sign's and SignMessage's error; errors found before the
// decryption (no password, not a private key) are LoadSigner's own.
func TestLoadSignerInBackground(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	privPath, pubPath := keygen(t, dir)
	privPEM, _ := os.ReadFile(privPath)
	pub, err := provenance.LoadPublicKey(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"RELEASE_KEY": string(privPEM), "PUBLIC_KEY": mustRead(t, pubPath)}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		uri      string
		password provenance.PasswordFunc
		loadErr  string // LoadSigner's error
		waitErr  string // else Wait's, Sign's and SignMessage's
	}{
		{name: "file", uri: "file://" + privPath, password: provenance.StaticPassword([]byte(testPassword))},
		{name: "env", uri: "env://RELEASE_KEY", password: provenance.StaticPassword([]byte(testPassword))},
		{name: "wrong password", uri: "file://" + privPath, password: provenance.StaticPassword([]byte("hunter2")), waitErr: "wrong password"},
		{name: "password unset", uri: "file://" + privPath, password: provenance.PasswordFromEnv(getenv), loadErr: "MKRELEASE_KEY_PASSWORD is not set"},
		{name: "public key given", uri: "env://PUBLIC_KEY", password: provenance.StaticPassword([]byte(testPassword)), loadErr: "this is a public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := provenance.LoadSigner(ctx, tc.uri, tc.password, provenance.WithGetenv(getenv), provenance.InBackground())
			if tc.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.loadErr) {
					t.Fatalf("LoadSigner: error %v, want one containing %q", err, tc.loadErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("LoadSigner: %v", err)
			}
			if _, ok := s.(provenance.Pending); !ok {
				t.Fatalf("LoadSigner returned a %T, not a Pending signer", s)
			}
			werr := provenance.Ready(ctx, s)
			_, _, serr := provenance.Sign(ctx, s, mustStatement(t))
			_, merr := s.SignMessage(ctx, []byte("message"))
			if tc.waitErr != "" {
				for what, err := range map[string]error{"Ready": werr, "Sign": serr, "SignMessage": merr} {
					if err == nil || !strings.Contains(err.Error(), tc.waitErr) {
						t.Errorf("%s: error %v, want one containing %q", what, err, tc.waitErr)
					}
				}
				if s.Public() != nil {
					t.Errorf("Public() = %v for a key that did not open, want nil", s.Public())
				}
				return
			}
			if werr != nil || serr != nil || merr != nil {
				t.Fatalf("Ready: %v; Sign: %v; SignMessage: %v", werr, serr, merr)
			}
			if provenance.KeyID(s.Public()) != provenance.KeyID(pub) {
				t.Errorf("KeyID = %s, want %s", provenance.KeyID(s.Public()), provenance.KeyID(pub))
			}
			envelope, _, err := provenance.Sign(ctx, s, mustStatement(t))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := provenance.NewVerifier(pub)
			if _, err := v.Verify(envelope, provenance.WithArtifacts(releaseDigests())); err != nil {
				t.Error(err)
			}
		})
	}
	// Wait gives up with its context; the key is still decrypted.
	s, err := provenance.LoadSigner(ctx, "file://"+privPath, provenance.StaticPassword([]byte(testPassword)), provenance.InBackground())
	if err != nil {
		t.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := provenance.Ready(done, s); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Ready with a cancelled context: %v, want nil or context.Canceled", err)
	}
	if err := provenance.Ready(ctx, s); err != nil {
		t.Errorf("Ready: %v", err)
	}
}

func TestPasswordFromEnv(t *testing.T) {
	t.Parallel()
	pw, err := provenance.PasswordFromEnv(func(k string) string {
		if k == "MKRELEASE_KEY_PASSWORD" {
			return "s3cret"
		}
		return ""
	})()
	if err != nil || string(pw) != "s3cret" {
		t.Errorf("PasswordFromEnv = %q, %v", pw, err)
	}
	_, err = provenance.PasswordFromEnv(func(string) string { return "" })()
	var missing *provenance.MissingPasswordError
	if !errors.As(err, &missing) || missing.Var != "MKRELEASE_KEY_PASSWORD" || !strings.Contains(err.Error(), "set it to the key's password") {
		t.Errorf("error = %v, want a *MissingPasswordError saying how to set MKRELEASE_KEY_PASSWORD", err)
	}
}

func TestDevKey(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".mkrelease")
	s1, created, err := provenance.DevKey(dir)
	if err != nil || !created {
		t.Fatalf("first DevKey: created=%v, %v", created, err)
	}
	s2, created, err := provenance.DevKey(dir)
	if err != nil || created {
		t.Fatalf("second DevKey: created=%v, %v", created, err)
	}
	if provenance.KeyID(s1.Public()) != provenance.KeyID(s2.Public()) {
		t.Error("the second use gave another key")
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v, want 0700", fi.Mode().Perm())
	}
	privPath := filepath.Join(dir, provenance.DevKeyName)
	if fi, _ := os.Stat(privPath); fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %v, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(privPath)
	if b, _ := pem.Decode(data); b == nil || b.Type != "ENCRYPTED SIGSTORE PRIVATE KEY" {
		t.Errorf("development key PEM type %v, want the encrypted one", b)
	}
	assertNoSecrets(t, "dev key", data, secretsOf(t, privPath, ""))
	pub, err := provenance.LoadPublicKey(filepath.Join(dir, provenance.DevPublicKeyName))
	if err != nil || provenance.KeyID(pub) != provenance.KeyID(s1.Public()) {
		t.Errorf("dev public key: %v (matching: %v)", err, err == nil && provenance.KeyID(pub) == provenance.KeyID(s1.Public()))
	}
	// It is an ordinary encrypted key with an empty password.
	s3, err := provenance.LoadSigner(context.Background(), "file://"+privPath, provenance.StaticPassword(nil))
	if err != nil || provenance.KeyID(s3.Public()) != provenance.KeyID(s1.Public()) {
		t.Errorf("LoadSigner on the dev key: %v", err)
	}
	// A lost public key is rewritten.
	os.Remove(filepath.Join(dir, provenance.DevPublicKeyName))
	if _, _, err := provenance.DevKey(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := provenance.LoadPublicKey(filepath.Join(dir, provenance.DevPublicKeyName)); err != nil {
		t.Error(err)
	}

	// With its public key written, the private key is read only to sign:
	// damaged after DevKey returned, the public key is still known, and
	// signing fails.
	key, _ := os.ReadFile(privPath)
	lazy, _, err := provenance.DevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(privPath, []byte("damaged"), 0o600)
	if provenance.KeyID(lazy.Public()) != provenance.KeyID(s1.Public()) {
		t.Error("the public key of a signer that has not signed yet is not the key's")
	}
	if _, err := lazy.SignMessage(context.Background(), []byte("m")); err == nil {
		t.Error("signing with a damaged private key succeeded")
	}
	os.WriteFile(privPath, key, 0o600)
	lazy, _, _ = provenance.DevKey(dir)
	sig, err := lazy.SignMessage(context.Background(), []byte("m"))
	if err != nil || len(sig) == 0 {
		t.Errorf("signing with the key restored: %v", err)
	}
	// A public key file that names another key: signing refuses (and the
	// file is rewritten from the private key for the next run).
	other, _, _ := provenance.DevKey(filepath.Join(t.TempDir(), "other"))
	otherPEM, _ := provenance.MarshalPublicKey(other.Public())
	pubPath := filepath.Join(dir, provenance.DevPublicKeyName)
	os.WriteFile(pubPath, otherPEM, 0o644)
	lazy, _, _ = provenance.DevKey(dir)
	if _, err := lazy.SignMessage(context.Background(), []byte("m")); err == nil || !strings.Contains(err.Error(), "not the one its public key file named") {
		t.Errorf("signing under a public key file of another key: %v", err)
	}
	if pub, err := provenance.LoadPublicKey(pubPath); err != nil || provenance.KeyID(pub) != provenance.KeyID(s1.Public()) {
		t.Errorf("the public key file is not rewritten from the private key: %v", err)
	}
}

// TestDevKeyConcurrentFirstUse: processes racing to create the key agree
// on one.
func TestDevKeyConcurrentFirstUse(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".mkrelease")
	ids := make([]string, 4)
	created := make([]bool, 4)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			s, c, err := provenance.DevKey(dir)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i], created[i] = provenance.KeyID(s.Public()), c
		})
	}
	wg.Wait()
	n := 0
	for i := range ids {
		if ids[i] != ids[0] {
			t.Errorf("DevKey %d gave key %s, DevKey 0 gave %s", i, ids[i], ids[0])
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d callers report creating the key, want 1", n)
	}
}

func TestLoadPublicKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	privPath, pubPath := keygen(t, dir)
	if _, err := provenance.LoadPublicKey(pubPath); err != nil {
		t.Fatal(err)
	}
	_, err := provenance.LoadPublicKey(privPath)
	if err == nil || !strings.Contains(err.Error(), "private key") {
		t.Errorf("LoadPublicKey(private key) error = %v", err)
	}
	garbage := filepath.Join(dir, "garbage.pub")
	os.WriteFile(garbage, []byte("hello"), 0o644)
	if _, err := provenance.LoadPublicKey(garbage); err == nil || !strings.Contains(err.Error(), "garbage.pub") {
		t.Errorf("LoadPublicKey(garbage) error = %v, want one naming the file", err)
	}
}

func TestKeyID(t *testing.T) {
	t.Parallel()
	s := newFakeSigner(t)
	der, _ := x509.MarshalPKIXPublicKey(s.Public())
	sum := sha256.Sum256(der)
	if got, want := provenance.KeyID(s.Public()), hex.EncodeToString(sum[:]); got != want {
		t.Errorf("KeyID = %s, want sha256 of the DER SPKI %s", got, want)
	}
	if provenance.KeyID("nope") != "" {
		t.Error("KeyID of a non-key is not empty")
	}
}

// TestDSSEKeyIDIsTheSSHFingerprint checks the envelope keyid against
// x/crypto/ssh, the computation go-securesystemslib does.
func TestDSSEKeyIDIsTheSSHFingerprint(t *testing.T) {
	t.Parallel()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	r, _ := rsa.GenerateKey(rand.Reader, 2048)
	edPub, _, _ := ed25519.GenerateKey(rand.Reader)
	for name, pub := range map[string]crypto.PublicKey{"P-256": &p256.PublicKey, "P-384": &p384.PublicKey, "RSA": &r.PublicKey, "Ed25519": edPub} {
		sk, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := provenance.DSSEKeyIDForTest(pub), ssh.FingerprintSHA256(sk); got != want {
			t.Errorf("%s: dsse keyid %s, want %s", name, got, want)
		}
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func plainKeyPEM(t *testing.T) string {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// TestOtherKeyTypes: RSA and Ed25519 keys in the encrypted format (as
// `cosign import-key-pair` writes them) sign and verify too.
func TestOtherKeyTypes(t *testing.T) {
	t.Parallel()
	r, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for _, tc := range []struct {
		name    string
		key     crypto.PrivateKey
		wantErr string
	}{
		{"RSA 2048", r, ""},
		{"Ed25519", ed, ""},
		{"ECDSA P-384", p384, ""},
		{"RSA 1024", small, "at least 2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			der, err := cryptoutils.MarshalPrivateKeyToEncryptedDER(tc.key, cryptoutils.StaticPasswordFunc([]byte("pw")))
			if err != nil {
				t.Fatal(err)
			}
			keyPEM := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: der})
			getenv := provenance.WithGetenv(func(string) string { return string(keyPEM) })
			s, err := provenance.LoadSigner(context.Background(), "env://KEY", provenance.StaticPassword([]byte("pw")), getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env, bundle, err := provenance.Sign(context.Background(), s, mustStatement(t))
			if err != nil {
				t.Fatal(err)
			}
			v, err := provenance.NewVerifier(s.Public())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(env, provenance.WithArtifacts(releaseDigests())); err != nil {
				t.Error(err)
			}
			if _, err := v.VerifyBundle(bundle, provenance.WithArtifacts(releaseDigests())); err != nil {
				t.Error(err)
			}
		})
	}
}

// A development key prepared ahead signs as one that was not, and a
// preparation that fails (a damaged private key) is the signature's error;
// Prepare and SignMessage may race.
func TestDevKeyPrepare(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".mkrelease")
	if _, _, err := provenance.DevKey(dir); err != nil {
		t.Fatal(err)
	}
	lazy, _, err := provenance.DevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := lazy.(provenance.Preparer)
	if !ok {
		t.Fatalf("the development key (%T) is not a Preparer", lazy)
	}
	p.Prepare()
	p.Prepare()
	sig, err := lazy.SignMessage(context.Background(), []byte("m"))
	if err != nil || len(sig) == 0 {
		t.Fatalf("signing after Prepare: %v", err)
	}
	if !signatureVerifies(t, lazy.Public(), []byte("m"), sig) {
		t.Error("a prepared key's signature does not verify")
	}

	os.WriteFile(filepath.Join(dir, provenance.DevKeyName), []byte("damaged"), 0o600)
	damaged, _, err := provenance.DevKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	damaged.(provenance.Preparer).Prepare()
	if _, err := damaged.SignMessage(context.Background(), []byte("m")); err == nil {
		t.Error("a prepared damaged key signed")
	}
}

// signatureVerifies checks a SignMessage signature: ECDSA (ASN.1 over
// SHA-256) or pure Ed25519.
func signatureVerifies(t *testing.T, pub crypto.PublicKey, msg, sig []byte) bool {
	t.Helper()
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		d := sha256.Sum256(msg)
		return ecdsa.VerifyASN1(k, d[:], sig)
	case ed25519.PublicKey:
		return ed25519.Verify(k, msg, sig)
	}
	t.Fatalf("unexpected key type %T", pub)
	return false
}
