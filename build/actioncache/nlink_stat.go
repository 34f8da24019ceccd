//go:build linux || darwin

package actioncache

import (
	"io/fs"
	"syscall"
)

// onlyName says the file has no other name (hard link) than the one it was
// read by, so that a second name for it in the cache shares it with no one.
func onlyName(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}
