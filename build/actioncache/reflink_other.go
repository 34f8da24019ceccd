//go:build !linux

package actioncache

import (
	"errors"
	"os"
)

// reflink is not made here: the caller copies.
func reflink(dst, src *os.File) error {
	return errors.ErrUnsupported
}
