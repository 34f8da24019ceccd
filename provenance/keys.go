package provenance

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
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/projectfile"
)

// PasswordEnv is the environment variable [PasswordFromEnv] reads the
// password of an encrypted signing key from.
const PasswordEnv = "MKRELEASE_KEY_PASSWORD"

// Names of the development key pair inside the folder given to [DevKey].
const (
	DevKeyName       = "dev.key"
	DevPublicKeyName = "dev.pub"
)

// PEM block types of the private keys LoadSigner accepts: the scrypt +
// secretbox encryption of sigstore/sigstore's cryptoutils (what Keygen and
// `cosign generate-key-pair` write), and its older cosign name.
const (
	encryptedKeyPEMType       = string(cryptoutils.EncryptedSigstorePrivateKeyPEMType)
	legacyEncryptedKeyPEMType = "ENCRYPTED COSIGN PRIVATE KEY"
)

// maxKeyFile bounds what is read as a key file: a PEM key is a few KiB.
const maxKeyFile = 1 << 20

// Signer signs for [Sign]: a local key loaded by [LoadSigner] or [DevKey],
// a KMS key, or a fake in tests.
type Signer interface {
	// Public returns the public key that verifies this signer's signatures.
	Public() crypto.PublicKey
	// SignMessage signs message (hashing it itself: SHA-256 for ECDSA and
	// RSA keys, pure Ed25519 for Ed25519 keys, as cosign expects) and
	// returns the signature, ASN.1 DER for ECDSA.
	SignMessage(ctx context.Context, message []byte) ([]byte, error)
}

// Preparer is a [Signer] that can get ready to sign ahead of its first
// signature: a development key, whose private key is read (scrypt, a few
// tenths of a second of one core) only when something is signed.
type Preparer interface {
	// Prepare starts that work in the background and returns at once;
	// the first signature waits for it, and a failure is that
	// signature's error.
	Prepare()
}

// PasswordFunc returns the password of an encrypted private key. It is
// called only when a key needs one, at most once per [LoadSigner].
type PasswordFunc func() ([]byte, error)

// MissingPasswordError reports that the environment variable holding a
// key's password is not set. The CLI recognises it with errors.As and
// prompts on a terminal instead.
type MissingPasswordError struct {
	Var string // the variable, PasswordEnv
}

// Error says which variable to set, and how.
func (e *MissingPasswordError) Error() string {
	return fmt.Sprintf("the signing key is encrypted and %s is not set: set it to the key's password "+
		"(in CI from a secret, e.g. %s=${{ secrets.SIGNING_KEY_PASSWORD }}), or run in a terminal to be prompted", e.Var, e.Var)
}

// PasswordFromEnv returns a PasswordFunc that reads [PasswordEnv] through
// getenv (os.Getenv in the CLI). An unset or empty variable is a
// *[MissingPasswordError].
func PasswordFromEnv(getenv func(string) string) PasswordFunc {
	return func() ([]byte, error) {
		pw := getenv(PasswordEnv)
		if pw == "" {
			return nil, &MissingPasswordError{Var: PasswordEnv}
		}
		return []byte(pw), nil
	}
}

// StaticPassword returns a PasswordFunc that always returns password.
func StaticPassword(password []byte) PasswordFunc {
	return func() ([]byte, error) { return bytes.Clone(password), nil }
}

// Keygen creates an ECDSA P-256 key pair: the private key at privPath as an
// "ENCRYPTED SIGSTORE PRIVATE KEY" PEM (scrypt + secretbox, the format of
// `cosign generate-key-pair`), mode 0600, and the public key at pubPath as a
// "PUBLIC KEY" PEM (PKIX), mode 0644. Both are written atomically and
// neither may exist yet: Keygen never replaces a key. The password must not
// be empty (a key encrypted with an empty password protects nothing; a
// development key is what [DevKey] is for).
func Keygen(privPath, pubPath string, password []byte) error {
	if len(password) == 0 {
		return errors.New("keygen: the password is empty: choose one (an unprotected key is only acceptable as the development key, which mkrelease creates itself)")
	}
	if privPath == pubPath {
		return fmt.Errorf("keygen: the private and the public key would both be written to %s", privPath)
	}
	for _, p := range []string{privPath, pubPath} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("keygen: %s already exists: mkrelease never replaces a key; remove it first or choose another path", p)
		}
	}
	privPEM, pubPEM, err := generateKeyPair(password)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if err := atomicfile.WriteNew(privPath, privPEM, 0o600); err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	if err := atomicfile.WriteNew(pubPath, pubPEM, 0o644); err != nil {
		os.Remove(privPath)
		return fmt.Errorf("keygen: %w", err)
	}
	return nil
}

