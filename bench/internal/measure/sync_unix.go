//go:build unix

package measure

import "syscall"

// writeBack asks the kernel to write the page cache's dirty pages back.
func writeBack() { syscall.Sync() }
