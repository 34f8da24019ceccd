package executor

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// systemDirs are the host folders every step sees read-only (when they
// exist): the system's programs and libraries. /etc is not among them:
// only the entries in etcFiles are shown.
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the entries of /etc a step sees read-only: what the dynamic
// linker, compilers and the C library read. Not shown: passwd/shadow and
// the other account files (the step gets a passwd of its own), ssh, sudo,
// credentials of any kind.
var etcFiles = []string{
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "hosts", "host.conf",
	"localtime", "timezone", "os-release", "debian_version", "lsb-release", "mime.types", "protocols",
	"services", "ssl", "ca-certificates", "gai.conf", "profile", "bash.bashrc", "inputrc", "shells",
}

// sandboxUID is the user (and group) a step runs as inside the sandbox,
// whoever runs mkrelease: files a step writes never record the host user.
const sandboxUID = "1000"

// stepHost is a step's host name, whatever the machine's.
const stepHost = "mkrelease-step"

// credentialFiles are files a toolchain's folder may hold that are the
// user's credentials, not the toolchain (cargo's in CARGO_HOME, the
// netrc-style files of tools installed in a home-like prefix): a step sees
// them empty.
var credentialFiles = []string{
	"credentials", "credentials.toml", ".credentials.toml", ".netrc", ".pypirc", ".npmrc", ".git-credentials",
}

// toolRoots returns the folders to show for the toolchain commands tools,
// found on path: the installation folder of each (the parent of its bin/
// folder, else its folder), for both the command as found and the file it
// links to, leaving out folders the system folders already show. A folder
// that is the user's home (home), or holds it, is never shown whole: a
// tool in ~/bin shows ~/bin, one in ~ itself shows only its own file.
func toolRoots(tools []string, path, home string) []string {
	seen := map[string]bool{}
	var out []string
	exposesHome := func(dir string) bool {
		return home != "" && home != "/" && (dir == home || underAny(home, []string{dir}))
	}
	add := func(file string) {
		dir := filepath.Dir(file)
		if filepath.Base(dir) == "bin" && !exposesHome(filepath.Dir(dir)) {
			dir = filepath.Dir(dir)
		}
		if exposesHome(dir) {
			dir = file
		}
		if dir == "/" || underAny(dir, systemDirs) || seen[dir] {
			return
		}
		seen[dir] = true
		out = append(out, dir)
	}
	for _, t := range tools {
		found := LookPath(t, path)
		if found == "" {
			continue
		}
		add(found)
		if real, err := filepath.EvalSymlinks(found); err == nil {
			add(real)
		}
	}
	sort.Strings(out)
	return out
}

// underAny reports whether p is one of dirs or inside one of them.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// bwrapVersion asks bubblewrap its version ("bubblewrap 0.8.0").
func bwrapVersion(bwrap string) string {
	out, err := exec.Command(bwrap, "--version").Output()
	if err != nil {
		return "bubblewrap"
	}
	return strings.TrimSpace(string(out))
}
