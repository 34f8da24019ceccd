package e2e

import (
	"context"
	"sync"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pyfind"
)

// machinePythons are the CPython interpreters found as mkrelease finds them
// (PATH, pyenv, uv), one per minor version, oldest first: looked for once
// per test binary (each search runs every version manager's shim on PATH,
// seconds on a machine with pyenv).
var machinePythons = sync.OnceValue(func() []pyfind.Interpreter {
	return pyfind.Find(context.Background(), pyfind.Options{})
})

// Pythons lists the paths of machinePythons from CPython 3.8 on.
func Pythons(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, in := range machinePythons() {
		if in.Minor >= 8 {
			out = append(out, in.Path)
		}
	}
	return out
}
