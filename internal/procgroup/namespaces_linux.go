package procgroup

import (
	"os"
	"syscall"
)

// NamespacesAttr starts a process in the new namespaces flags names (the
// CLONE_NEW* flags) and, for a user who is not root, in the user namespace
// creating them needs, which maps only the user's own IDs: the process
// keeps the user's identity and gains no privilege outside it. [Group]
// and [KillOnCancel] keep what it sets.
func NamespacesAttr(flags uintptr) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Geteuid(), HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getegid(), HostID: os.Getegid(), Size: 1}}
	}
	return attr
}
