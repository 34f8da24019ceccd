package main

import (
	"fmt"

	"github.com/mkrelease/mkrelease/provenance"
	"github.com/spf13/cobra"
)

// KeygenOptions are the inputs of `mkrelease keygen`.
type KeygenOptions struct {
	Factory *Factory
	Key     string
	Pub     string
}

// NewCmdKeygen creates a signing key pair.
func NewCmdKeygen(f *Factory, runF func(*KeygenOptions) error) *cobra.Command {
	opts := &KeygenOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Create a signing key pair: an encrypted private key and a PEM public key",
		Long: `Keygen writes an ECDSA P-256 private key, encrypted with a password (sigstore's
encrypted PEM, as cosign writes it), and its PEM public key. The password comes from
MKRELEASE_KEY_PASSWORD, or is asked twice on a terminal; an empty password is refused.
Existing files are never replaced. Sign with it by setting [signing] key =
"file://PATH" in release.toml; give auditors the public key.`,
		Example: `  mkrelease keygen --key keys/release.key --pub keys/release.pub
  MKRELEASE_KEY_PASSWORD=... mkrelease keygen`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return keygenRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Key, "key", "mkrelease.key", "private key file to create (encrypted)")
	cmd.Flags().StringVar(&opts.Pub, "pub", "mkrelease.pub", "public key file to create")
	return cmd
}

func keygenRun(o *KeygenOptions) error {
	pw, err := o.Factory.password(true)
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := provenance.Keygen(o.Key, o.Pub, pw); err != nil {
		return err
	}
	fmt.Fprintf(o.Factory.IO.Out, "wrote %s (encrypted private key, keep it secret) and %s (public key, give it to auditors)\nsign with: [signing] key = \"file://%s\"\n", o.Key, o.Pub, o.Key)
	return nil
}
