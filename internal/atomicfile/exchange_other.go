//go:build !linux && !darwin

package atomicfile

import (
	"errors"
	"fmt"
	"runtime"
)

// exchange cannot swap two folders atomically here (Windows has no such
// call, and its rename refuses an existing folder as the target): it
// always fails, and ReplaceDir moves the old folder aside instead.
func exchange(a, b string) error {
	return fmt.Errorf("exchange %s and %s: no atomic exchange on %s: %w", a, b, runtime.GOOS, errors.ErrUnsupported)
}
