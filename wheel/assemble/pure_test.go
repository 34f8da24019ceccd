package assemble

import (
	"reflect"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
)

// A wheel is pure (py3-none-any, one file for the release) when it is
// declared for every target with the same includes and no target's build
// puts a native binary in it.
func TestPureWheels(t *testing.T) {
	targets := []config.Target{{Name: "linux-x86_64"}, {Name: "linux-aarch64"}}
	plan := func(name string, binaries ...string) *planned {
		return &planned{cfg: config.Wheel{Name: name}, binaries: binaries}
	}
	for _, tc := range []struct {
		name   string
		wheels []config.Wheel
		plans  [][]*planned
		want   map[string]bool
	}{
		{"native+native",
			[]config.Wheel{{Name: "c"}, {Name: "p"}},
			[][]*planned{{plan("c", "c/lib.so"), plan("p", "p/ext.so")}, {plan("c", "c/lib.so"), plan("p", "p/ext.so")}},
			map[string]bool{"c": false, "p": false}},
		{"pure+native",
			[]config.Wheel{{Name: "c"}, {Name: "p"}},
			[][]*planned{{plan("c", "c/lib.so"), plan("p")}, {plan("c", "c/lib.so"), plan("p")}},
			map[string]bool{"c": false, "p": true}},
		{"pure+pure",
			[]config.Wheel{{Name: "c"}, {Name: "p"}},
			[][]*planned{{plan("c"), plan("p")}, {plan("c"), plan("p")}},
			map[string]bool{"c": true, "p": true}},
		{"native for one target only",
			[]config.Wheel{{Name: "p"}},
			[][]*planned{{plan("p")}, {plan("p", "p/ext.dll")}},
			map[string]bool{"p": false}},
		{"declared for some targets",
			[]config.Wheel{{Name: "p", Targets: []string{"linux-x86_64"}}},
			[][]*planned{{plan("p")}, nil},
			map[string]bool{"p": false}},
		{"an include limited to some targets",
			[]config.Wheel{{Name: "p", Include: []config.Include{{Source: "py", From: "p"}, {Source: "py", From: "x86.txt", Targets: []string{"linux-x86_64"}}}}},
			[][]*planned{{plan("p")}, {plan("p")}},
			map[string]bool{"p": false}},
		{"one target of two built (--target): pure by what was built",
			[]config.Wheel{{Name: "p"}},
			[][]*planned{{plan("p")}},
			map[string]bool{"p": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &config.Config{Targets: targets, Wheels: tc.wheels}
			if got := pureWheels(c, tc.plans); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
