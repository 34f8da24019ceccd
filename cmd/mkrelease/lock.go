package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/spf13/cobra"
)

// LockOptions are the inputs of `mkrelease lock`.
type LockOptions struct {
	Factory    *Factory
	Global     *globalOptions
	JSON       bool
	JSONFields []string
}

// NewCmdLock (re)computes release.lock.
func NewCmdLock(f *Factory, g *globalOptions, runF func(*LockOptions) error) *cobra.Command {
	opts := &LockOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "lock",
		Short: "Compute release.lock from the sources, overlays and toolchains",
		Long: `Lock materialises every source as pinned in release.toml, applies the overlays,
identifies the toolchains, and writes release.lock (atomically). Review the diff and
commit it: build refuses anything that differs from it.`,
		Example: `  mkrelease lock
  git diff release.lock`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return lockRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"lock", "changed", "changes")
	return cmd
}

type lockReport struct {
	Lock    string   `json:"lock"`
	Changed bool     `json:"changed"`
	Changes []string `json:"changes"`
}

func lockRun(ctx context.Context, o *LockOptions) error {
	g := o.Global
	cfg, err := config.Load(g.ConfigPath)
	if err != nil {
		return err
	}
	cache, err := g.cacheDir(o.Factory)
	if err != nil {
		return err
	}
	log := g.logger(o.Factory)
	scratch, err := scratchDir(log, "mkrelease-lock-")
	if err != nil {
		return err
	}
	defer scratch.Remove()
	p, err := build.Prepare(ctx, build.PrepareOptions{
		Config: cfg, Fetcher: &source.Fetcher{ProjectDir: cfg.Dir, CacheDir: cache, Logger: log},
		Scratch: scratch.Path, Logger: log, LockOnly: true,
	})
	if err != nil {
		return err
	}
	path := g.lockPath()
	old, err := lock.Read(path)
	var le *lock.Error
	if err != nil && !errors.As(err, &le) {
		return err
	}
	rep := lockReport{Lock: path, Changes: lockChanges(old, p.Found)}
	rep.Changed = len(rep.Changes) > 0
	if rep.Changed || old == nil {
		if err := p.Found.Write(path); err != nil {
			return err
		}
	}
	if o.JSON {
		return writeJSON(o.Factory.IO.Out, rep, o.JSONFields)
	}
	w := o.Factory.IO.Out
	for _, c := range rep.Changes {
		fmt.Fprintln(w, "  "+c)
	}
	if rep.Changed {
		fmt.Fprintf(w, "%s: written (%d change%s); review it and commit it\n", path, len(rep.Changes), plural(len(rep.Changes)))
	} else {
		fmt.Fprintf(w, "%s: up to date\n", path)
	}
	return nil
}

// fieldChanges describes the fields that differ, each as
// "name old -> new" (an empty value shown as "none"), in order.
func fieldChanges(fields ...[3]string) string {
	var out []string
	for _, f := range fields {
		if f[1] == f[2] {
			continue
		}
		old, cur := f[1], f[2]
		if old == "" {
			old = "none"
		}
		if cur == "" {
			cur = "none"
		}
		out = append(out, f[0]+" "+old+" -> "+cur)
	}
	return strings.Join(out, ", ")
}

// lockChanges describes what differs between the old lock (nil: none) and
// the new one, entry by entry.
func lockChanges(old, cur *lock.Lock) []string {
	changes := []string{}
	if old == nil {
		old = &lock.Lock{}
	}
	for _, s := range cur.Sources {
		switch ls, ok := old.Source(s.Name); {
		case !ok:
			changes = append(changes, fmt.Sprintf("source %s: added (%s)", s.Name, s.Tree))
		case ls.Tree != s.Tree || ls.Kind != s.Kind || ls.Location != s.Location || ls.Commit != s.Commit || ls.SHA256 != s.SHA256:
			changes = append(changes, "source "+s.Name+": "+fieldChanges(
				[3]string{"kind", ls.Kind, s.Kind}, [3]string{"location", ls.Location, s.Location},
				[3]string{"commit", ls.Commit, s.Commit}, [3]string{"sha256", ls.SHA256, s.SHA256},
				[3]string{"tree", ls.Tree, s.Tree}))
		case ls.Size != s.Size:
			changes = append(changes, fmt.Sprintf("source %s: archive size %d bytes recorded", s.Name, s.Size))
		}
	}
	for _, s := range old.Sources {
		if _, ok := cur.Source(s.Name); !ok {
			changes = append(changes, "source "+s.Name+": removed")
		}
	}
	for _, ov := range cur.Overlays {
		switch lo, ok := old.Overlay(ov.Name); {
		case !ok:
			changes = append(changes, fmt.Sprintf("overlay %s: added (%s)", ov.Name, ov.Digest))
		case lo.Digest != ov.Digest || lo.Result != ov.Result || lo.Path != ov.Path || lo.Source != ov.Source:
			changes = append(changes, "overlay "+ov.Name+": "+fieldChanges(
				[3]string{"source", lo.Source, ov.Source}, [3]string{"path", lo.Path, ov.Path},
				[3]string{"digest", lo.Digest, ov.Digest}, [3]string{"result", lo.Result, ov.Result}))
		}
	}
	for _, ov := range old.Overlays {
		if _, ok := cur.Overlay(ov.Name); !ok {
			changes = append(changes, "overlay "+ov.Name+": removed")
		}
	}
	for _, t := range cur.Toolchains {
		switch lt, ok := old.Toolchain(t.Name, t.Target); {
		case !ok:
			changes = append(changes, fmt.Sprintf("toolchain %s: added (%s, sha256 %s)", t.Key(), t.Version, t.SHA256))
		case lt.Version != t.Version || lt.SHA256 != t.SHA256:
			changes = append(changes, "toolchain "+t.Key()+": "+fieldChanges(
				[3]string{"version", lt.Version, t.Version}, [3]string{"sha256", lt.SHA256, t.SHA256}))
		}
	}
	for _, t := range old.Toolchains {
		if _, ok := cur.Toolchain(t.Name, t.Target); !ok {
			changes = append(changes, "toolchain "+t.Key()+": removed")
		}
	}
	if len(changes) == 0 && old != nil {
		// Same entries, maybe another order or format: compare bytes.
		a, _ := old.Marshal()
		b, _ := cur.Marshal()
		if string(a) != string(b) {
			changes = append(changes, "entries reordered or reformatted")
		}
	}
	return changes
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
