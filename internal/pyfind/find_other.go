//go:build !windows

package pyfind

import (
	"io/fs"
	"path/filepath"
)

// onPath lists the interpreters to try in the PATH folder dir.
func onPath(dir string) []string {
	more, _ := filepath.Glob(filepath.Join(dir, "python3.[0-9]*"))
	return append([]string{filepath.Join(dir, "python3")}, more...)
}

// managedCandidates lists the interpreters of pyenv and uv.
func managedCandidates(getenv func(string) string) []string {
	home := getenv("HOME")
	pyenv := getenv("PYENV_ROOT")
	if pyenv == "" && home != "" {
		pyenv = filepath.Join(home, ".pyenv")
	}
	var managed []string
	if pyenv != "" {
		m, _ := filepath.Glob(filepath.Join(pyenv, "versions", "*", "bin", "python3.[0-9]*"))
		managed = append(managed, m...)
	}
	if home != "" {
		m, _ := filepath.Glob(filepath.Join(home, ".local", "share", "uv", "python", "*", "bin", "python3.[0-9]*"))
		managed = append(managed, m...)
	}
	return managed
}

// executable reports whether the file at path, described by st, can be run.
func executable(path string, st fs.FileInfo) bool {
	return !st.IsDir() && st.Mode()&0o111 != 0
}
