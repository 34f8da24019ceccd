package main

import (
	"fmt"
	"slices"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/release"
	"github.com/spf13/cobra"
)

// NewCmdRoot assembles the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	g := &globalOptions{}
	root := &cobra.Command{
		Use:   "mkrelease",
		Short: "Reproducible releases of native backends as Python wheels",
		Long: `mkrelease turns pinned sources plus checksummed overlays into paired wheels,
offline bundles, SBOMs and signed provenance, reproducibly, from one release.toml.

Exit status: 0 success; 1 a check, verification or policy refused (each finding
is printed); 2 bad invocation, configuration or input.`,
		Version:       release.ToolVersion,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageErrorf("%v (see --help)", err)
	})
	root.PersistentFlags().StringVarP(&g.ConfigPath, "config", "c", config.DefaultFile, "release configuration")
	root.PersistentFlags().StringVar(&g.LockPath, "lock", "", "lock file (default: release.lock next to the configuration)")
	root.PersistentFlags().StringVar(&g.CacheDir, "cache-dir", "", "cache folder (default: $MKRELEASE_CACHE, else the user cache folder)")
	root.PersistentFlags().BoolVarP(&g.Verbose, "verbose", "v", false, "log every stage")
	root.AddCommand(
		NewCmdInit(f, g, nil),
		NewCmdCheck(f, g, nil),
		NewCmdLock(f, g, nil),
		NewCmdBuild(f, g, nil),
		NewCmdMerge(f, g, nil),
		NewCmdEvidence(f, g),
		NewCmdVerify(f, g, nil),
		NewCmdPublish(f, g, nil),
		NewCmdRelease(f, g, nil),
		NewCmdInstall(f, nil),
		NewCmdReproduce(f, g, nil),
		NewCmdReport(f, g, nil),
		NewCmdKeygen(f, nil),
		NewCmdDocs(f),
	)
	// Unknown verbs and stray arguments are usage errors.
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageErrorf("unknown command %q (see mkrelease --help)", args[0])
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	return root
}

// noArgs rejects positional arguments with exit status 2.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q%s (see mkrelease %s --help)", cmd.Name(), args[0], jsonValueHint(cmd, args[0]), cmd.Name())
	}
	return nil
}

// jsonValueHint says that a field selection needs "=" when arg follows a
// bare --json and names one of the verb's JSON fields.
func jsonValueHint(cmd *cobra.Command, arg string) string {
	fl := cmd.Flags().Lookup("json")
	if fl == nil || !fl.Changed {
		return ""
	}
	if j, ok := fl.Value.(*jsonFlag); ok && slices.Contains(j.declared, arg) {
		return fmt.Sprintf(" (a --json field selection needs \"=\": --json=%s)", arg)
	}
	return ""
}
