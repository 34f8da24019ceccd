package audit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/wheel"
)

// writeWheel writes a minimal wheel named file with METADATA md into dir
// and returns its base name.
func writeWheel(t *testing.T, dir, file, md string) string {
	t.Helper()
	fn, err := wheel.ParseFilename(file)
	if err != nil {
		t.Fatal(err)
	}
	purelib := "false"
	if fn.Platform == "any" {
		purelib = "true"
	}
	whl := "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: " + purelib + "\nTag: " + fn.Python + "-" + fn.ABI + "-" + fn.Platform + "\n"
	res, err := wheel.Write(context.Background(), &wheel.Contents{Name: fn, Epoch: 1793491200, DistInfo: []wheel.Member{
		{Path: "METADATA", Data: []byte(md), Mode: 0o644},
		{Path: "WHEEL", Data: []byte(whl), Mode: 0o644},
	}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(res.Path)
}

// A folder's pairs: a plugin's exact pin finds the compiler at that
// version with its own tags, or either half is py3-none-any.
func TestPairFindings(t *testing.T) {
	const (
		plugin   = "Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\nRequires-Dist: vexl-compiler==0.3.0\n"
		compiler = "Metadata-Version: 2.4\nName: vexl-compiler\nVersion: 0.3.0\n"
		x86      = "py3-none-manylinux_2_17_x86_64"
		arm      = "py3-none-manylinux_2_17_aarch64"
	)
	for _, tc := range []struct {
		name              string
		pluginTags        []string
		compilerTags      []string
		compilerVersion   string
		wantFindingSubstr string
	}{
		{"native+native", []string{x86, arm}, []string{x86, arm}, "0.3.0", ""},
		{"pure plugin, native compilers", []string{"py3-none-any"}, []string{x86, arm}, "0.3.0", ""},
		{"pure+pure", []string{"py3-none-any"}, []string{"py3-none-any"}, "0.3.0", ""},
		{"native plugin, pure compiler", []string{x86}, []string{"py3-none-any"}, "0.3.0", ""},
		{"native, other platform", []string{x86}, []string{arm}, "0.3.0", "no vexl-compiler 0.3.0 wheel with the tags py3-none-manylinux_2_17_x86_64"},
		{"version mismatch", []string{"py3-none-any"}, []string{x86}, "0.3.1", "no vexl-compiler 0.3.0 wheel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for _, tag := range tc.pluginTags {
				files = append(files, writeWheel(t, dir, "vexl_plugin-0.3.0-"+tag+".whl", plugin))
			}
			for _, tag := range tc.compilerTags {
				md := strings.Replace(compiler, "0.3.0", tc.compilerVersion, 1)
				files = append(files, writeWheel(t, dir, "vexl_compiler-"+tc.compilerVersion+"-"+tag+".whl", md))
			}
			got := pairFindings(dir, files)
			switch {
			case tc.wantFindingSubstr == "" && len(got) > 0:
				t.Errorf("findings: %v", got)
			case tc.wantFindingSubstr != "" && (len(got) == 0 || !strings.Contains(got[0].Msg, tc.wantFindingSubstr)):
				t.Errorf("findings %v, want one saying %q", got, tc.wantFindingSubstr)
			}
		})
	}
}
