package procgroup

import "syscall"

// dieWithParent has the kernel kill the command when mkrelease ends, even
// by SIGKILL: a group of its own keeps it from signals meant for the
// terminal's or a CI job's process group, so nothing else would stop it.
// Only the command itself is covered: what it starts outlives it unless
// it ends them itself. The kernel sends the signal when the thread that
// started the command ends; Go ends a thread only when a goroutine locked
// to it returns without unlocking, which mkrelease never does.
func dieWithParent(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}
