package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/scaffold"
	"github.com/spf13/cobra"
)

// InitOptions are the inputs of `mkrelease init`.
type InitOptions struct {
	Factory *Factory
	Global  *globalOptions
	Dir     string
	// NoLock skips the lock after writing the files.
	NoLock bool
}

// NewCmdInit scaffolds release.toml, a changelog, a verifier skeleton and
// .gitignore lines in a project, then locks it.
func NewCmdInit(f *Factory, g *globalOptions, runF func(*InitOptions) error) *cobra.Command {
	opts := &InitOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold release.toml, a changelog, a verifier skeleton and .gitignore lines, then lock",
		Long: `Init looks at the project in DIR (default: the current folder) and writes a
commented release.toml for it: a Go module's main and c-shared (//export)
packages and a Makefile's or CMake project's shared library become build
steps and a native wheel; each Python package (a folder with __init__.py,
at the top or under src/) becomes a wheel of its own. With a pyproject.toml
[project] table, release.toml reads the release's metadata from it
(from = "pyproject.toml") and writes only what it lacks; without one, the
license is read from the LICENSE file's text or the sources'
SPDX-License-Identifier lines. The project is the source as committed in
git (the HEAD commit), so ignored and uncommitted files are never built.
Init prints what it detected, the license and the wheels.

It also writes CHANGELOG.md (when there is no changelog) with a section for
the version, a verifier skeleton (verifier/: one cases lane, one crossover
lane), and adds /.mkrelease/, /dist/ and the channel (/published and its
generations) to .gitignore. It writes nothing over an existing file: when
one is there it refuses (exit 2) before writing anything. Lines to fill in
are marked EDIT ME.

Then it runs lock. When lock fails because something needs editing, init
says so and exits non-zero, keeping the files.`,
		Example: `  mkrelease init
  mkrelease init path/to/project
  # then: edit release.toml, commit, and
  mkrelease lock && mkrelease build && mkrelease evidence run && mkrelease publish`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("init takes at most one folder, got %q (see mkrelease init --help)", args)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f := cmd.Flag("config"); f != nil && f.Changed {
				return usageErrorf("init writes DIR/release.toml: name the project folder instead of --config (see mkrelease init --help)")
			}
			opts.Dir = "."
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return initRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.NoLock, "no-lock", false, "write the files but do not run lock")
	return cmd
}

func initRun(ctx context.Context, o *InitOptions) error {
	w := o.Factory.IO.Out
	p, err := scaffold.Detect(o.Dir)
	if err != nil {
		return usageErrorf("init: %v", err)
	}
	h := scaffold.Inspect(ctx, o.Dir, runtime.GOOS, runtime.GOARCH, p, o.Factory.Getenv)
	files, err := scaffold.Files(p, h)
	if err != nil {
		return err
	}
	written, err := scaffold.Write(o.Dir, files)
	if err != nil {
		return fmt.Errorf("init: %w", err)
	}
	for _, l := range scaffold.Summary(p, h) {
		fmt.Fprintln(w, l)
	}
	for _, f := range written {
		fmt.Fprintf(w, "  wrote %s\n", filepath.ToSlash(filepath.Join(o.Dir, f)))
	}
	if p.Changelog != "" {
		fmt.Fprintf(w, "  kept %s: it needs a section headed `## %s` for this release\n", p.Changelog, p.Version)
	}
	if u := scaffold.Untracked(p, h); len(u) > 0 {
		fmt.Fprintf(w, "warning: the HEAD commit does not hold %s: commit them, then set [[source]] commit in release.toml to `git rev-parse HEAD`\n", strings.Join(u, ", "))
	}
	cfgPath := filepath.Join(o.Dir, config.DefaultFile)
	editMe := false
	if b, err := os.ReadFile(cfgPath); err == nil {
		editMe = strings.Contains(string(b), scaffold.EditMe)
	}
	next := func() {
		fmt.Fprintln(w, "next:")
		if editMe {
			fmt.Fprintf(w, "  edit the lines marked %s in %s\n", scaffold.EditMe, cfgPath)
		}
		fmt.Fprintf(w, "  review %s (summary, license) and verifier/, commit them with release.lock\n", cfgPath)
		fmt.Fprintf(w, "  mkrelease build && mkrelease install %s && mkrelease evidence run && mkrelease publish\n", bundlePath(cfgPath))
	}
	if o.NoLock {
		next()
		return nil
	}
	g := *o.Global
	g.ConfigPath = cfgPath
	if err := lockRun(ctx, &LockOptions{Factory: o.Factory, Global: &g}); err != nil {
		fmt.Fprintf(w, "lock failed: the files are kept; fix what follows in %s, then run mkrelease lock\n", cfgPath)
		next()
		return err
	}
	next()
	return nil
}

// bundlePath is where build writes the bundle of the release cfgPath
// describes, for its first target (the one init writes), relative to the
// project folder; the name spelt with placeholders when the configuration
// does not load yet (a line marked EDIT ME).
func bundlePath(cfgPath string) string {
	c, err := config.Load(cfgPath)
	if err != nil || len(c.Targets) == 0 {
		return "dist/" + dist.NamesOf("NAME", "VERSION").Bundle("TARGET")
	}
	return "dist/" + dist.NamesOf(c.Project.NormalizedName, c.Project.Version).Bundle(c.Targets[0].Name)
}
