package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mkrelease/mkrelease/pipeline"
)

// MergeOptions are the inputs of `mkrelease merge`.
type MergeOptions struct {
	Factory *Factory
	Global  *globalOptions
	Parts   []string
	Out     string
	Key     string
	Keys    []string
	// AllowUnsigned takes parts no trusted key vouches for, and says so in
	// the merged release.
	AllowUnsigned bool
	JSON          bool
	JSONFields    []string
}

// NewCmdMerge joins parts built on several machines into one release.
func NewCmdMerge(f *Factory, g *globalOptions, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "merge PART...",
		Short: "Join the parts built on several machines into one release folder",
		Long: `Merge checks every part (a folder mkrelease build --target T --part wrote) and
joins them into one release folder: each target's wheels, bundle and build
outputs from its part, and the release notes, SBOM, manifest.json, artifacts.json,
sidecars and SHA256SUMS made from the parts' records. Every reproducible file is
byte for byte what one machine building every target writes. It signs one
provenance whose resolvedDependencies name each part (part.json by digest) and
whose byproducts name each part's builder.

Merge takes no part on trust: every part must carry a statement signed by a
trusted key ([signing] trusted_keys, --trusted-key), and without a trusted key
merge refuses to run. --allow-unsigned-parts takes the parts no trusted key
vouches for (without a statement, or with none to check it); the merged
release records them (manifest.json build.unsigned_parts, the provenance's
internalParameters.unsigned_parts) and the default release policy refuses to
publish it ([build.parts_signed]).

Merge refuses (exit status 1, nothing written) parts built from another
release.toml or release.lock, by another mkrelease, or with another epoch; two
parts holding one target; a target no part holds; a part whose files do not
match its part.json; a part statement a trusted key does not verify; and,
unless --allow-unsigned-parts, a part without a statement, or any part when
no key is trusted.`,
		Example: `  mkrelease merge part-linux-x86_64 part-linux-aarch64
  mkrelease merge parts/* --out dist --key file://release.key --trusted-key builders/x86.pub --trusted-key builders/arm.pub`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("merge needs the part folders (see mkrelease merge --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Parts = args
			if runF != nil {
				return runF(opts)
			}
			return mergeRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "dist", "release folder to write (replaced as a whole)")
	cmd.Flags().StringVar(&opts.Key, "key", "", "signing key URI for the provenance (default: [signing] key, else the local development key)")
	cmd.Flags().StringArrayVar(&opts.Keys, "trusted-key", nil, "public key a part statement may be signed by (repeatable; added to [signing] trusted_keys)")
	cmd.Flags().BoolVar(&opts.AllowUnsigned, "allow-unsigned-parts", false, "take parts no trusted key vouches for; the merged release records them and the default policy refuses to publish it")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"out", "parts", "artifacts")
	return cmd
}

type mergeReport struct {
	Out       string           `json:"out"`
	Parts     []mergePart      `json:"parts"`
	Artifacts []reportArtifact `json:"artifacts"`
}

type mergePart struct {
	Dir     string   `json:"dir"`
	Targets []string `json:"targets"`
	SHA256  string   `json:"part_sha256"`
	OS      string   `json:"os"`
	Arch    string   `json:"arch"`
	Builder string   `json:"builder"`
	// Signed says a trusted key's signature on the part statement
	// verified (Key names the key); Statement that the part carries one.
	Signed    bool   `json:"signed"`
	Key       string `json:"key,omitempty"`
	Statement bool   `json:"statement"`
}

func mergeRun(ctx context.Context, o *MergeOptions) error {
	s := newSession(o.Factory, o.Global)
	cfg, err := s.config()
	if err != nil {
		return err
	}
	l, err := s.lock()
	if err != nil {
		return err
	}
	trusted, err := s.trustedKeys(o.Keys)
	if err != nil {
		return err
	}
	signer, err := s.signingKey(ctx, o.Key)
	if err != nil {
		return err
	}
	r, parts, err := pipeline.Merge(ctx, pipeline.MergeOptions{Config: cfg, Lock: l, Parts: o.Parts, Out: o.Out,
		Trusted: trusted, AllowUnsigned: o.AllowUnsigned, Signer: signer, Getenv: o.Factory.Getenv, Logger: s.log})
	if err != nil {
		return err
	}
	rep := mergeReport{Out: o.Out, Parts: []mergePart{}, Artifacts: reportArtifacts(&r.Artifacts)}
	for _, p := range parts {
		m := p.Manifest
		rep.Parts = append(rep.Parts, mergePart{Dir: p.Dir, Targets: m.Targets, SHA256: p.SHA256, OS: m.Host.OS, Arch: m.Host.Arch,
			Builder: m.Host.Builder, Signed: p.Verified(), Key: p.KeyID, Statement: p.Statement != ""})
	}
	if o.JSON {
		return writeJSON(o.Factory.IO.Out, rep, o.JSONFields)
	}
	w := o.Factory.IO.Out
	printArtifacts(w, &r.Artifacts)
	for _, p := range rep.Parts {
		signed := "UNSIGNED (no part statement), taken with --allow-unsigned-parts"
		switch {
		case p.Signed:
			signed = "signed by trusted key " + p.Key[:16]
		case p.Statement:
			signed = "signature NOT CHECKED (no trusted key), taken with --allow-unsigned-parts"
		}
		fmt.Fprintf(w, "part %s: %s, built on %s/%s (%s), %s\n", p.Dir, strings.Join(p.Targets, ", "), p.OS, p.Arch, p.Builder, signed)
	}
	fmt.Fprintf(w, "merged %d part%s of %s %s into %s\n", len(parts), plural(len(parts)), cfg.Project.NormalizedName, cfg.Project.Version, o.Out)
	return nil
}
