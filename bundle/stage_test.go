package bundle

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// manifest.json lists a target's dependency wheels from its closure: the
// closure's packages (not the release's own wheels), by file name, with
// an http(s) download URL alone.
func TestClosuresDependencies(t *testing.T) {
	cs := Closures{
		"linux-x86_64": &deps.Closure{
			Own: []deps.Resolved{{Name: "demo", Version: "1.0", Own: true, Files: []deps.File{{Name: "demo-1.0-py3-none-any.whl", SHA256: "aa", Size: 1}}}},
			Packages: []deps.Resolved{
				{Name: "attrs", Version: "23.1.0", Files: []deps.File{{Name: "attrs-23.1.0-py3-none-any.whl", SHA256: "bb", Size: 2, URL: "https://files.example/attrs-23.1.0-py3-none-any.whl"}}},
				{Name: "local", Version: "2.0", Files: []deps.File{
					{Name: "local-2.0-cp311-cp311-linux_x86_64.whl", SHA256: "cc", Size: 3, URL: "file:///wheels/local-2.0-cp311-cp311-linux_x86_64.whl"},
					{Name: "local-2.0-cp312-cp312-linux_x86_64.whl", SHA256: "dd", Size: 4}}},
			},
		},
		"linux-aarch64": &deps.Closure{Own: []deps.Resolved{{Name: "demo", Version: "1.0", Own: true}}},
	}
	for _, tc := range []struct {
		target string
		want   []dist.ManifestArtifact
	}{
		{"linux-x86_64", []dist.ManifestArtifact{
			{Path: "attrs-23.1.0-py3-none-any.whl", Name: "attrs==23.1.0", Size: 2, SHA256: "bb", URL: "https://files.example/attrs-23.1.0-py3-none-any.whl"},
			{Path: "local-2.0-cp311-cp311-linux_x86_64.whl", Name: "local==2.0", Size: 3, SHA256: "cc"},
			{Path: "local-2.0-cp312-cp312-linux_x86_64.whl", Name: "local==2.0", Size: 4, SHA256: "dd"},
		}},
		{"linux-aarch64", nil},  // no dependencies
		{"windows-x86_64", nil}, // no closure (no wheels)
	} {
		t.Run(tc.target, func(t *testing.T) {
			if got := cs.Dependencies(tc.target); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Dependencies(%s) = %+v, want %+v", tc.target, got, tc.want)
			}
		})
	}
}

// The changelog that becomes RELEASE_NOTES.md and the dependency lock that
// pins the closure are read beneath the project: a symbolic link out of it
// is refused, naming the link; a regular file is read.
func TestProjectFilesBeneathTheProject(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	const changelog = "## 1.0\n\nFirst.\n"
	const reqs = "attrs==23.1.0 --hash=sha256:" + "1111111111111111111111111111111111111111111111111111111111111111" + "\n"
	for _, tc := range []struct {
		name string
		link bool
	}{{"regular files", false}, {"linked outside", true}} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "project")
			os.MkdirAll(dir, 0o755)
			os.MkdirAll(filepath.Join(top, "outside"), 0o755)
			for name, body := range map[string]string{"CHANGELOG.md": changelog, "requirements.txt": reqs} {
				at := filepath.Join(dir, name)
				if tc.link {
					at = filepath.Join(top, "outside", name)
					if err := os.Symlink("../outside/"+name, filepath.Join(dir, name)); err != nil {
						t.Fatal(err)
					}
				}
				os.WriteFile(at, []byte(body), 0o644)
			}
			c := &config.Config{Dir: dir, Project: config.Project{Version: "1.0"},
				Bundle: config.Bundle{Changelog: "CHANGELOG.md"}, Dependencies: config.Dependencies{Lock: "requirements.txt"}}
			text, nerr := notes(c)
			lock, lerr := DependencyLock(c)
			if !tc.link {
				if nerr != nil || !strings.Contains(text, "First.") {
					t.Errorf("notes = %q, %v", text, nerr)
				}
				if lerr != nil || len(lock.Packages) != 1 {
					t.Errorf("DependencyLock = %+v, %v", lock, lerr)
				}
				return
			}
			if nerr == nil || !strings.Contains(nerr.Error(), "bundle.changelog: CHANGELOG.md is a symbolic link to ../outside/CHANGELOG.md, outside the project") {
				t.Errorf("notes = %q, %v; want the link refused", text, nerr)
			}
			if lerr == nil || !strings.Contains(lerr.Error(), "requirements.txt is a symbolic link to ../outside/requirements.txt, outside the project") {
				t.Errorf("DependencyLock = %v; want the link refused", lerr)
			}
		})
	}
}
