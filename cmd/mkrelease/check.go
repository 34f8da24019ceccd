package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/build/source"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/internal/workdir"
	"github.com/mkrelease/mkrelease/release"
	"github.com/spf13/cobra"
)

// CheckOptions are the inputs of `mkrelease check`.
type CheckOptions struct {
	Factory    *Factory
	Global     *globalOptions
	JSON       bool
	JSONFields []string
}

// NewCmdCheck validates release.toml and release.lock.
func NewCmdCheck(f *Factory, g *globalOptions, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Validate release.toml and release.lock against the sources, overlays and toolchains",
		Long: `Check loads release.toml strictly (an unknown or wrongly cased key, a wrong type, an
invalid version or name, a control or bidi character in a value: errors with
file:line:col), then verifies that release.lock matches the pinned sources, the
overlays and the toolchains found on this machine, and checks everything else a
build reads: the readme, the changelog's section for this version, the dependency
lock, the signing and trusted keys, every wheel include and step folder in the
prepared sources. A release that passes check does not fail build on its
configuration. It writes nothing but its caches.`,
		Example: `  mkrelease check
  mkrelease check --config other/release.toml --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(opts)
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"ok", "config", "lock", "project", "version", "findings")
	return cmd
}

// The kinds of a check finding (docs/json.md lists them under check).
const (
	// findingConfig: release.toml (or a file it reads, such as
	// pyproject.toml) is wrong, at file:line:col when known.
	findingConfig = "config"
	// findingLock: release.lock is missing, malformed or of another
	// format version.
	findingLock = "lock"
	// findingDrift: a source, overlay or toolchain differs from what
	// release.lock pins; the message starts with the lock entry ("source
	// up", "overlay x", "toolchain cc [linux-aarch64]").
	findingDrift = "drift"
	// findingStale: a source read from a git work tree is not what that
	// tree shows, and [build] require_current refuses it.
	findingStale = "stale"
	// findingError: any other failure, as its message says.
	findingError = "error"
)

// Finding is one problem reported by check, for --json.
type Finding struct {
	// Kind is findingConfig, findingLock, findingDrift, findingStale or
	// findingError.
	Kind    string `json:"kind"`
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

type checkReport struct {
	OK       bool      `json:"ok"`
	Config   string    `json:"config"`
	Lock     string    `json:"lock"`
	Project  string    `json:"project,omitempty"`
	Version  string    `json:"version,omitempty"`
	Findings []Finding `json:"findings"`
	// metadata are the pyproject.toml files the metadata was read from
	// (from), as messages name them.
	metadata []string
}

func checkRun(ctx context.Context, o *CheckOptions) error {
	g, io := o.Global, o.Factory.IO
	rep := checkReport{Config: g.ConfigPath, Lock: g.lockPath(), Findings: []Finding{}}
	err := doCheck(ctx, o, &rep)
	if err != nil {
		rep.Findings = findings(err)
	}
	rep.OK = err == nil
	if o.JSON {
		if werr := writeJSON(io.Out, rep, o.JSONFields); werr != nil {
			return werr
		}
		if err != nil {
			return &silentError{code: exitCode(err)}
		}
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(io.Out, "%s: ok (%s %s)\n", g.ConfigPath, rep.Project, rep.Version)
	for _, f := range rep.metadata {
		fmt.Fprintf(io.Out, "%s: ok (PEP 621 metadata)\n", f)
	}
	fmt.Fprintf(io.Out, "%s: matches the sources, overlays and toolchains\n", rep.Lock)
	return nil
}

func doCheck(ctx context.Context, o *CheckOptions, rep *checkReport) error {
	g := o.Global
	cfg, err := config.Load(g.ConfigPath)
	if err != nil {
		return err
	}
	rep.Project, rep.Version = cfg.Project.NormalizedName, cfg.Project.Version
	for _, f := range cfg.MetadataFiles {
		rep.metadata = append(rep.metadata, filepath.Join(filepath.Dir(g.ConfigPath), filepath.FromSlash(f.Path)))
	}
	l, err := lock.Read(g.lockPath())
	if err != nil {
		return err
	}
	cache, err := g.cacheDir(o.Factory)
	if err != nil {
		return err
	}
	log := g.logger(o.Factory)
	scratch, err := scratchDir(log, "mkrelease-check-")
	if err != nil {
		return err
	}
	defer scratch.Remove()
	_, err = build.Prepare(ctx, build.PrepareOptions{
		Config: cfg, Lock: l, LockFile: g.lockPath(), Relock: g.relockCommand(),
		Fetcher: &source.Fetcher{ProjectDir: cfg.Dir, CacheDir: cache, Logger: log},
		Scratch: scratch.Path, Logger: log, Digests: digestmemo.Memo{Dir: release.DigestsDir(cache)},
		RequireCurrent: cfg.Build.Current(false),
	})
	return err
}

// scratchDir creates the scratch folder of a check or lock run in the
// temporary folder, named prefix*, with [workdir.Scratch]: the run holds it
// locked while it lives, and the folders with that prefix that killed runs
// left are removed first and logged.
func scratchDir(log *slog.Logger, prefix string) (*workdir.Dir, error) {
	d, removed, err := workdir.Scratch(prefix)
	if d == nil {
		workdir.LogSwept(log, removed, nil)
		return nil, fmt.Errorf("%w (make the temporary folder writable, or point TMPDIR at one that is)", err)
	}
	workdir.LogSwept(log, removed, err)
	return d, nil
}

// findings turns an error into the findings of a report.
func findings(err error) []Finding {
	var list config.ErrorList
	if errors.As(err, &list) {
		var out []Finding
		for _, e := range list {
			out = append(out, Finding{Kind: findingConfig, File: e.File, Line: e.Pos.Line, Column: e.Pos.Column, Key: e.Key, Message: e.Msg, Hint: e.Hint})
		}
		return out
	}
	var ce *config.Error
	if errors.As(err, &ce) {
		return []Finding{{Kind: findingConfig, File: ce.File, Line: ce.Pos.Line, Column: ce.Pos.Column, Key: ce.Key, Message: ce.Msg, Hint: ce.Hint}}
	}
	var drift *lock.DriftError
	if errors.As(err, &drift) {
		var out []Finding
		for _, d := range drift.Drifts {
			msg := d.Entry + ": " + d.What
			if d.Expected != "" || d.Found != "" {
				msg += fmt.Sprintf(" (locked %s, found %s)", d.Expected, d.Found)
			}
			out = append(out, Finding{Kind: findingDrift, File: d.File, Message: msg, Hint: "review, then run `" + drift.Relock + "`"})
		}
		return out
	}
	var stale *build.StaleError
	if errors.As(err, &stale) {
		var out []Finding
		for _, p := range stale.Problems {
			out = append(out, Finding{Kind: findingStale, Message: p, Hint: "or set require_current = false under [build] in release.toml"})
		}
		return out
	}
	var le *lock.Error
	if errors.As(err, &le) {
		return []Finding{{Kind: findingLock, File: le.File, Message: le.Msg, Hint: le.Hint}}
	}
	return []Finding{{Kind: findingError, Message: err.Error()}}
}
