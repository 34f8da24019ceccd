package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/spf13/cobra"
)

// VerifyOptions are the inputs of `mkrelease verify`.
type VerifyOptions struct {
	Factory    *Factory
	Global     *globalOptions
	Paths      []string
	Keys       []string
	Since      string
	SaveState  string
	JSON       bool
	JSONFields []string
}

// NewCmdVerify audits artifacts.
func NewCmdVerify(f *Factory, g *globalOptions, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "verify PATH...",
		Short: "Audit an output folder, a channel, bundles, wheels, evidence, sidecars or SHA256SUMS",
		Long: `Verify checks what it is given without installing anything:
  a folder      SHA256SUMS (no file missing or unlisted), every sidecar, every wheel and
                bundle, release pairs, the SBOMs (SPDX and CycloneDX) against the
                files they describe, manifest.json digests, the signed provenance (a
                trusted key, subjects = the folder's wheels, bundles and SBOMs, lock
                facts = release.lock)
  a channel     (a folder published by mkrelease publish) its state, every file's digest,
                sidecars and SHA256SUMS, .metadata files, every index page's links; its
                signed state (channel.json signed by a trusted key: generation, time,
                every version's files); per version the verification summary and
                provenance signatures and subjects, every wheel
  FILE.whl      file name, WHEEL, METADATA, every RECORD hash and size, member paths
  FILE.tar.gz   sidecar, safe extraction, layout, SHA256SUMS, every wheel, requirements.txt
  X.intoto.jsonl  the provenance against the files of its folder
  X.vsa.intoto.jsonl  a verification summary against the files of its folder
  FILE.sha256   the sidecar against the file beside it
  SHA256SUMS    every listed file of its folder
Signatures are trusted when made with a --key, or a key of [signing] trusted_keys in
the project's release.toml. release.lock, when present, is compared with the provenance.
It prints one line per check and exits 1 when any check fails, naming the file or member.

A channel is refused (check "rollback") when it is older than a state of it seen before:
a lower generation (a rollback or freeze hides newer releases), the same generation with
another channel.json (a fork), or a newer one missing or changing a version seen. verify
remembers the last state that passed every check of each channel folder in the cache
folder (channels/ in --cache-dir); --since FILE compares with the state in FILE instead,
and --save-state FILE writes the state verified to FILE (either flag turns the remembered
state off; both may name the same file).`,
		Example: `  mkrelease verify dist --key release.pub
  mkrelease verify vexl-0.3.0-linux-x86_64.tar.gz --json
  mkrelease verify dist/vexl_plugin-0.3.0-py3-none-win_amd64.whl
  mkrelease verify /srv/channel --key release.pub --since channel.state --save-state channel.state`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("verify needs at least one path (see mkrelease verify --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			if runF != nil {
				return runF(opts)
			}
			return verifyRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Keys, "key", nil, "trusted public key (PEM) for the provenance signature (repeatable)")
	cmd.Flags().StringVar(&opts.Since, "since", "", "refuse the channel when it is older than the state in `FILE` (written by --save-state)")
	cmd.Flags().StringVar(&opts.SaveState, "save-state", "", "write the channel's state to `FILE` when every check holds")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"ok", "items")
	return cmd
}

func verifyRun(ctx context.Context, o *VerifyOptions) error {
	s := newSession(o.Factory, o.Global)
	keys, err := s.trustedKeys(o.Keys)
	if err != nil {
		return err
	}
	l, err := s.lockIfPresent()
	if err != nil {
		return err
	}
	states, err := o.channelStates(s)
	if err != nil {
		return err
	}
	rep, err := audit.Paths(ctx, o.Paths, audit.Options{TrustedKeys: keys, Lock: l, Channels: states})
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Factory.IO.Out, rep, o.JSONFields); err != nil {
			return err
		}
	} else {
		w := o.Factory.IO.Out
		failed, checks := 0, 0
		for _, it := range rep.Items {
			for _, c := range it.Checks {
				checks++
				if c.OK {
					fmt.Fprintf(w, "ok    %s: %s\n", it.Path, c.Name)
					continue
				}
				failed++
				for _, fd := range c.Findings {
					if fd.File != "" {
						fmt.Fprintf(w, "FAIL  %s: %s: %s: %s\n", it.Path, c.Name, fd.File, fd.Msg)
					} else {
						fmt.Fprintf(w, "FAIL  %s: %s: %s\n", it.Path, c.Name, fd.Msg)
					}
				}
			}
			for _, warning := range it.Warnings {
				fmt.Fprintf(w, "WARN  %s: %s\n", it.Path, warning)
			}
		}
		if rep.OK {
			fmt.Fprintf(w, "verified %d item%s (%d checks): every check holds\n", len(rep.Items), plural(len(rep.Items)), checks)
		} else {
			fmt.Fprintf(w, "verification failed: %d of %d checks failed\n", failed, checks)
		}
	}
	if !rep.OK {
		return &silentError{code: 1}
	}
	return nil
}

// channelStates returns where verify reads and keeps channel states: the
// files of --since and --save-state, which need exactly one channel among
// the paths, else the states remembered in the cache folder.
func (o *VerifyOptions) channelStates(s *session) (*channelStates, error) {
	if o.Since == "" && o.SaveState == "" {
		return newChannelStates(s), nil
	}
	var channels []string
	for _, p := range o.Paths {
		if audit.IsChannel(p) {
			channels = append(channels, p)
		}
	}
	if len(channels) != 1 {
		return nil, usageErrorf("--since and --save-state are about one channel, and %d of the paths are channels (folders holding channel.json): verify one channel at a time with them", len(channels))
	}
	c := &channelStates{save: o.SaveState, log: s.log}
	if o.Since != "" {
		cp, err := channel.ReadCheckpoint(o.Since)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usageErrorf("--since %s: no such file; write it with --save-state %s when the channel verifies", o.Since, o.Since)
		}
		if err != nil {
			return nil, err
		}
		c.since = cp
	}
	return c, nil
}
