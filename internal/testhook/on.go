//go:build mkrelease_testhooks

package testhook

import (
	"os"
	"strings"
)

// Nondeterministic reports whether MKRELEASE_TEST_NONDETERMINISM (a comma
// list of hook points) names point.
func Nondeterministic(point string) bool {
	for _, p := range strings.Split(os.Getenv("MKRELEASE_TEST_NONDETERMINISM"), ",") {
		if strings.TrimSpace(p) == point {
			return true
		}
	}
	return false
}
