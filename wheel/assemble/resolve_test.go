package assemble

import (
	"reflect"
	"testing"
)

// An include from a source lists the files of its hashed tree, not of the
// folder as it is now (a local source is read in place).
func TestTreeFiles(t *testing.T) {
	tree := map[string]string{"pkg/__init__.py": "1", "pkg/sub/lib.so": "2", "pkg2/x.py": "3", "pkgx.py": "4", "README": "5"}
	for _, tt := range []struct {
		from string
		want []string
	}{
		{"pkg", []string{"__init__.py", "sub/lib.so"}},
		{"pkg/", []string{"__init__.py", "sub/lib.so"}},
		{"pkg/sub", []string{"lib.so"}},
		{".", []string{"README", "pkg/__init__.py", "pkg/sub/lib.so", "pkg2/x.py", "pkgx.py"}},
		{"", []string{"README", "pkg/__init__.py", "pkg/sub/lib.so", "pkg2/x.py", "pkgx.py"}},
		{"absent", nil},
	} {
		if got := treeFiles(tree, tt.from); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("treeFiles(%q) = %v, want %v", tt.from, got, tt.want)
		}
	}
}