// generateKeyPair returns a new ECDSA P-256 key pair as PEM: the private key
// encrypted with password (which may be empty but is never nil, so the key
// is always encrypted), and the public key.
func generateKeyPair(password []byte) (privPEM, pubPEM []byte, err error) {
	pw := append([]byte{}, password...) // never nil: nil would mean "do not encrypt"
	privPEM, pubPEM, err = cryptoutils.GeneratePEMEncodedECDSAKeyPair(elliptic.P256(), cryptoutils.StaticPasswordFunc(pw))
	if err != nil {
		return nil, nil, fmt.Errorf("generate ECDSA P-256 key: %w", err)
	}
	if b, _ := pem.Decode(privPEM); b == nil || b.Type != encryptedKeyPEMType {
		// Unreachable with sigstore v1.10; checked because the opposite would
		// write a key in the clear.
		return nil, nil, errors.New("generate ECDSA P-256 key: the private key did not come out encrypted")
	}
	return privPEM, pubPEM, nil
}

// LoadPublicKey reads a PEM public key ("PUBLIC KEY", PKIX) such as the one
// [Keygen] or `cosign generate-key-pair` writes.
func LoadPublicKey(path string) (crypto.PublicKey, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", path, err)
	}
	return pub, nil
}

// LoadProjectPublicKey reads the PEM public key at rel, a slash-separated
// path relative to the project folder dir (a release.toml's trusted_keys
// entry), beneath dir: a symbolic link leading out of the project is
// refused, naming it (package projectfile), so a project cannot make its
// auditor trust a key file from elsewhere on the machine. A missing file
// is an error wrapping fs.ErrNotExist.
func LoadProjectPublicKey(dir, rel string) (crypto.PublicKey, error) {
	data, err := projectfile.ReadFile(dir, rel, maxKeyFile)
	if err != nil {
		return nil, err
	}
	pub, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	return pub, nil
}

// ParsePublicKey parses a PEM public key ("PUBLIC KEY", PKIX). A private
// key given by mistake is refused without being parsed or echoed.
func ParsePublicKey(data []byte) (crypto.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("not a PEM file (expected a \"PUBLIC KEY\" block)")
	}
	if strings.Contains(b.Type, "PRIVATE KEY") {
		return nil, fmt.Errorf("this is a private key (%s), not a public key: pass the .pub file", b.Type)
	}
	if b.Type != string(cryptoutils.PublicKeyPEMType) {
		return nil, fmt.Errorf("PEM block type %q, expected \"PUBLIC KEY\"", b.Type)
	}
	pub, err := x509.ParsePKIXPublicKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	if err := checkKeyType(pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// MarshalPublicKey returns pub as a "PUBLIC KEY" PEM block, the form
// `cosign verify-blob-attestation --key` reads.
func MarshalPublicKey(pub crypto.PublicKey) ([]byte, error) {
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}

// KeyID returns the key id mkrelease uses for pub: the lowercase hex sha256
// of its DER SubjectPublicKeyInfo (the bytes inside the "PUBLIC KEY" PEM),
// so `openssl pkey -pubin -in KEY.pub -outform DER | sha256sum` prints it
// too. It returns "" for a key that cannot be marshalled.
func KeyID(pub crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// checkKeyType accepts the public keys signatures are made and checked
// with: ECDSA on P-256, P-384 or P-521, RSA of at least 2048 bits, Ed25519.
func checkKeyType(pub crypto.PublicKey) error {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			return nil
		}
		return fmt.Errorf("unsupported ECDSA curve %s (P-256, P-384 or P-521 expected)", k.Curve.Params().Name)
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return fmt.Errorf("RSA key of %d bits: at least 2048 are required", k.N.BitLen())
		}
		return nil
	case ed25519.PublicKey:
		return nil
	}
	return fmt.Errorf("unsupported public key type %T (ECDSA, RSA or Ed25519 expected)", pub)
}

