package build

import (
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
)

func TestConfigDrift(t *testing.T) {
	cfg := func() *config.Config {
		return &config.Config{
			Sources:    []config.Source{{Name: "a", Local: "src"}},
			Overlays:   []config.Overlay{{Name: "o1", Source: "a", Patch: "1.patch"}, {Name: "o2", Source: "a", Patch: "2.patch"}},
			Toolchains: []config.Toolchain{{Name: "cc", Command: []string{"cc"}, PerTarget: true}},
			Targets:    []config.Target{{Name: "t1"}, {Name: "t2"}},
		}
	}
	locked := &lock.Lock{
		Sources:    []lock.Source{{Name: "a", Kind: "local", Location: "src"}},
		Overlays:   []lock.Overlay{{Name: "o1", Source: "a", Kind: "patch", Path: "1.patch"}, {Name: "o2", Source: "a", Kind: "patch", Path: "2.patch"}},
		Toolchains: []lock.Toolchain{{Name: "cc", Target: "t1"}, {Name: "cc", Target: "t2"}},
	}
	cases := []struct {
		name   string
		change func(*config.Config)
		want   string // substring of the single drift; "" for none
	}{
		{"unchanged", func(*config.Config) {}, ""},
		{"source moved", func(c *config.Config) { c.Sources[0].Local = "elsewhere" }, "source a: release.toml points elsewhere"},
		{"source kind", func(c *config.Config) { c.Sources[0] = config.Source{Name: "a", Git: "u", Commit: "c"} }, "points elsewhere"},
		{"source added", func(c *config.Config) { c.Sources = append(c.Sources, config.Source{Name: "b", Local: "b"}) }, "source b: not in the lock"},
		{"source removed", func(c *config.Config) { c.Sources = nil }, "source a: locked but no longer"},
		{"overlays reordered", func(c *config.Config) { c.Overlays[0], c.Overlays[1] = c.Overlays[1], c.Overlays[0] }, "order of the overlays changed"},
		{"overlay path", func(c *config.Config) { c.Overlays[1].Patch = "3.patch" }, "overlay o2: release.toml declares it differently"},
		{"overlay removed", func(c *config.Config) { c.Overlays = c.Overlays[:1] }, "overlay o2: locked but no longer"},
		{"target added", func(c *config.Config) { c.Targets = append(c.Targets, config.Target{Name: "t3"}) }, "toolchain cc [t3]: not in the lock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg()
			tc.change(c)
			d := configDrift(c, locked)
			switch {
			case tc.want == "" && len(d) != 0:
				t.Errorf("configDrift = %v, want none", d)
			case tc.want != "" && len(d) != 1:
				t.Errorf("configDrift = %v, want one drift %q", d, tc.want)
			case tc.want != "" && !strings.Contains(d[0].Entry+": "+d[0].What, tc.want):
				t.Errorf("configDrift = %q, want %q", d[0].Entry+": "+d[0].What, tc.want)
			}
		})
	}
}
