package platform

import (
	"debug/pe"
	"fmt"
	"io"
	"strings"
)

func inspectPE(name string, r io.ReaderAt) (Need, error) {
	f, err := pe.NewFile(r)
	if err != nil {
		return Need{}, fmt.Errorf("%s: malformed PE: %w", name, err)
	}
	n := Need{File: name, OS: Windows}
	switch f.Machine {
	case pe.IMAGE_FILE_MACHINE_AMD64:
		n.Arch = "amd64"
	case pe.IMAGE_FILE_MACHINE_ARM64:
		n.Arch = "arm64"
	case pe.IMAGE_FILE_MACHINE_I386:
		n.Arch = "win32"
	default:
		return Need{}, fmt.Errorf("%s: unsupported PE machine %#x (want AMD64, ARM64 or I386)", name, f.Machine)
	}
	// debug/pe's ImportedLibraries is a stub; ImportedSymbols returns
	// "symbol:dll" for every import.
	syms, err := f.ImportedSymbols()
	if err != nil {
		return Need{}, fmt.Errorf("%s: reading PE imports: %w", name, err)
	}
	for _, s := range syms {
		if i := strings.LastIndexByte(s, ':'); i >= 0 && i+1 < len(s) {
			n.Needed = appendUnique(n.Needed, s[i+1:])
		}
	}
	return n, nil
}
