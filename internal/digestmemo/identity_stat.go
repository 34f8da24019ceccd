//go:build linux || darwin

package digestmemo

import (
	"os"
	"syscall"
)

// identity reads the identity of the regular file path (package doc); ok
// is false when there is none to trust.
func identity(path string) (string, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", false
	}
	return format(uint64(sys.Dev), uint64(sys.Ino), st.Size(), st.ModTime().UnixNano(), ctime(sys)), true
}
