package executor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// LookPath finds the command name as a step would on path (a PATH list):
// in the first absolute folder of path holding it as an executable regular
// file (on Windows also as name.exe, and any regular file counts), or, when
// name holds a path separator, that file, made absolute. It returns "" when
// there is none. Symbolic links are left as found.
func LookPath(name, path string) string {
	if name == "" {
		return ""
	}
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		if abs, err := filepath.Abs(name); err == nil && isProgram(abs) {
			return abs
		}
		return ""
	}
	names := []string{name}
	if runtime.GOOS == "windows" && !strings.EqualFold(filepath.Ext(name), ".exe") {
		names = append(names, name+".exe")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		for _, n := range names {
			if p := filepath.Join(dir, n); isProgram(p) {
				return p
			}
		}
	}
	return ""
}

// isProgram reports whether p is a regular file (following links) that
// may be run.
func isProgram(p string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || st.Mode()&0o111 != 0
}
