package e2e

import (
	"context"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pyfind"
)

// Pythons lists CPython interpreters found as mkrelease finds them (PATH,
// pyenv, uv), one per minor version, oldest first.
func Pythons(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, in := range pyfind.Find(context.Background(), pyfind.Options{}) {
		if in.Minor >= 8 {
			out = append(out, in.Path)
		}
	}
	return out
}
