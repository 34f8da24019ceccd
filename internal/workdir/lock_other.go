//go:build !unix

package workdir

import (
	"errors"
	"os"
)

// lock cannot lock a folder here: Create's folders are not locked, and
// Sweep, finding every lock refused, removes nothing.
func lock(f *os.File, wait bool) error {
	if wait {
		return nil
	}
	return errors.New("folder locks are not supported on this system")
}
