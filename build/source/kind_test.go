package source

import (
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/pin"
)

// TestMaterializers checks that every kind of source has a materialiser
// and that every kind release.toml can declare is a known kind.
func TestMaterializers(t *testing.T) {
	for _, k := range pin.Kinds() {
		if materializers[k.Name()] == nil {
			t.Errorf("kind %s has no materializer", k.Name())
		}
	}
	if len(materializers) != len(pin.Kinds()) {
		t.Errorf("%d materializers for %d kinds", len(materializers), len(pin.Kinds()))
	}
	for _, s := range []config.Source{{Local: "src"}, {Git: "https://example.org/x.git"}, {Archive: "x.tar.gz"}} {
		if _, ok := pin.Lookup(string(s.Kind())); !ok {
			t.Errorf("config kind %q is not a pin kind", s.Kind())
		}
	}
}
