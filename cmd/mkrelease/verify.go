package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/wheel"
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
		Short: "Audit wheels (or every wheel of a folder): names, metadata, RECORD, member paths",
		Long: `Verify checks each wheel named, or every wheel in each folder named, without
installing anything: the file name against WHEEL and METADATA, every RECORD hash and
size, no unlisted or missing member, no unsafe or duplicate member path. It prints one
line per check and exits 1 when any check fails, naming the member.`,
		Example: `  mkrelease verify dist/vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl
  mkrelease verify dist --json`,
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
			return verifyRun(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

type verifyCheck struct {
	Check    string          `json:"check"`
	OK       bool            `json:"ok"`
	Findings []verifyFinding `json:"findings,omitempty"`
}

type verifyFinding struct {
	Member  string `json:"member,omitempty"`
	Message string `json:"message"`
}

type verifyFile struct {
	File   string        `json:"file"`
	Kind   string        `json:"kind"`
	OK     bool          `json:"ok"`
	Checks []verifyCheck `json:"checks"`
}

type verifyReport struct {
	OK    bool         `json:"ok"`
	Files []verifyFile `json:"files"`
}

// verifyTargets expands the paths: a file as itself, a folder as the
// wheels in it.
func verifyTargets(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, usageErrorf("%s: no such file or folder", p)
			}
			return nil, err
		}
		if !st.IsDir() {
			if !strings.HasSuffix(p, ".whl") {
				return nil, usageErrorf("%s: verify reads wheels (.whl) and folders of wheels so far", p)
			}
			out = append(out, p)
			continue
		}
		wheels, err := filepath.Glob(filepath.Join(p, "*.whl"))
		if err != nil {
			return nil, err
		}
		if len(wheels) == 0 {
			return nil, usageErrorf("%s: no wheel in this folder", p)
		}
		sort.Strings(wheels)
		out = append(out, wheels...)
	}
	return out, nil
}

func verifyRun(o *VerifyOptions) error {
	files, err := verifyTargets(o.Paths)
	if err != nil {
		return err
	}
	rep := verifyReport{OK: true}
	for _, f := range files {
		vf := verifyWheel(f)
		rep.OK = rep.OK && vf.OK
		rep.Files = append(rep.Files, vf)
	}
	if o.JSON {
		if err := writeJSON(o.Factory.IO.Out, rep); err != nil {
			return err
		}
	} else {
		w := o.Factory.IO.Out
		failed := 0
		for _, vf := range rep.Files {
			for _, c := range vf.Checks {
				if c.OK {
					fmt.Fprintf(w, "ok    %s: %s\n", vf.File, c.Check)
					continue
				}
				failed++
				for _, fd := range c.Findings {
					if fd.Member != "" {
						fmt.Fprintf(w, "FAIL  %s: %s: %s: %s\n", vf.File, c.Check, fd.Member, fd.Message)
					} else {
						fmt.Fprintf(w, "FAIL  %s: %s: %s\n", vf.File, c.Check, fd.Message)
					}
				}
			}
		}
		if rep.OK {
			fmt.Fprintf(w, "verified %d file%s: every check holds\n", len(rep.Files), plural(len(rep.Files)))
		} else {
			fmt.Fprintf(w, "verification failed: %d check%s failed\n", failed, plural(failed))
		}
	}
	if !rep.OK {
		return &silentError{code: 1}
	}
	return nil
}

func verifyWheel(path string) verifyFile {
	vf := verifyFile{File: path, Kind: "wheel", OK: true}
	r, err := wheel.Check(path)
	if err != nil {
		vf.OK = false
		vf.Checks = []verifyCheck{{Check: "readable", Findings: []verifyFinding{{Message: err.Error()}}}}
		return vf
	}
	byCheck := map[string][]verifyFinding{}
	for _, f := range r.Findings {
		byCheck[f.Check] = append(byCheck[f.Check], verifyFinding{Member: f.Member, Message: f.Msg})
	}
	seen := map[string]bool{}
	for _, c := range r.Checks {
		seen[c] = true
		vf.Checks = append(vf.Checks, verifyCheck{Check: c, OK: len(byCheck[c]) == 0, Findings: byCheck[c]})
	}
	// A finding whose check did not "run" (it stopped the check) still shows.
	for _, f := range r.Findings {
		if !seen[f.Check] {
			seen[f.Check] = true
			vf.Checks = append(vf.Checks, verifyCheck{Check: f.Check, Findings: byCheck[f.Check]})
		}
	}
	vf.OK = len(r.Findings) == 0
	return vf
}
