// Package testpart tells a test which part of mkrelease's test suite is
// running. The default part (scripts/test) runs every unit, package and
// testscript test, and the end-to-end tests on one cold build of the
// embedded default with a short throughput lane: it is what a contributor
// runs before every change. The whole suite (scripts/test -full, what CI
// runs) adds the work that only repeats what the default part shows on
// more data: the second user's cold build and the comparison of the two,
// the full throughput lane, reproduce on that build, cross-compilation for
// every pair, and the clients that take long to install (cosign).
//
// scripts/test -full sets MKRELEASE_TEST_FULL=1; docs/testing.md lists
// what each part runs and what it costs.
package testpart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Env is the variable that selects the whole suite when it is "1".
const Env = "MKRELEASE_TEST_FULL"

// Full reports whether the whole suite runs (scripts/test -full).
func Full() bool { return os.Getenv(Env) == "1" }

// RequireFull skips t, saying what it does, unless the whole suite runs.
func RequireFull(t testing.TB, what string) {
	t.Helper()
	if !Full() {
		t.Skipf("%s: part of the whole suite (scripts/test -full, or %s=1)", what, Env)
	}
}

// Missing stops t because the program it needs, name, is not installed:
// the default part skips t, naming the program and how to install it; the
// whole suite fails t, since CI prepares every program the whole suite
// needs, so a missing one there is a broken machine, not a reason to pass.
func Missing(t testing.TB, name, install string) {
	t.Helper()
	if Full() {
		t.Fatalf("%s is not installed, and the whole suite (%s=1) needs it: %s", name, Env, install)
	}
	t.Skipf("%s is not installed: this check runs in the whole suite (scripts/test -full), which needs it: %s", name, install)
}

// CosignInstall is the command that installs the cosign the tests check
// mkrelease's provenance with (.ci/run runs it).
const CosignInstall = "go install github.com/sigstore/cosign/v2/cmd/cosign@v2.6.5"

// Cosign returns the path of cosign, on PATH or in $(go env GOPATH)/bin.
// Missing, it skips t in the default part and fails it in the whole suite
// (see [Missing]).
func Cosign(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("cosign"); err == nil {
		return p
	}
	var dirs []string
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		dirs = filepath.SplitList(strings.TrimSpace(string(out)))
	} else if home, err := os.UserHomeDir(); err == nil {
		dirs = []string{filepath.Join(home, "go")}
	}
	for _, dir := range dirs {
		p := filepath.Join(dir, "bin", "cosign")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	Missing(t, "cosign", CosignInstall)
	return ""
}
