package main

import (
	"context"
	"fmt"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/spf13/cobra"
)

// VerifyOptions are the inputs of `mkrelease verify`.
type VerifyOptions struct {
	Factory *Factory
	Paths   []string
	JSON    bool
}

// NewCmdVerify audits artifacts.
func NewCmdVerify(f *Factory, runF func(*VerifyOptions) error) *cobra.Command {
	opts := &VerifyOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "verify PATH...",
		Short: "Audit an output folder, bundles, wheels, sidecars or SHA256SUMS",
		Long: `Verify checks what it is given without installing anything:
  a folder      SHA256SUMS (no file missing or unlisted), every sidecar, every wheel and
                bundle, the SBOM against the files it describes, manifest.json digests
  FILE.whl      file name, WHEEL, METADATA, every RECORD hash and size, member paths
  FILE.tar.gz   sidecar, safe extraction, layout, SHA256SUMS, every wheel, requirements.txt
  FILE.sha256   the sidecar against the file beside it
  SHA256SUMS    every listed file of its folder
It prints one line per check and exits 1 when any check fails, naming the file or member.`,
		Example: `  mkrelease verify dist
  mkrelease verify vexl-0.3.0-linux-x86_64.tar.gz --json
  mkrelease verify dist/vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl`,
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
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func verifyRun(ctx context.Context, o *VerifyOptions) error {
	rep, err := audit.Paths(ctx, o.Paths)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := writeJSON(o.Factory.IO.Out, rep); err != nil {
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
						fmt.Fprintf(w, "FAIL  %s: %s: %s: %s\n", it.Path, c.Name, fd.File, fd.Message())
					} else {
						fmt.Fprintf(w, "FAIL  %s: %s: %s\n", it.Path, c.Name, fd.Message())
					}
				}
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
