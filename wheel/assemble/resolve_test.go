package assemble

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
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

// An include from a source takes only files of the source's hashed tree:
// a file the tree leaves out (in __pycache__ or .git, which may hold
// anything, a symbolic link out of the project included) is not part of
// the source and is refused; a file of the tree carries its digest, so the
// wheel writer checks it as it packs it.
func TestResolveSourceFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	top := t.TempDir()
	ws := filepath.Join(top, "project", "lib")
	for name, body := range map[string]string{"pkg/__init__.py": "x = 1\n", "LICENSE": "MIT\n", "../../outside/secret": "outside\n"} {
		p := filepath.Join(ws, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(ws, "__pycache__"), 0o755)
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	for _, l := range []string{"__pycache__/LICENSE", ".git/LICENSE", "pkg/__pycache__"} {
		if err := os.Symlink(filepath.Join(top, "outside", "secret"), filepath.Join(ws, filepath.FromSlash(l))); err != nil {
			t.Fatal(err)
		}
	}
	tree := map[string]string{"pkg/__init__.py": checksum.Bytes([]byte("x = 1\n")), "LICENSE": checksum.Bytes([]byte("MIT\n"))}
	c := &config.Config{Sources: []config.Source{{Name: "lib", Local: "lib"}}}
	r := &release.Release{Config: c, Trees: map[string]map[string]string{"lib": tree}}
	s := Stage{Workspaces: map[string]string{"lib": ws}}
	for _, tc := range []struct {
		from string
		want []wheel.Member // Path and SHA256; nil for a refusal
	}{
		{"LICENSE", []wheel.Member{{Path: "LICENSE", SHA256: tree["LICENSE"]}}},
		{"pkg", []wheel.Member{{Path: "pkg/__init__.py", SHA256: tree["pkg/__init__.py"]}}},
		{"__pycache__/LICENSE", nil},
		{".git/LICENSE", nil},
		{"pkg/__pycache__", nil},
		{"__pycache__", nil},
	} {
		t.Run(tc.from, func(t *testing.T) {
			to := ""
			if tc.from == "pkg" {
				to = "pkg"
			}
			got, err := s.resolve(r, config.Target{Name: "t1"}, config.Wheel{Name: "demo"}, config.Include{Source: "lib", From: tc.from, To: to})
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), "source lib has no "+tc.from) {
					t.Fatalf("resolve(%s) = %v, %v; want a refusal", tc.from, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("resolve(%s): %v", tc.from, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("resolve(%s) = %v, want %v", tc.from, got, tc.want)
			}
			for i := range got {
				if got[i].Path != tc.want[i].Path || got[i].SHA256 != tc.want[i].SHA256 {
					t.Errorf("member %d = %s (sha256 %q), want %s (sha256 %q)", i, got[i].Path, got[i].SHA256, tc.want[i].Path, tc.want[i].SHA256)
				}
			}
		})
	}
}
