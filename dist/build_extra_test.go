package dist

import "testing"

func TestArchiveOfIsTheInverseOfArchiveRoot(t *testing.T) {
	for _, root := range []string{"demo-1.0-linux", "demo-1.0-verifier-evidence-linux"} {
		name := ArchiveOf(root)
		if got, ok := ArchiveRoot(name); !ok || got != root {
			t.Errorf("ArchiveRoot(ArchiveOf(%q)) = %q, %v; want %q, true", root, got, ok, root)
		}
	}
	n := NamesOf("demo", "1.0")
	if got, want := ArchiveOf(n.BundleRoot("linux")), n.Bundle("linux"); got != want {
		t.Errorf("ArchiveOf(BundleRoot) = %q, want Bundle's %q", got, want)
	}
}
