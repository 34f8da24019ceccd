//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"runtime"
	"syscall"
)

// Probe finds no sandbox: bubblewrap runs on Linux alone.
func Probe(ctx context.Context, path string) (Bwrap, error) {
	return Bwrap{}, errors.New("there is no bubblewrap sandbox on " + runtime.GOOS + ": it needs Linux's namespaces")
}

// Attr is nil: no Bwrap is ever found here.
func (b Bwrap) Attr() *syscall.SysProcAttr { return nil }
