package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mkrelease/mkrelease/bundle"
	"github.com/spf13/cobra"
)

// InstallOptions are the inputs of `mkrelease install`.
type InstallOptions struct {
	Factory    *Factory
	Bundle     string
	Venv       string
	Python     string
	JSON       bool
	JSONFields []string
}

// NewCmdInstall installs a bundle offline.
func NewCmdInstall(f *Factory, runF func(*InstallOptions) error) *cobra.Command {
	opts := &InstallOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "install BUNDLE",
		Short: "Install an offline bundle into a new or existing virtualenv, with no network",
		Long: `Install checks the bundle first (its .sha256 sidecar when present, with a warning
when it is not; a safe extraction refusing traversal, links, devices, duplicates and
decompression bombs; SHA256SUMS; every wheel; manifest.json naming exactly the bundle's
wheels; requirements.txt and pylock.toml exactly as mkrelease writes them, so no option
line, comment, URL or overlong line can send pip outside the bundle; install.sh and
INSTALL.md as written), checks the platform and picks a supported interpreter, then
creates or reuses the virtualenv, installs with pip --no-index --require-hashes
--only-binary :all: and runs pip check.

Nothing comes from outside the bundle: PIP_*, PYTHON* and VIRTUAL_ENV are removed
from pip's and Python's environment, Python runs isolated (-I) and pip with
--isolated and no configuration file. A refused bundle installs nothing; a
virtualenv created for a failed or interrupted (Ctrl-C) install is removed.

A virtualenv install creates holds the file .mkrelease-installing, naming the
folder, until the install has completed. A kill that left no chance to clean up
(kill -9, a power cut) leaves it behind, and the next install into that folder
removes it and creates it again, saying so. A folder that is a symbolic link,
whose file names another folder, or that is (or holds) the home folder is never
removed: install refuses it, naming it. A virtualenv install did not create is
never removed either: a good one is reused, one without a working pip is refused.
On Linux, where the host allows PID namespaces, nothing Python or pip started
outlives a killed install to write into the folder being recreated.

Exit status 1 when the bundle or the install is refused, 2 for bad invocations.`,
		Example: `  mkrelease install vexl-0.3.0-linux-x86_64.tar.gz
  mkrelease install vexl-0.3.0-linux-x86_64.tar.gz --venv /opt/vexl --python python3.12`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("install takes one bundle (see mkrelease install --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Bundle = args[0]
			if runF != nil {
				return runF(opts)
			}
			return installRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Venv, "venv", "", "virtualenv to create or reuse (default: ./NAME-venv)")
	cmd.Flags().StringVar(&opts.Python, "python", "", "interpreter for a new virtualenv (default: the newest supported one found)")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"venv", "python", "created", "packages")
	return cmd
}

func installRun(ctx context.Context, o *InstallOptions) error {
	if st, err := os.Stat(o.Bundle); err != nil || st.IsDir() {
		return usageErrorf("%s: no such bundle file", o.Bundle)
	}
	opened, rep, err := bundle.Open(ctx, o.Bundle)
	if err != nil {
		return err
	}
	defer opened.Close()
	w := o.Factory.IO.ErrOut
	for _, warn := range rep.Warnings {
		fmt.Fprintf(w, "mkrelease: warning: %s\n", warn)
	}
	if err := rep.Err(); err != nil {
		return fmt.Errorf("nothing installed: %w", err)
	}
	fmt.Fprintf(w, "mkrelease: bundle %s verified (%s)\n", o.Bundle, strings.Join(rep.Checks, ", "))
	venv := o.Venv
	if venv == "" {
		venv = opened.Manifest.Project.Name + "-venv"
	}
	res, err := bundle.Install(ctx, opened, bundle.InstallOptions{Venv: venv, Python: o.Python, Log: w, Getenv: o.Factory.Getenv})
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.Factory.IO.Out, res, o.JSONFields)
	}
	verb := "into the existing virtualenv"
	if res.Created {
		verb = "into a new virtualenv"
	}
	fmt.Fprintf(o.Factory.IO.Out, "installed %s %s (%s)\n", verb, res.Venv, res.Python)
	for _, p := range res.Packages {
		fmt.Fprintln(o.Factory.IO.Out, "  "+p)
	}
	return nil
}
