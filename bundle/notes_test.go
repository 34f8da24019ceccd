package bundle

import (
	"errors"
	"strings"
	"testing"
)

const changelog = "# Changelog\n\nIntro.\n\n## [Unreleased]\n- wip\n\n## [0.3.0] - 2026-11-01\n### Added\n- fused path\n```\n## 0.1.0 inside a fence\n```\n\n## v0.2.0 — 2026-09-15\n- f32\n\n## 0.1 (first)\n- first\n"

func TestReleaseNotes(t *testing.T) {
	for _, tc := range []struct{ version, want, notWant string }{
		{"0.3.0", "## [0.3.0] - 2026-11-01\n### Added\n- fused path\n```\n## 0.1.0 inside a fence\n```\n", "f32"},
		{"0.2", "## v0.2.0 — 2026-09-15\n- f32\n", "first"},
		{"0.1.0", "## 0.1 (first)\n- first\n", "wip"},
	} {
		got, err := ReleaseNotes("CHANGELOG.md", []byte(changelog), tc.version)
		if err != nil {
			t.Fatalf("ReleaseNotes(%s): %v", tc.version, err)
		}
		if got != tc.want {
			t.Errorf("ReleaseNotes(%s) = %q, want %q", tc.version, got, tc.want)
		}
	}
	_, err := ReleaseNotes("CHANGELOG.md", []byte(changelog), "0.4.0")
	var ne *NotesError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "CHANGELOG.md: no section for version 0.4.0") || ne.ExitCode() != 1 {
		t.Errorf("missing version: %v", err)
	}
}
