package provenance

// KMS signing through sigstore/sigstore's provider registry, with the
// hashivault:// (and openbao://) provider compiled in. Parked outside the
// build (a folder starting with "_" is ignored by the go command, go mod
// tidy included); the package documentation says how to enable it and
// what it costs. It replaces kms_none.go.

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"slices"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms"
	_ "github.com/sigstore/sigstore/pkg/signature/kms/hashivault" // registers hashivault:// and openbao://
	"github.com/sigstore/sigstore/pkg/signature/options"
)

func compiledKMSSchemes() []string { return kms.SupportedProviders() }

// loadKMSSigner resolves uri through sigstore's KMS provider registry, but
// only for a scheme a compiled-in provider registered: kms.Get would
// otherwise look for a "sigstore-kms-SCHEME" plugin program on PATH and run
// it, and mkrelease does not run programs named by a key reference.
func loadKMSSigner(ctx context.Context, uri, scheme string, cfg loadConfig) (Signer, error) {
	if !slices.Contains(compiledKMSSchemes(), scheme+"://") {
		return nil, notCompiledIn(uri, scheme)
	}
	opts := []signature.RPCOption{options.WithContext(ctx)}
	if scheme == "hashivault" || scheme == "openbao" {
		// The provider reads these from the process environment when they
		// are left empty; passing them makes WithGetenv apply.
		addr, token := cfg.getenv("VAULT_ADDR"), cfg.getenv("VAULT_TOKEN")
		if addr == "" {
			addr = cfg.getenv("BAO_ADDR")
		}
		if token == "" {
			token = cfg.getenv("BAO_TOKEN")
		}
		opts = append(opts, options.WithRPCAuthOpts(options.RPCAuth{Address: addr, Token: token}))
	}
	sv, err := kms.Get(ctx, uri, crypto.SHA256, opts...)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", uri, err)
	}
	pub, err := sv.PublicKey(options.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: fetch the public key: %w", uri, err)
	}
	if err := checkKeyType(pub); err != nil {
		return nil, fmt.Errorf("signing key %s: %w", uri, err)
	}
	return &kmsSigner{sv: sv, pub: pub}, nil
}

// kmsSigner signs through a KMS: the message is hashed here (SHA-256) and
// the digest is signed remotely.
type kmsSigner struct {
	sv  signature.Signer
	pub crypto.PublicKey
}

func (s *kmsSigner) Public() crypto.PublicKey { return s.pub }

func (s *kmsSigner) SignMessage(ctx context.Context, message []byte) ([]byte, error) {
	return s.sv.SignMessage(bytes.NewReader(message), options.WithContext(ctx))
}
