package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/pipeline"
	"github.com/mkrelease/mkrelease/reproduce"
	"github.com/spf13/cobra"
)

// ReproduceOptions are the inputs of `mkrelease reproduce`.
type ReproduceOptions struct {
	Factory    *Factory
	Global     *globalOptions
	Dist       string
	Keep       bool
	UseCache   bool
	JSON       bool
	JSONFields []string
}

// NewCmdReproduce rebuilds a release and compares it bit for bit.
func NewCmdReproduce(f *Factory, g *globalOptions, runF func(*ReproduceOptions) error) *cobra.Command {
	opts := &ReproduceOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "reproduce DIST",
		Short: "Rebuild a release from its recorded inputs and compare every artifact bit for bit",
		Long: `Reproduce reads the digests of release.toml and release.lock recorded in DIST (its
signed provenance, else manifest.json) and refuses when the local files differ. It then
rebuilds in a fresh temporary folder with a fresh action cache, for the targets DIST was
built for, and compares every artifact SHA256SUMS lists. For each that differs it names
the artifact and its first differing member (a member inside a wheel inside a bundle,
a JSON path, a line, an ELF section), and shows diffoscope's report when it is installed.`,
		Example: `  git checkout v0.3.0 && mkrelease reproduce ../downloads/vexl-0.3.0
  mkrelease reproduce dist --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("reproduce takes one release folder (see mkrelease reproduce --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dist = args[0]
			if runF != nil {
				return runF(opts)
			}
			return reproduceRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Keep, "keep", false, "keep the rebuilt folder and print its path")
	cmd.Flags().BoolVar(&opts.UseCache, "use-cache", false, "reuse the action cache (faster; a cached action can hide non-determinism)")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"inputs", "identical", "artifacts")
	return cmd
}

func reproduceRun(ctx context.Context, o *ReproduceOptions) error {
	g := o.Global
	if st, err := os.Stat(o.Dist); err != nil || !st.IsDir() {
		return usageErrorf("%s: no such release folder", o.Dist)
	}
	in, err := reproduce.ReadInputs(o.Dist)
	if err != nil {
		return usageErrorf("%v", err)
	}
	cfg, err := config.Load(g.ConfigPath)
	if err != nil {
		return err
	}
	l, err := lock.Read(g.lockPath())
	if err != nil {
		return err
	}
	if err := reproduce.CheckInputs(in, cfg, l); err != nil {
		return err
	}
	var targets []config.Target
	for _, name := range in.Targets {
		t, ok := cfg.Target(name)
		if !ok {
			return fmt.Errorf("%s was built for target %s, which release.toml does not declare", o.Dist, name)
		}
		targets = append(targets, t)
	}
	work, err := os.MkdirTemp("", "mkrelease-reproduce-")
	if err != nil {
		return err
	}
	if !o.Keep {
		defer os.RemoveAll(work)
	}
	cache := work + "/cache"
	if o.UseCache {
		if cache, err = g.cacheDir(o.Factory); err != nil {
			return err
		}
	}
	log := g.logger(o.Factory)
	log.Info("rebuilding", "release", o.Dist, "inputs", in.From, "targets", strings.Join(in.Targets, ","))
	rebuilt := work + "/dist"
	if _, err := pipeline.Build(ctx, pipeline.BuildOptions{
		Config: cfg, Lock: l, LockFile: g.lockPath(), Relock: g.relockCommand(), Targets: targets,
		Out: rebuilt, CacheDir: cache, Logger: log, Sandbox: sandboxOptions(o.Factory),
	}); err != nil {
		return err
	}
	arts, err := reproduce.Compare(ctx, o.Dist, rebuilt)
	if err != nil {
		return err
	}
	rep := reproduce.Report{Inputs: in, Identical: true, Artifacts: arts}
	for _, a := range arts {
		rep.Identical = rep.Identical && a.Identical
	}
	if o.JSON {
		if err := writeJSON(o.Factory.IO.Out, rep, o.JSONFields); err != nil {
			return err
		}
	} else {
		w := o.Factory.IO.Out
		differ := 0
		for _, a := range arts {
			if a.Identical {
				fmt.Fprintf(w, "identical  %s\n", a.Name)
				continue
			}
			differ++
			fmt.Fprintf(w, "DIFFERS    %s\n", a.Difference)
			if a.Diffoscope != "" {
				fmt.Fprintf(w, "--- diffoscope ---\n%s---\n", reproduce.Summary(a.Diffoscope))
			}
		}
		if rep.Identical {
			fmt.Fprintf(w, "reproduced %s: all %d artifacts identical\n", o.Dist, len(arts))
		} else {
			fmt.Fprintf(w, "not reproduced: %d of %d artifacts differ\n", differ, len(arts))
		}
		if o.Keep {
			fmt.Fprintf(w, "rebuilt folder kept: %s\n", rebuilt)
		}
	}
	if !rep.Identical {
		return &silentError{code: 1}
	}
	return nil
}