// LoadOption configures [LoadSigner].
type LoadOption func(*loadConfig)

type loadConfig struct {
	getenv     func(string) string
	background bool
}

// InBackground makes LoadSigner return an encrypted key (file:// or
// env://) as soon as the key file is checked and its password read, and
// decrypt it (scrypt: a few tenths of a second of one core) in the
// background: the signer is a [Pending] whose first use waits for the
// decryption and fails with its error, and whose Wait reports a wrong
// password as soon as it is known. A build starts at once and signs at
// its end; the decryption runs on a core the build leaves idle. Other
// keys (KMS) are returned as without it.
func InBackground() LoadOption {
	return func(c *loadConfig) { c.background = true }
}

// Pending is a [Signer] whose key is still being made ready (an encrypted
// key decrypted in the background: [InBackground]). Public and
// SignMessage wait for it; Public returns nil when it failed.
type Pending interface {
	Signer
	// Wait returns once the key is ready (nil) or could not be made ready
	// (why: a wrong password, a damaged key file), or with ctx's error.
	Wait(ctx context.Context) error
}

// Ready waits until s can sign: for a [Pending] signer, until its key is
// ready, returning the error that kept it from being; at once for any
// other signer.
func Ready(ctx context.Context, s Signer) error {
	if p, ok := s.(Pending); ok {
		return p.Wait(ctx)
	}
	return nil
}

// pendingSigner is a signer whose key is loaded in the background.
type pendingSigner struct {
	done   chan struct{} // closed once signer and err are set
	signer Signer
	err    error
}

// startPending runs load in the background.
func startPending(load func() (Signer, error)) *pendingSigner {
	p := &pendingSigner{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.signer, p.err = load()
	}()
	return p
}

// Wait waits for the key ([Pending]).
func (p *pendingSigner) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Public waits for the key and returns its public key, nil when it could
// not be loaded.
func (p *pendingSigner) Public() crypto.PublicKey {
	<-p.done
	if p.err != nil {
		return nil
	}
	return p.signer.Public()
}

// SignMessage waits for the key and signs.
func (p *pendingSigner) SignMessage(ctx context.Context, message []byte) ([]byte, error) {
	if err := p.Wait(ctx); err != nil {
		return nil, err
	}
	return p.signer.SignMessage(ctx, message)
}

// WithGetenv makes LoadSigner read environment variables (the key of an
// env:// reference; VAULT_ADDR and VAULT_TOKEN when the hashivault://
// provider is compiled in) through getenv instead of os.Getenv. KMS client
// libraries may still read further settings of their own from the process
// environment.
func WithGetenv(getenv func(string) string) LoadOption {
	return func(c *loadConfig) { c.getenv = getenv }
}

// LoadSigner resolves a signing key reference:
//
//   - file://PATH or a plain PATH: an encrypted PEM private key file (from
//     [Keygen] or `cosign generate-key-pair`); PATH is taken literally,
//     file:///abs/key or file://relative/key;
//   - env://VAR: the same encrypted PEM, held in the environment variable VAR
//     (a CI secret);
//   - a KMS URI whose provider is compiled in (see the package doc).
//
// An encrypted key's password comes from password, asked only when needed.
// An unencrypted private key is refused. Every error starts with
// "signing key " and the reference (file://PATH for a path), so a caller
// adds no prefix of its own; none ever contains key material or the
// password.
func LoadSigner(ctx context.Context, uri string, password PasswordFunc, opts ...LoadOption) (Signer, error) {
	cfg := loadConfig{getenv: os.Getenv}
	for _, o := range opts {
		o(&cfg)
	}
	scheme, rest, hasScheme := strings.Cut(uri, "://")
	switch {
	case uri == "":
		return nil, errors.New("signing key: no key given: pass file://PATH, env://VAR or a KMS URI")
	case !hasScheme || scheme == "file":
		path := uri
		if hasScheme {
			path = rest
		}
		if path == "" {
			return nil, fmt.Errorf("signing key %s: no path", uri)
		}
		data, err := readLimited(path)
		if err != nil {
			return nil, fmt.Errorf("signing key file://%s: %w", path, err)
		}
		return loadPEMSigner("file://"+path, data, password, cfg.background)
	case scheme == "env":
		if rest == "" {
			return nil, fmt.Errorf("signing key %s: no variable name (env://VAR)", uri)
		}
		data := cfg.getenv(rest)
		if data == "" {
			return nil, fmt.Errorf("signing key %s: the environment variable %s is not set or empty", uri, rest)
		}
		return loadPEMSigner(uri, []byte(data), password, cfg.background)
	}
	return loadKMSSigner(ctx, uri, scheme, cfg)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxKeyFile+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if buf.Len() > maxKeyFile {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a key file", path, maxKeyFile)
	}
	return buf.Bytes(), nil
}

