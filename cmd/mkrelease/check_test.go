package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
)

// checkFindingKinds are the kinds of a check finding, in docs/json.md's
// order.
var checkFindingKinds = []string{findingConfig, findingLock, findingDrift, findingStale, findingError}

// findings gives each error of check its kind.
func TestCheckFindings(t *testing.T) {
	cfgErr := &config.Error{File: "release.toml", Pos: config.Position{Line: 4, Column: 1}, Key: "project.sumary", Msg: "unknown key"}
	for _, tc := range []struct {
		name string
		err  error
		want []string // the kinds, in order
	}{
		{"config error", cfgErr, []string{findingConfig}},
		{"config errors", config.ErrorList{cfgErr, cfgErr}, []string{findingConfig, findingConfig}},
		{"lock", &lock.Error{File: "release.lock", Msg: "no lock file"}, []string{findingLock}},
		{"drift", &lock.DriftError{LockFile: "release.lock", Relock: "mkrelease lock", Drifts: []lock.Drift{
			{Entry: "source up", File: "src/a", What: "the pinned tree changed"},
			{Entry: "toolchain cc [t1]", What: "another compiler"},
		}}, []string{findingDrift, findingDrift}},
		{"stale", &build.StaleError{Problems: []string{"source app: HEAD ...", "source app: uncommitted ..."}}, []string{findingStale, findingStale}},
		{"other", errors.New("prepare: no space left"), []string{findingError}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range findings(tc.err) {
				got = append(got, f.Kind)
				if !slices.Contains(checkFindingKinds, f.Kind) {
					t.Errorf("kind %q is not one of %q", f.Kind, checkFindingKinds)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("kinds %q, want %q", got, tc.want)
			}
		})
	}
}

// docs/json.md lists exactly the kinds check gives a finding.
func TestCheckFindingKindsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start := strings.Index(doc, "\n## check\n")
	if start < 0 {
		t.Fatal("docs/json.md has no ## check section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	m := regexp.MustCompile("`kind` \\(([^)]*)\\)").FindStringSubmatch(strings.ReplaceAll(section, "\n", " "))
	if m == nil {
		t.Fatal("docs/json.md, ## check: no \"`kind` (...)\" listing the finding kinds")
	}
	var got []string
	for _, k := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(m[1], -1) {
		got = append(got, k[1])
	}
	if !slices.Equal(got, checkFindingKinds) {
		t.Errorf("docs/json.md, ## check lists the kinds %q; check gives %q", got, checkFindingKinds)
	}
}
