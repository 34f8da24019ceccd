//go:build linux || darwin

package digestmemo

import (
	"os"
	"syscall"
)

// identities says this platform reads file identities.
const identities = true

// identity reads the identity of the regular file path (package doc); ok
// is false when there is none to trust.
func identity(path string) (ident, bool) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return ident{}, false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ident{}, false
	}
	return ident{dev: uint64(sys.Dev), ino: uint64(sys.Ino), size: st.Size(), mtime: st.ModTime().UnixNano(), ctime: ctime(sys)}, true
}