// loadPEMSigner decrypts an encrypted PEM private key, in the background
// when background is set (a [Pending] signer), once the PEM block is
// checked and the password read. ref names the key in errors; the key
// bytes never appear in one.
func loadPEMSigner(ref string, data []byte, password PasswordFunc, background bool) (Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, fmt.Errorf("signing key %s: not a PEM private key", ref)
	}
	switch b.Type {
	case encryptedKeyPEMType, legacyEncryptedKeyPEMType:
	case "PUBLIC KEY":
		return nil, fmt.Errorf("signing key %s: this is a public key; pass the private key (the .key file)", ref)
	default:
		if strings.Contains(b.Type, "PRIVATE KEY") {
			return nil, fmt.Errorf("signing key %s: the private key is not encrypted with a password (PEM type %q); "+
				"mkrelease signs only with encrypted keys: create one with `mkrelease keygen`, or convert this one with `cosign import-key-pair`", ref, b.Type)
		}
		return nil, fmt.Errorf("signing key %s: PEM block type %q, expected %q", ref, b.Type, encryptedKeyPEMType)
	}
	if password == nil {
		return nil, fmt.Errorf("signing key %s is encrypted and no password source was given", ref)
	}
	pw, err := password()
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", ref, err)
	}
	pw = append([]byte{}, pw...) // nil would skip decryption
	decrypt := func() (Signer, error) {
		priv, err := cryptoutils.UnmarshalPEMToPrivateKey(pem.EncodeToMemory(b), cryptoutils.StaticPasswordFunc(pw))
		clear(pw)
		if err != nil {
			// The errors of the decryption and of x509 carry no key bytes, but
			// they are replaced anyway: the message must not depend on them.
			return nil, fmt.Errorf("signing key %s: wrong password, or the key file is damaged (decryption failed)", ref)
		}
		signer, err := newLocalSigner(priv)
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", ref, err)
		}
		return signer, nil
	}
	if background {
		return startPending(decrypt), nil
	}
	return decrypt()
}

func keyTypeName(k any) string {
	switch k.(type) {
	case *ecdsa.PrivateKey:
		return "ECDSA"
	case *rsa.PrivateKey:
		return "RSA"
	case ed25519.PrivateKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", k)
}

// localSigner signs with a private key in memory, the way cosign and
// sigstore/sigstore's pkg/signature do for the same key: ECDSA over the
// SHA-256 digest with an ASN.1 DER signature, RSA PKCS #1 v1.5 with SHA-256,
// pure Ed25519.
type localSigner struct {
	priv crypto.Signer
	pub  crypto.PublicKey
}

func newLocalSigner(priv crypto.PrivateKey) (*localSigner, error) {
	switch k := priv.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
		s := k.(crypto.Signer)
		if err := checkKeyType(s.Public()); err != nil {
			return nil, err
		}
		return &localSigner{priv: s, pub: s.Public()}, nil
	}
	return nil, fmt.Errorf("unsupported private key type %s (ECDSA, RSA or Ed25519 expected)", keyTypeName(priv))
}

func (s *localSigner) Public() crypto.PublicKey { return s.pub }

func (s *localSigner) SignMessage(_ context.Context, message []byte) ([]byte, error) {
	if _, ok := s.priv.(ed25519.PrivateKey); ok {
		return s.priv.Sign(rand.Reader, message, crypto.Hash(0))
	}
	digest := sha256.Sum256(message)
	return s.priv.Sign(rand.Reader, digest[:], crypto.SHA256)
}

