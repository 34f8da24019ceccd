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
	Factory    *Factory
	Global     *globalOptions
	Parts      []string
	Out        string
	Key        string
	Keys       []string
	JSON       bool
	JSONFields []string
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

Merge refuses (exit status 1, nothing written) parts built from another
release.toml or release.lock, by another mkrelease, or with another epoch; two
parts holding one target; a target no part holds; a part whose files do not
match its part.json; and, when trusted keys are configured ([signing]
trusted_keys, --trusted-key), a part without a statement signed by one of them.`,
		Example: `  mkrelease merge part-linux-x86_64 part-linux-aarch64
  mkrelease merge parts/* --out dist --key file://release.key`,
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
	Signed  bool     `json:"signed"`
	Key     string   `json:"key,omitempty"`
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
		Trusted: trusted, Signer: signer, Getenv: o.Factory.Getenv, Logger: s.log})
	if err != nil {
		return err
	}
	rep := mergeReport{Out: o.Out, Parts: []mergePart{}, Artifacts: reportArtifacts(&r.Artifacts)}
	for _, p := range parts {
		m := p.Manifest
		rep.Parts = append(rep.Parts, mergePart{Dir: p.Dir, Targets: m.Targets, SHA256: p.SHA256, OS: m.Host.OS, Arch: m.Host.Arch,
			Builder: m.Host.Builder, Signed: p.Statement != "", Key: p.KeyID})
	}
	if o.JSON {
		return writeJSON(o.Factory.IO.Out, rep, o.JSONFields)
	}
	w := o.Factory.IO.Out
	printArtifacts(w, &r.Artifacts)
	for _, p := range rep.Parts {
		signed := "unsigned"
		switch {
		case p.Key != "":
			signed = "signed by trusted key " + p.Key[:16]
		case p.Signed:
			signed = "signed, not checked (no trusted keys)"
		}
		fmt.Fprintf(w, "part %s: %s, built on %s/%s (%s), %s\n", p.Dir, strings.Join(p.Targets, ", "), p.OS, p.Arch, p.Builder, signed)
	}
	fmt.Fprintf(w, "merged %d part%s of %s %s into %s\n", len(parts), plural(len(parts)), cfg.Project.NormalizedName, cfg.Project.Version, o.Out)
	return nil
}
