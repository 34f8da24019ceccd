//go:build !unix && !windows

package channel

import (
	"errors"
	"os"
)

// tryLock cannot lock a file on this platform, and says so: publishing
// without the lock could interleave two publishes.
func tryLock(f *os.File) (bool, error) {
	return false, errors.New("file locks are not supported on this platform: a publish cannot exclude another")
}
