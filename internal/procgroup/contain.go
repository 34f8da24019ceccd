package procgroup

import "os/exec"

// Containment is how [Containment.KillOnCancel] confines a command on
// this host; [ProbeContainment] finds it. The zero Containment confines
// nothing beyond [KillOnCancel].
//
// A process group is not a container: a process the command starts can
// leave it (setsid, setpgid) and then outlives a group kill, and holds
// the command's output open. On Linux the command therefore runs under a
// small init, the first process of a PID namespace of its own: when that
// init ends, killed or because the command ended, the kernel kills every
// process of the namespace, so nothing the command started survives it,
// wherever it moved, whatever it did with its environment, and even when
// mkrelease itself is killed (the init dies with mkrelease). The init
// starts the command as its only child, reaps the orphans the namespace
// leaves to it, and exits with the command's status (128+N when a signal
// N killed it, as shells report it). Where it may, it mounts a /proc of
// the namespace, so that the command sees its own processes only and its
// pid (getpid) names it there; /proc/self is right in either case.
type Containment struct {
	// PIDNamespace says each command runs in a PID namespace of its own,
	// under mkrelease's init.
	PIDNamespace bool
	// OwnProc says the namespace has a /proc of its own.
	OwnProc bool
	// Caveat says what is lost without either, and why; empty when
	// nothing is.
	Caveat string
}

// KillOnCancel is [KillOnCancel] with cmd confined as c says. cmd must
// come from exec.CommandContext and not be started. Its path and
// arguments become the init's (cmd.Path is then /proc/self/exe); a cmd
// whose lookup failed (cmd.Err) is left as it is, for Start to report.
func (c Containment) KillOnCancel(cmd *exec.Cmd) {
	if c.PIDNamespace && cmd.Err == nil {
		contain(cmd, c.OwnProc)
	}
	KillOnCancel(cmd)
}
