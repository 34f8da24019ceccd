package runner

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mkrelease/mkrelease/evidence/sanitize"
)

// runPrivate makes the run's folders private under the paths they
// resolve to as well, and the secrets of mkrelease's environment.
func TestRunPrivate(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	work := filepath.Join(link, "mkrelease-evidence-run-1")
	if err := os.MkdirAll(filepath.Join(work, "venvs"), 0o755); err != nil {
		t.Fatal(err)
	}
	const password = "s3cret-release-key-password"
	t.Setenv("MKRELEASE_KEY_PASSWORD", password)
	p := runPrivate(work, filepath.Join(work, "verifier"), nil)
	realWork, err := filepath.EvalSymlinks(work)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{work: "{work}", realWork: "{work}", filepath.Join(work, "venvs"): "{venvs}",
		filepath.Join(realWork, "venvs"): "{venvs}", filepath.Join(work, "verifier"): "{verifier}"} {
		if got := p.Folders[path]; got != want {
			t.Errorf("Folders[%s] = %q, want %q", path, got, want)
		}
	}
	if p.Secrets["MKRELEASE_KEY_PASSWORD"] != password {
		t.Errorf("the key password is not among the secrets")
	}
	// What a lane prints of them is found.
	sc := p.Scanner()
	for _, c := range []struct{ text, kind string }{
		{"cwd " + filepath.Join(realWork, "lanes", "unit", "run") + "\n", sanitize.KindPrivatePath},
		{"pw=" + password + "\n", sanitize.KindEnvSecret},
	} {
		var kinds []string
		for _, f := range scanText(t, sc, c.text) {
			kinds = append(kinds, f.Kind)
		}
		if !slices.Contains(kinds, c.kind) {
			t.Errorf("%q: findings %v, want a %s", c.text, kinds, c.kind)
		}
	}
}

func scanText(t *testing.T, sc *sanitize.Scanner, text string) []sanitize.Finding {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := sc.ScanFile(path, "log.txt")
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestRunPrivateTakesTheTakenPassword: mkrelease takes the key's password
// out of its environment when it starts; the run's private values still
// hold it, through the run's Getenv. Without that Getenv (the control) it
// is not among them.
func TestRunPrivateTakesTheTakenPassword(t *testing.T) {
	const password = "s3cret-taken-password"
	t.Setenv("MKRELEASE_KEY_PASSWORD", "") // restored after the test
	os.Unsetenv("MKRELEASE_KEY_PASSWORD")
	getenv := func(k string) string {
		if k == "MKRELEASE_KEY_PASSWORD" {
			return password
		}
		return os.Getenv(k)
	}
	work := t.TempDir()
	if p := runPrivate(work, filepath.Join(work, "verifier"), getenv); p.Secrets["MKRELEASE_KEY_PASSWORD"] != password {
		t.Errorf("the password Getenv answers for is not among the secrets: %v", p.Secrets)
	}
	if p := runPrivate(work, filepath.Join(work, "verifier"), nil); p.Secrets["MKRELEASE_KEY_PASSWORD"] != "" {
		t.Errorf("control: without Getenv the password is among the secrets")
	}
}
