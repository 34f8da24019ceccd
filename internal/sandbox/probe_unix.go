//go:build unix

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mkrelease/mkrelease/internal/procgroup"
)

// RunProbe runs a sandbox's trivial probe command, with an empty
// environment, the process attributes the sandbox's commands get (attr,
// nil for none; in a group of its own that dies with mkrelease, as
// theirs) and a 30 s limit; the error carries what the sandbox said.
func RunProbe(ctx context.Context, attr *syscall.SysProcAttr, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = []string{}
	cmd.SysProcAttr = attr
	procgroup.Group(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}
