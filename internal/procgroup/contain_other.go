//go:build !linux

package procgroup

import (
	"context"
	"os/exec"
	"runtime"
)

// ProbeContainment finds that commands cannot be confined here: only
// Linux has PID namespaces.
func ProbeContainment(ctx context.Context) Containment {
	return Containment{Caveat: "a process the command starts that leaves its process group or process tree outlives the command when it is stopped: " + runtime.GOOS + " has no PID namespaces"}
}

// contain is never called: PIDNamespace is never set here.
func contain(cmd *exec.Cmd, ownProc bool) {}
