package assemble

import (
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
)

// TestMetadataClassifiers checks that each wheel says the operating system
// of its platform tag, and that a declared classifier saying another one is
// refused.
func TestMetadataClassifiers(t *testing.T) {
	c := &config.Config{Project: config.Project{Name: "vexl", Version: "0.3.0", MetadataVersion: "2.4"}}
	for _, tc := range []struct {
		name     string
		declared []string
		tag      string
		want     []string // the Classifier fields
		err      string
	}{
		{"linux", []string{"Programming Language :: Python :: 3"}, "manylinux_2_17_x86_64.manylinux2014_x86_64",
			[]string{"Operating System :: POSIX :: Linux", "Programming Language :: Python :: 3"}, ""},
		{"macOS", nil, "macosx_13_0_arm64", []string{"Operating System :: MacOS"}, ""},
		{"windows, declared already", []string{"Operating System :: Microsoft :: Windows"}, "win_amd64",
			[]string{"Operating System :: Microsoft :: Windows"}, ""},
		{"pure Python", []string{"Operating System :: OS Independent"}, "any", []string{"Operating System :: OS Independent"}, ""},
		{"another OS declared", []string{"Operating System :: POSIX :: Linux"}, "macosx_13_0_arm64", nil,
			`classifier "Operating System :: POSIX :: Linux" says another operating system than the platform tag macosx_13_0_arm64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Metadata(c, config.Wheel{Name: "vexl-plugin", Classifiers: tc.declared}, tc.tag, nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Metadata = %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range m.Fields {
				if f[0] == "Classifier" {
					got = append(got, f[1])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("classifiers = %v, want %v", got, tc.want)
			}
		})
	}
}
