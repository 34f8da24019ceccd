package executor

import (
	"path/filepath"
	"sort"

	"github.com/mkrelease/mkrelease/internal/sandbox"
)

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
		return home != "" && home != "/" && sandbox.Within(home, dir)
	}
	add := func(file string) {
		dir := filepath.Dir(file)
		if filepath.Base(dir) == "bin" && !exposesHome(filepath.Dir(dir)) {
			dir = filepath.Dir(dir)
		}
		if exposesHome(dir) {
			dir = file
		}
		if dir == "/" || sandbox.InSystemDirs(dir) || seen[dir] {
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
