package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mkrelease/mkrelease/internal/procgroup"
)

// Probe finds how bubblewrap (path; empty finds "bwrap" on PATH) makes
// sandboxes here: started in a PID namespace of its own (see
// [Bwrap.Attr]), else as it is, with the caveat that leaves. A host that
// refuses the extra namespace (a limit on nested user namespaces, a
// security module's policy) still gets the sandbox. The error says why
// there is none: bubblewrap is missing, or the kernel refused it the
// namespaces.
func Probe(ctx context.Context, path string) (Bwrap, error) {
	if path == "" {
		path, _ = exec.LookPath("bwrap")
		if path == "" {
			return Bwrap{}, errors.New("bubblewrap (bwrap) is not installed; scripts/bootstrap installs it (Debian: apt-get install bubblewrap)")
		}
	}
	b := Bwrap{Path: path}
	pidnsErr := probeWith(ctx, path, true)
	switch {
	case pidnsErr == nil:
		b.PIDNamespace = true
	default:
		if err := probeWith(ctx, path, false); err != nil {
			return Bwrap{}, fmt.Errorf("bubblewrap (%s) could not create the sandbox's namespaces: %w", path, err)
		}
		b.Caveat = fmt.Sprintf("a sandboxed command may outlive a mkrelease killed while bubblewrap sets up its sandbox: bubblewrap (%s) could not start in a PID namespace of mkrelease's (%v)", path, pidnsErr)
	}
	b.Version = version(path)
	return b, nil
}

// probeWith runs a trivial command in a sandbox with a writable folder
// below a private /tmp, as build steps and lanes have, bubblewrap started
// in a PID namespace of its own when pidns.
func probeWith(ctx context.Context, bwrap string, pidns bool) error {
	dir, err := os.MkdirTemp("", "mkrelease-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	args, err := Args(Spec{Hostname: "mkrelease-probe", Account: "probe", Gecos: "mkrelease sandbox probe", Home: work,
		Etc: filepath.Join(dir, "etc"), Mounts: []Mount{{Host: work, Inside: work, Writable: true}}, Dir: work})
	if err != nil {
		return err
	}
	return RunProbe(ctx, attr(pidns), bwrap, append(args, "/bin/sh", "-c", "exit 0")...)
}

// Attr returns the process attributes bubblewrap starts with (nil for
// none). With [Bwrap.PIDNamespace] bubblewrap is the first process of a
// PID namespace of its own, and [procgroup.Group] or
// [procgroup.KillOnCancel] makes mkrelease's death its own (a
// parent-death signal, set before it runs): when that process ends, the
// kernel ends every process of the namespace and of the sandbox's
// namespace nested in it, whatever bubblewrap was doing. bubblewrap's
// --die-with-parent alone leaves a window: the process bubblewrap clones
// into the sandbox's namespaces binds its life to bubblewrap's only once
// the sandbox is set up, so a mkrelease killed during the set-up left a
// command that ran on unsupervised. What remains is the few system calls
// of Go's fork before the parent-death signal is set.
func (b Bwrap) Attr() *syscall.SysProcAttr {
	return attr(b.PIDNamespace)
}

func attr(pidns bool) *syscall.SysProcAttr {
	if !pidns {
		return nil
	}
	return procgroup.NamespacesAttr(syscall.CLONE_NEWPID)
}

// version asks bubblewrap its version ("bubblewrap 0.8.0").
func version(bwrap string) string {
	out, err := exec.Command(bwrap, "--version").Output()
	if err != nil {
		return "bubblewrap"
	}
	return strings.TrimSpace(string(out))
}
