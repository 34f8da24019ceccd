package assemble

import (
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/wheel"
)

func report(t *testing.T, file, metadata string) *wheel.Report {
	t.Helper()
	fn, err := wheel.ParseFilename(file)
	if err != nil {
		t.Fatal(err)
	}
	md, err := wheel.ParseMetadata([]byte(metadata))
	if err != nil {
		t.Fatal(err)
	}
	return &wheel.Report{File: file, Name: fn, Metadata: md}
}

// The pair rule: same version and an exact pin; the tags may differ when
// either wheel is pure Python (py3-none-any pairs with a native one).
func TestCheckPair(t *testing.T) {
	const (
		compilerNative = "vexl_compiler-0.3.0-py3-none-manylinux_2_17_x86_64.whl"
		compilerPure   = "vexl_compiler-0.3.0-py3-none-any.whl"
		compilerMD     = "Metadata-Version: 2.4\nName: vexl-compiler\nVersion: 0.3.0\n"
		pinned         = "Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\nRequires-Dist: vexl-compiler==0.3.0\n"
	)
	for _, tc := range []struct {
		name           string
		plugin, pmd    string
		compiler, cmd  string
		wantErrContain string // "" for accepted
	}{
		{"native+native", "vexl_plugin-0.3.0-py3-none-manylinux_2_17_x86_64.whl", pinned, compilerNative, compilerMD, ""},
		{"pure plugin+native compiler", "vexl_plugin-0.3.0-py3-none-any.whl", pinned, compilerNative, compilerMD, ""},
		{"native plugin+pure compiler", "vexl_plugin-0.3.0-py3-none-manylinux_2_17_x86_64.whl", pinned, compilerPure, compilerMD, ""},
		{"pure+pure", "vexl_plugin-0.3.0-py3-none-any.whl", pinned, compilerPure, compilerMD, ""},
		{"native, different platforms", "vexl_plugin-0.3.0-py3-none-manylinux_2_17_aarch64.whl", pinned, compilerNative, compilerMD,
			"platform tags differ (manylinux_2_17_aarch64, manylinux_2_17_x86_64)"},
		{"version mismatch", "vexl_plugin-0.3.1-py3-none-any.whl",
			"Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.1\nRequires-Dist: vexl-compiler==0.3.0\n",
			compilerNative, compilerMD, "versions differ (0.3.1, 0.3.0)"},
		{"loose pin", "vexl_plugin-0.3.0-py3-none-any.whl",
			"Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\nRequires-Dist: vexl-compiler>=0.3.0\n",
			compilerNative, compilerMD, `requires "vexl-compiler>=0.3.0", not exactly vexl-compiler==0.3.0`},
		{"pin under a marker", "vexl_plugin-0.3.0-py3-none-any.whl",
			"Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\nRequires-Dist: vexl-compiler==0.3.0; python_version >= \"3.12\"\n",
			compilerNative, compilerMD, "not exactly vexl-compiler==0.3.0"},
		{"no pin", "vexl_plugin-0.3.0-py3-none-any.whl",
			"Metadata-Version: 2.4\nName: vexl-plugin\nVersion: 0.3.0\nRequires-Dist: numpy\n",
			compilerNative, compilerMD, "does not require vexl-compiler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := checkPair(report(t, tc.plugin, tc.pmd), report(t, tc.compiler, tc.cmd))
			switch {
			case tc.wantErrContain == "" && got != "":
				t.Errorf("refused: %s", got)
			case tc.wantErrContain != "" && !strings.Contains(got, tc.wantErrContain):
				t.Errorf("got %q, want it to say %q", got, tc.wantErrContain)
			}
		})
	}
}
