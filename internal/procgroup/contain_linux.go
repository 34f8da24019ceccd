package procgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The init is this very program, started again (through /proc/self/exe,
// the binary that runs, wherever it lies) with initArg0 as its argv[0],
// which the package's init function recognises: any program that links
// this package, mkrelease and its test binaries alike, can serve. Its
// argv is initArg0, the mode, then the command's path and argv.
const (
	initArg0 = "mkrelease-init"
	self     = "/proc/self/exe"
	// modeOwnProc: mount a /proc of the namespace; modeHostProc: keep
	// the one of the namespace mkrelease runs in.
	modeOwnProc  = "own-proc"
	modeHostProc = "host-proc"
	// initFailed is the init's status when it could not set up or start
	// the command, as env and timeout report it.
	initFailed = 125
)

func init() {
	if len(os.Args) >= 2 && os.Args[0] == initArg0 {
		os.Exit(runInit(os.Args[1], os.Args[2:]))
	}
}

// ProbeContainment finds how commands can be confined here: in a PID
// namespace with a /proc of its own, else in one that sees mkrelease's
// /proc (a /proc mount refused, as in a container whose /proc is partly
// masked), else not at all (the kernel or a policy refuses the
// namespaces); the Caveat says what is lost and why. It starts the init
// once or twice, for a few milliseconds each.
func ProbeContainment(ctx context.Context) Containment {
	ownErr := probeInit(ctx, true)
	if ownErr == nil {
		return Containment{PIDNamespace: true, OwnProc: true}
	}
	hostErr := probeInit(ctx, false)
	if hostErr == nil {
		return Containment{PIDNamespace: true, Caveat: fmt.Sprintf("a confined command sees mkrelease's /proc, in which the pid it has in its namespace (getpid) names another process; /proc/self is right (a /proc of the namespace could not be mounted: %v)", ownErr)}
	}
	return Containment{Caveat: fmt.Sprintf("a process the command starts that leaves its process group (setsid, setpgid) outlives the command when it is stopped: this host refused a PID namespace (%v)", hostErr)}
}

// probeInit runs the init with no command: it sets up the namespace as
// for one and exits.
func probeInit(ctx context.Context, ownProc bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = []string{}
	cmd.Args = []string{initArg0, setAttr(cmd, ownProc)}
	KillOnCancel(cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// contain makes cmd start the init, which starts cmd's command.
func contain(cmd *exec.Cmd, ownProc bool) {
	mode := setAttr(cmd, ownProc)
	cmd.Args = append([]string{initArg0, mode, cmd.Path}, cmd.Args...)
	cmd.Path = self
}

// setAttr adds to cmd's attributes the namespaces of the init and returns
// the init's mode. Mounting /proc takes a mount namespace of the init's
// own, and, for a user who is not root, CAP_SYS_ADMIN in the user
// namespace across the exec of the init: an ambient capability, which the
// init drops before it starts the command.
func setAttr(cmd *exec.Cmd, ownProc bool) string {
	mode, flags := modeHostProc, uintptr(syscall.CLONE_NEWPID)
	if ownProc {
		mode, flags = modeOwnProc, flags|syscall.CLONE_NEWNS
	}
	ns := NamespacesAttr(flags)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	attr.Cloneflags |= ns.Cloneflags
	if ns.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.UidMappings, attr.GidMappings = ns.UidMappings, ns.GidMappings
		if ownProc {
			attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_SYS_ADMIN)
		}
	}
	return mode
}

// runInit is the init: the first process of the namespace. It sets the
// namespace up as mode says, then, given a command (path, then argv),
// starts it, reaps every process of the namespace that ends, and returns
// the command's status; given none, it returns 0 (a probe).
func runInit(mode string, command []string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "mkrelease init: "+format+"\n", args...)
		return initFailed
	}
	// Capabilities belong to a thread: the command is started from this
	// one, whose ambient capabilities are dropped.
	runtime.LockOSThread()
	if os.Getpid() != 1 {
		return fail("not the first process of a PID namespace (pid %d)", os.Getpid())
	}
	switch mode {
	case modeOwnProc:
		if err := mountProc(); err != nil {
			return fail("%v", err)
		}
	case modeHostProc:
	default:
		return fail("unknown mode %q", mode)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail("drop the ambient capabilities: %v", err)
	}
	if len(command) == 0 {
		return 0
	}
	if len(command) < 2 {
		return fail("no argv for %s", command[0])
	}
	p, err := os.StartProcess(command[0], command[1:], &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return fail("%v", err)
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return fail("wait for %s: %v", command[0], err)
		case pid != p.Pid: // an orphan, reaped
		case ws.Exited():
			return ws.ExitStatus()
		case ws.Signaled():
			fmt.Fprintf(os.Stderr, "mkrelease init: %s was killed by signal %d (%v)\n", command[0], ws.Signal(), ws.Signal())
			return 128 + int(ws.Signal())
		}
	}
}

// mountProc mounts a /proc of the namespace over mkrelease's, in the
// mount namespace of the init's own that [setAttr] asks for with this
// mode, its mounts made private first so that none reaches mkrelease's.
func mountProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if pid, err := os.Readlink("/proc/self"); err != nil || pid != "1" {
		return fmt.Errorf("the mounted /proc is not the namespace's: /proc/self is %q (%v)", pid, err)
	}
	return nil
}
