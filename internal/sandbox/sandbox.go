// Package sandbox composes the bubblewrap sandboxes mkrelease runs other
// people's code in: build steps (build/executor) and verifier lanes
// (evidence/runner). A sandbox has its own user, mount, PID, IPC, UTS and
// (unless it asks for the network) network namespaces; it runs as one user
// whoever runs mkrelease ([UID], with an account and host name of its
// own); it sees the host's system folders and the few entries of /etc that
// programs need read-only, a /proc, /dev and /tmp of its own, and the
// folders its caller names ([Spec.Mounts]); and nothing else of the host:
// not the user's home, the project, the keys, the caches, /run and its
// sockets, or other processes. [Probe] finds whether bubblewrap can make
// one here and how; [Args] composes bubblewrap's arguments.
//
// The caller decides what a sandbox sees and where: build steps see their
// folders at fixed places, lanes see theirs at their host paths (a
// virtualenv's scripts name it by its path).
package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// UID is the user (and group) a sandboxed command runs as, whoever runs
// mkrelease: files it writes never record the host user.
const UID = "1000"

// systemDirs are the host folders every sandbox shows read-only (when
// they exist): the system's programs and libraries. /etc is not among
// them: only the entries in etcFiles are shown.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the entries of /etc a sandbox shows read-only: what the
// dynamic linker, compilers, interpreters and the C library read. Not
// shown: passwd/shadow and the other account files (the sandbox gets a
// passwd of its own), ssh, sudo, credentials of any kind.
var etcFiles = []string{
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "hosts", "host.conf",
	"localtime", "timezone", "os-release", "debian_version", "lsb-release", "mime.types", "protocols",
	"services", "ssl", "ca-certificates", "gai.conf", "profile", "bash.bashrc", "inputrc", "shells",
}

// networkEtcFiles are the further entries of /etc a sandbox that keeps
// the host's network shows: the resolver's configuration.
var networkEtcFiles = []string{"resolv.conf"}

// InSystemDirs reports whether the host path p is one of the system
// folders every sandbox shows, or lies inside one.
func InSystemDirs(p string) bool {
	return Within(p, systemDirs...)
}

// Within reports whether path p is one of dirs or lies inside one of them
// (by its text: p and dirs are clean absolute paths).
func Within(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || d == "/" || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// Namespaces are the namespaces a sandbox gets: all of [Args]'s, the
// network's left out when the sandbox keeps the host's network.
func Namespaces(network bool) []string {
	if network {
		return []string{"user", "mount", "pid", "ipc", "uts"}
	}
	return []string{"user", "mount", "pid", "ipc", "uts", "network"}
}

// Mount is a host path a sandbox shows.
type Mount struct {
	// Host is the host's file or folder; Inside where the sandbox shows
	// it.
	Host, Inside string
	// Writable shows it writable; otherwise it is read-only.
	Writable bool
}

// Spec is what one sandbox shows besides the system folders.
type Spec struct {
	// Hostname is the sandbox's host name, whatever the machine's.
	Hostname string
	// Account is the name of the sandbox's user ([UID]) in its
	// /etc/passwd, Gecos the account's description and Home its home
	// folder as the sandbox sees it.
	Account, Gecos, Home string
	// Etc is a host folder of the caller's into which the sandbox's
	// passwd, group and hosts are written (the sandbox shows them
	// read-only as /etc's).
	Etc string
	// Network keeps the host's network (and shows /etc/resolv.conf):
	// no network namespace.
	Network bool
	// Tmp is the host folder shown as /tmp and as /var/tmp, empty at the
	// start; when empty, each is an empty folder in memory. It is
	// mounted before Mounts, so that nothing of the host's /tmp is ever
	// in view, even where a mount lies below /tmp on the host.
	Tmp string
	// Mounts are shown in order: one below another comes after it.
	Mounts []Mount
	// Dir is the working folder, as the sandbox sees it.
	Dir string
}

// Args composes bubblewrap's arguments for s, up to and including the
// "--" before the command. The command runs as [UID] in the namespaces
// [Namespaces] lists (and a cgroup namespace where the kernel has one), in
// a session of its own, and dies with bubblewrap. It sees, read-only, the
// system folders, the entries of /etc in etcFiles and the account and
// hosts files of s, all at their host paths; its own /proc, /dev (with a
// private /dev/shm), /tmp and /var/tmp; the mounts of s; and nothing else
// of the host. The root folder itself is read-only: nothing but the
// writable mounts and the sandbox's own temporary folders may be written.
func Args(s Spec) ([]string, error) {
	args := []string{"--unshare-user", "--uid", UID, "--gid", UID, "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if !s.Network {
		args = append(args, "--unshare-net")
	}
	args = append(args, "--unshare-cgroup-try", "--hostname", s.Hostname, "--die-with-parent", "--new-session")
	for _, d := range systemDirs {
		st, err := os.Lstat(d)
		switch {
		case err != nil:
			continue
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(d)
			if err != nil {
				return nil, err
			}
			args = append(args, "--symlink", target, d)
		case st.IsDir():
			args = append(args, "--ro-bind", d, d)
		}
	}
	etcs := etcFiles
	if s.Network {
		etcs = append(etcs[:len(etcs):len(etcs)], networkEtcFiles...)
	}
	for _, f := range etcs {
		args = append(args, "--ro-bind-try", "/etc/"+f, "/etc/"+f)
	}
	// The sandbox's own account and host: the same for every host user and
	// machine (the host's /etc/hosts names the machine).
	if err := os.MkdirAll(s.Etc, 0o755); err != nil {
		return nil, err
	}
	for _, f := range []struct{ name, content string }{
		{"passwd", "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n" + s.Account + ":x:" + UID + ":" + UID + ":" + s.Gecos + ":" + s.Home + ":/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"},
		{"group", "root:x:0:\n" + s.Account + ":x:" + UID + ":\nnogroup:x:65534:\n"},
		{"hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost\n127.0.1.1\t" + s.Hostname + "\n"},
	} {
		file := filepath.Join(s.Etc, f.name)
		if err := os.WriteFile(file, []byte(f.content), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--ro-bind", file, "/etc/"+f.name)
	}
	args = append(args, "--proc", "/proc", "--dev", "/dev")
	if s.Tmp != "" {
		args = append(args, "--bind", s.Tmp, "/tmp", "--bind", s.Tmp, "/var/tmp")
	} else {
		args = append(args, "--tmpfs", "/tmp", "--tmpfs", "/var/tmp")
	}
	for _, m := range s.Mounts {
		if m.Writable {
			args = append(args, "--bind", m.Host, m.Inside)
		} else {
			args = append(args, "--ro-bind", m.Host, m.Inside)
		}
	}
	// Nothing but the writable mounts stays writable: not the root, nor
	// the folders that hold the mount points.
	return append(args, "--remount-ro", "/", "--chdir", s.Dir, "--"), nil
}

// Bwrap is a bubblewrap that makes sandboxes on this host, as [Probe]
// found it.
type Bwrap struct {
	// Path is the bubblewrap program.
	Path string
	// Version is its name and version ("bubblewrap 0.8.0").
	Version string
	// PIDNamespace says bubblewrap itself starts as the first process of
	// a PID namespace of mkrelease's ([Bwrap.Attr]).
	PIDNamespace bool
	// Caveat says what the sandbox does not hold on this host; empty when
	// it holds everything.
	Caveat string
}
