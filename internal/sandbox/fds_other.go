//go:build !unix

package sandbox

// CloseInherited does nothing here: Windows passes a command only the
// handles its starter names.
func CloseInherited() {}