// DevKey returns the local development signing key kept in dir (the
// git-ignored .mkrelease/ of a checkout), creating the folder (0700) and an
// ECDSA P-256 key pair there on first use: DevKeyName, encrypted with an
// empty password, mode 0600, and DevPublicKeyName. created reports that
// the key is new; the caller then prints a loud warning.
//
// A development key proves nothing to anyone else: it lives unprotected on
// one machine, nobody has been told to trust it, and anyone can make one.
// It exists so that `mkrelease build` works on a fresh checkout; a release
// is signed with a key from [Keygen] or a KMS, and verified against public
// keys the auditor chose.
//
// Concurrent first uses agree on one key: the private key is published with
// a link that fails when another process got there first, which then loads
// that one.
func DevKey(dir string) (s Signer, created bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("development key: %w", err)
	}
	privPath := filepath.Join(dir, DevKeyName)
	pubPath := filepath.Join(dir, DevPublicKeyName)
	if _, err := os.Lstat(privPath); errors.Is(err, fs.ErrNotExist) {
		privPEM, _, err := generateKeyPair([]byte{})
		if err != nil {
			return nil, false, fmt.Errorf("development key: %w", err)
		}
		switch err := atomicfile.WriteNew(privPath, privPEM, 0o600); {
		case err == nil:
			created = true
		case errors.Is(err, fs.ErrExist): // another process created it: use that one
		default:
			return nil, false, fmt.Errorf("development key: %w", err)
		}
	}
	load := func() (Signer, error) {
		data, err := readLimited(privPath)
		if err != nil {
			return nil, fmt.Errorf("development key: %w", err)
		}
		s, err := loadPEMSigner("file://"+privPath, data, StaticPassword([]byte{}), false)
		if err != nil {
			return nil, fmt.Errorf("development key (delete %s to start over): %w", dir, err)
		}
		// The public key is derived from the private key whenever that
		// is read, so it is rewritten when missing or not matching.
		pubPEM, err := MarshalPublicKey(s.Public())
		if err != nil {
			return nil, fmt.Errorf("development key: %w", err)
		}
		if old, err := os.ReadFile(pubPath); err != nil || !bytes.Equal(old, pubPEM) {
			if err := atomicfile.WriteFile(pubPath, pubPEM, 0o644); err != nil {
				return nil, fmt.Errorf("development key: %w", err)
			}
		}
		return s, nil
	}
	// The private key is encrypted (with the empty password, as the format
	// requires one) under scrypt: reading it costs about 0.1 s of CPU. With
	// its public key written, it is read only when something is signed, so
	// a rebuild that signs nothing (attest keeps an unchanged provenance)
	// does not pay for it.
	if !created {
		if pub, err := LoadPublicKey(pubPath); err == nil {
			return &lazySigner{pub: pub, load: load}, false, nil
		}
	}
	s, err = load()
	if err != nil {
		return nil, false, err
	}
	return s, created, nil
}

// lazySigner is a signer whose private key is read on its first
// signature; its public key is known before.
type lazySigner struct {
	pub  crypto.PublicKey
	load func() (Signer, error)

	once   sync.Once
	signer Signer
	err    error
}

// Public is the public key written beside the private one.
func (l *lazySigner) Public() crypto.PublicKey { return l.pub }

// Prepare reads the private key in the background ([Preparer]).
func (l *lazySigner) Prepare() { go l.once.Do(l.read) }

// read reads the private key and checks that it is the one the public key
// names; it runs once.
func (l *lazySigner) read() {
	l.signer, l.err = l.load()
	if l.err == nil && KeyID(l.signer.Public()) != KeyID(l.pub) {
		l.err = errors.New("development key: the private key is not the one its public key file named when this run began; run again")
	}
}

// SignMessage reads the private key (once, or waits for Prepare's read)
// and signs.
func (l *lazySigner) SignMessage(ctx context.Context, message []byte) ([]byte, error) {
	l.once.Do(l.read)
	if l.err != nil {
		return nil, l.err
	}
	return l.signer.SignMessage(ctx, message)
}
