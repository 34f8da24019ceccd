package e2e

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Pythons lists CPython interpreters >= 3.8, found on PATH and under
// /root/.pyenv/versions (pyenv's shims only answer for the global
// version), one per minor version, oldest first.
func Pythons(t *testing.T) []string {
	t.Helper()
	byMinor := map[int]string{}
	var candidates []string
	for _, n := range []string{"python3", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13"} {
		if p, err := exec.LookPath(n); err == nil {
			candidates = append(candidates, p)
		}
	}
	more, _ := filepath.Glob("/root/.pyenv/versions/3.*/bin/python3.*")
	candidates = append(candidates, more...)
	for _, p := range candidates {
		if strings.HasSuffix(p, "-config") {
			continue
		}
		out, err := exec.Command(p, "-c", "import sys; print(sys.version_info[1])").Output()
		if err != nil {
			continue
		}
		minor, err := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil || minor < 8 {
			continue
		}
		if _, ok := byMinor[minor]; !ok {
			byMinor[minor] = p
		}
	}
	var minors []int
	for m := range byMinor {
		minors = append(minors, m)
	}
	sort.Ints(minors)
	var out []string
	for _, m := range minors {
		out = append(out, byMinor[m])
	}
	return out
}
