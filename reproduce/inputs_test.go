package reproduce

import (
	"errors"
	"testing"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
)

// TestCheckInputsPyProject checks that a release whose metadata comes from
// a pyproject.toml is reproduced only from that pyproject.toml, as it is
// from its release.toml and release.lock.
func TestCheckInputsPyProject(t *testing.T) {
	const toml, lck, py, other = "aa", "bb", "cc", "dd"
	in := &Inputs{ReleaseTOML: toml, ReleaseLock: lck, From: "demo.intoto.jsonl",
		Files: map[string]string{"py/pyproject.toml": py, "README.md": other}}
	l := &lock.Lock{SHA256: lck}
	for _, tc := range []struct {
		name  string
		local string // the local pyproject.toml's digest
		file  string // the file refused, "" when accepted
	}{
		{"the recorded pyproject.toml", py, ""},
		{"another pyproject.toml", other, "py/pyproject.toml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{File: "release.toml", SHA256: toml, MetadataFiles: []config.FileDigest{{Path: "py/pyproject.toml", SHA256: tc.local}}}
			err := CheckInputs(in, cfg, l)
			var ie *InputError
			switch {
			case tc.file == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.file != "" && (!errors.As(err, &ie) || ie.File != tc.file || ie.Recorded != py || ie.Local != tc.local):
				t.Fatalf("got %v, want an InputError for %s", err, tc.file)
			}
		})
	}
}
