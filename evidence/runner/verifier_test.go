package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
)

// The verifier folder a run copies is read beneath the project: a folder
// that is a symbolic link out of it, or reached through one, is refused
// naming the link, and nothing of what it points to is copied; a real
// folder, or one linked inside the project, is copied.
func TestPrepareVerifierBeneathTheProject(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct {
		name, verifier string
		links          map[string]string
		want           string // the refusal; "" for copied
	}{
		{"real folder", "verifier", nil, ""},
		{"linked inside", "v", map[string]string{"v": "verifier"}, ""},
		{"linked outside", "v", map[string]string{"v": "../outside"}, "v is a symbolic link to ../outside, outside the project"},
		{"through a folder linked outside", "tools/verifier", map[string]string{"tools": "../outside"},
			"tools/verifier: tools is a symbolic link to ../outside, outside the project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := t.TempDir()
			dir := filepath.Join(top, "project")
			for name, body := range map[string]string{"project/verifier/cases.py": "inside\n", "outside/cases.py": "outside\n", "outside/verifier/cases.py": "outside\n"} {
				p := filepath.Join(top, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(body), 0o644)
			}
			for link, target := range tc.links {
				if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
					t.Skip("symbolic links:", err)
				}
			}
			r := &evidenceRun{log: slog.New(slog.DiscardHandler),
				o: RunOptions{Config: &config.Config{Dir: dir, File: "release.toml", Evidence: config.Evidence{Verifier: tc.verifier}}}}
			defer r.close()
			err := r.prepare(context.Background())
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("prepare = %v, want a refusal saying %q", err, tc.want)
				}
				if _, serr := os.Stat(filepath.Join(r.verifier, "cases.py")); serr == nil {
					t.Error("the outside folder was copied")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(r.verifier, "cases.py")); string(b) != "inside\n" {
				t.Errorf("copied cases.py = %q", b)
			}
		})
	}
}
