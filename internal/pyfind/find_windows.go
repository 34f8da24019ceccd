package pyfind

import (
	"io/fs"
	"path/filepath"
	"strings"
)

// onPath lists the interpreters to try in the PATH folder dir. The
// python3.exe of WindowsApps is an alias that offers to install Python
// from the Store: asked its version, it fails, and is skipped.
func onPath(dir string) []string {
	more, _ := filepath.Glob(filepath.Join(dir, "python3.[0-9]*.exe"))
	return append([]string{filepath.Join(dir, "python.exe"), filepath.Join(dir, "python3.exe")}, more...)
}

// managedCandidates lists the interpreters of pyenv-win and uv.
func managedCandidates(getenv func(string) string) []string {
	pyenv := getenv("PYENV_ROOT")
	if pyenv == "" && getenv("USERPROFILE") != "" {
		pyenv = filepath.Join(getenv("USERPROFILE"), ".pyenv", "pyenv-win")
	}
	var managed []string
	if pyenv != "" {
		m, _ := filepath.Glob(filepath.Join(pyenv, "versions", "*", "python.exe"))
		managed = append(managed, m...)
	}
	if appdata := getenv("APPDATA"); appdata != "" {
		m, _ := filepath.Glob(filepath.Join(appdata, "uv", "python", "*", "python.exe"))
		managed = append(managed, m...)
	}
	return managed
}

// executable reports whether the file at path, described by st, can be
// run: Windows has no execute bit, an .exe file is a program.
func executable(path string, st fs.FileInfo) bool {
	return !st.IsDir() && strings.EqualFold(filepath.Ext(path), ".exe")
}
