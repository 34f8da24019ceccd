package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p    string
		dirs []string
		want bool
	}{
		{"/usr/lib/x", []string{"/usr"}, true},
		{"/usr", []string{"/usr"}, true},
		{"/usrlocal", []string{"/usr"}, false},
		{"/home/alice", []string{"/home/alice/.pyenv"}, false},
		{"/home/alice", []string{"/opt", "/home"}, true},
		{"/anything", []string{"/"}, true},
		{"/x", nil, false},
	} {
		if got := Within(c.p, c.dirs...); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.p, c.dirs, got, c.want)
		}
	}
	if !InSystemDirs("/usr/bin/python3") || InSystemDirs("/root/.pyenv/versions/3.12.1") || InSystemDirs("/etc/passwd") {
		t.Error("InSystemDirs: /usr/bin shown, a home folder or /etc not")
	}
}

// pairs finds each occurrence of flag in args and returns what follows it
// (n arguments each), joined by spaces.
func pairs(args []string, flag string, n int) []string {
	var out []string
	for i, a := range args {
		if a == flag && i+n < len(args) {
			out = append(out, strings.Join(args[i+1:i+1+n], " "))
		}
	}
	return out
}

// TestArgs: the namespaces, the network and its resolver, the temporary
// folders, the account files and the mounts, in order and with their
// modes, then the read-only root, the working folder and "--".
func TestArgs(t *testing.T) {
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	for _, c := range []struct {
		name     string
		spec     Spec
		network  bool
		tmp      []string // what --bind or --tmpfs shows at /tmp and /var/tmp
		mounts   []string // --ro-bind and --bind pairs after /var/tmp, in order
		resolver bool
	}{
		{"no network, tmp in memory", Spec{Hostname: "h", Account: "verifier", Gecos: "a lane", Home: "/w/home", Etc: etc, Dir: "/w/run",
			Mounts: []Mount{{Host: "/opt/py", Inside: "/opt/py"}, {Host: "/w", Inside: "/w", Writable: true}}},
			false, []string{"--tmpfs /tmp", "--tmpfs /var/tmp"}, []string{"--ro-bind /opt/py /opt/py", "--bind /w /w"}, false},
		{"network, tmp a folder", Spec{Hostname: "h", Account: "builder", Gecos: "a step", Home: "/m/home", Etc: etc, Dir: "/m/src", Network: true,
			Tmp: "/s/tmp", Mounts: []Mount{{Host: "/dev/null", Inside: "/opt/cargo/credentials.toml"}}},
			true, []string{"--bind /s/tmp /tmp", "--bind /s/tmp /var/tmp"}, []string{"--ro-bind /dev/null /opt/cargo/credentials.toml"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, err := Args(c.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(args, "--unshare-net"); got == c.network {
				t.Errorf("--unshare-net given %v with Network %v", got, c.network)
			}
			for _, f := range []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"} {
				if !slices.Contains(args, f) {
					t.Errorf("no %s", f)
				}
			}
			if got := slices.Contains(pairs(args, "--ro-bind-try", 2), "/etc/resolv.conf /etc/resolv.conf"); got != c.resolver {
				t.Errorf("/etc/resolv.conf shown %v, want %v", got, c.resolver)
			}
			// Everything after /dev: the temporary folders, then the
			// mounts, in order.
			rest := args[slices.Index(args, "/dev")+1:]
			var shown []string
			for i := 0; i < len(rest); i++ {
				switch rest[i] {
				case "--tmpfs":
					shown = append(shown, "--tmpfs "+rest[i+1])
					i++
				case "--bind", "--ro-bind":
					shown = append(shown, rest[i]+" "+rest[i+1]+" "+rest[i+2])
					i += 2
				}
			}
			if want := append(slices.Clone(c.tmp), c.mounts...); !slices.Equal(shown, want) {
				t.Errorf("after /dev: %q, want %q", shown, want)
			}
			if tail := strings.Join(args[len(args)-5:], " "); tail != "--remount-ro / --chdir "+c.spec.Dir+" --" {
				t.Errorf("args end with %q", tail)
			}
			passwd, err := os.ReadFile(filepath.Join(etc, "passwd"))
			if err != nil {
				t.Fatal(err)
			}
			if want := c.spec.Account + ":x:1000:1000:" + c.spec.Gecos + ":" + c.spec.Home + ":/bin/sh\n"; !strings.Contains(string(passwd), want) {
				t.Errorf("passwd %q lacks %q", passwd, want)
			}
			if !slices.Contains(pairs(args, "--ro-bind", 2), filepath.Join(etc, "passwd")+" /etc/passwd") {
				t.Error("the sandbox's passwd is not shown as /etc/passwd")
			}
		})
	}
}

func TestNamespaces(t *testing.T) {
	if got := strings.Join(Namespaces(false), ","); got != "user,mount,pid,ipc,uts,network" {
		t.Errorf("Namespaces(false) = %s", got)
	}
	if got := strings.Join(Namespaces(true), ","); got != "user,mount,pid,ipc,uts" {
		t.Errorf("Namespaces(true) = %s", got)
	}
}
