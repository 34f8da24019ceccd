// Package fsmode names the type of a file mode in messages ("symbolic
// link", "named pipe", …), so that every refusal of a file that is not
// what it should be says what it is in the same words.
package fsmode

import "io/fs"

// Name returns the type of m in words: "regular file", "directory",
// "symbolic link", "named pipe", "socket", "character device", "device",
// or "irregular file" for any other type.
func Name(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "regular file"
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "irregular file"
}
