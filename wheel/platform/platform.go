package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// ErrNotBinary is returned (wrapped, test with errors.Is) for a file whose
// magic bytes are not those of an ELF, Mach-O or PE binary. A file that has
// the magic of a binary but does not parse gets a different error.
var ErrNotBinary = errors.New("not an ELF, Mach-O or PE binary")

// Operating systems, as used in [Need.OS] and [Platform.OS].
const (
	Linux   = "linux"
	MacOS   = "macos"
	Windows = "windows"
)

// C libraries, as used in [Need.Libc] and [Platform.Libc].
const (
	Glibc = "glibc"
	Musl  = "musl"
)

// Need is what one binary requires of the platform it runs on.
type Need struct {
	// File names the binary in messages (typically its path in the wheel).
	// Its base name also identifies it as a bundled library when it has no
	// Soname.
	File string
	// OS is Linux, MacOS or Windows.
	OS string
	// Arch is the architecture in wheel-tag spelling: on Linux x86_64,
	// i686, aarch64, ppc64le, s390x, armv7l, riscv64 or loongarch64; on
	// macOS x86_64, arm64 or universal2 (a fat binary with both); on
	// Windows amd64, arm64 or win32.
	Arch string
	// Libc is, on Linux, Glibc, Musl, or "" for a static binary that needs
	// no C library at all.
	Libc string
	// Soname is the ELF DT_SONAME of a shared library, if it has one.
	Soname string
	// Glibc is the lowest glibc release (major.minor) that provides every
	// GLIBC_ version the binary references; zero if it references none.
	Glibc Version
	// GlibcSymbol is one symbol bound to the GLIBC_ version that sets
	// Glibc ("" when that version is only referenced, with no symbol, as
	// GLIBC_ABI_DT_RELR is).
	GlibcSymbol string
	// Versions lists every symbol version the ELF binary references
	// (.gnu.version_r), sorted by library then name, each with one symbol
	// bound to it.
	Versions []VersionRef
	// MacOS is the minimum macOS the tag must claim: the minos of
	// LC_BUILD_VERSION (platform MACOS) or LC_VERSION_MIN_MACOSX. For a fat
	// binary it is the highest over its slices, where an arm64 slice's 11.0
	// counts as no requirement (every arm64 Mac runs 11 or later). Zero when
	// the binary records none.
	MacOS Version
	// MacOSCommand names the load command MacOS is read from,
	// "LC_BUILD_VERSION" or "LC_VERSION_MIN_MACOSX" ("" when MacOS is
	// zero), for messages.
	MacOSCommand string
	// Needed lists the libraries the binary loads: ELF DT_NEEDED, Mach-O
	// dylib load commands (install names), PE import DLLs; in file order
	// without duplicates.
	Needed []string
}

// VersionRef is one symbol version an ELF binary references.
type VersionRef struct {
	Library string // the library expected to define it, e.g. "libc.so.6"
	Name    string // e.g. "GLIBC_2.34"
	Symbol  string // one symbol bound to it, "" if none is
}

// String renders the reference for messages, e.g.
// "GLIBC_2.34 via pthread_create from libc.so.6".
func (r VersionRef) String() string {
	s := r.Name
	if r.Symbol != "" {
		s += " via " + r.Symbol
	}
	if r.Library != "" {
		s += " from " + r.Library
	}
	return s
}

// Version is a dotted release number such as glibc 2.34 or macOS 10.13.4.
type Version struct {
	Major, Minor, Patch int
}

// String renders the version as major.minor, or major.minor.patch when
// the patch is not zero.
func (v Version) String() string {
	if v.Patch != 0 {
		return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor)
}

// IsZero reports whether v is the zero Version (no requirement).
func (v Version) IsZero() bool { return v == Version{} }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	for _, d := range [...]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

func maxVersion(a, b Version) Version {
	if a.Compare(b) >= 0 {
		return a
	}
	return b
}

// Inspect reads the binary at path and reports what it needs. A file that
// is not an ELF, Mach-O or PE binary gives an error wrapping ErrNotBinary.
func Inspect(path string) (Need, error) {
	f, err := os.Open(path)
	if err != nil {
		return Need{}, fmt.Errorf("platform: %w", err)
	}
	defer f.Close()
	return InspectReader(path, f)
}

// InspectReader reads a binary from r and reports what it needs; name is
// used in messages and as [Need.File]. A reader that does not hold an ELF,
// Mach-O or PE binary gives an error wrapping ErrNotBinary. It never
// panics, whatever the input.
func InspectReader(name string, r io.ReaderAt) (n Need, err error) {
	defer func() {
		// The standard parsers are meant not to panic on bad input; this
		// is a last line of defence for untrusted files.
		if p := recover(); p != nil {
			n, err = Need{}, fmt.Errorf("%s: malformed binary (parser panic: %v)", name, p)
		}
	}()
	return inspect(name, r)
}

// inspect is InspectReader without the recover, so that fuzzing reports
// panics instead of hiding them.
func inspect(name string, r io.ReaderAt) (Need, error) {
	var magic [8]byte
	k, err := r.ReadAt(magic[:], 0)
	if k < 4 {
		if err != nil && err != io.EOF {
			return Need{}, fmt.Errorf("%s: %w", name, err)
		}
		return Need{}, fmt.Errorf("%s: %w", name, ErrNotBinary)
	}
	switch {
	case bytes.HasPrefix(magic[:], []byte("\x7fELF")):
		return inspectELF(name, r)
	case isMachO(magic[:4]):
		return inspectMachO(name, r)
	case isFat(magic[:k]):
		return inspectFat(name, r)
	case bytes.HasPrefix(magic[:], []byte("MZ")):
		return inspectPE(name, r)
	}
	return Need{}, fmt.Errorf("%s: %w", name, ErrNotBinary)
}

func isMachO(m []byte) bool {
	switch binary.BigEndian.Uint32(m) {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe:
		return true
	}
	return false
}

// isFat tells a fat Mach-O from a Java class file, which shares the magic
// 0xcafebabe: in a class file the next word holds the class file version
// (45 and up), in a fat file the number of architectures (a handful).
func isFat(m []byte) bool {
	if len(m) < 8 {
		return false
	}
	magic := binary.BigEndian.Uint32(m)
	return (magic == 0xcafebabe || magic == 0xcafebabf) && binary.BigEndian.Uint32(m[4:]) < 40
}

// parseDotted parses "2.34" or "1.2.0.8" into its numbers; ok is false if
// any part is not a decimal number.
func parseDotted(s string) (parts []int, ok bool) {
	if s == "" {
		return nil, false
	}
	for _, f := range strings.Split(s, ".") {
		if f == "" || len(f) > 9 {
			return nil, false
		}
		x, err := strconv.Atoi(f)
		if err != nil || x < 0 {
			return nil, false
		}
		parts = append(parts, x)
	}
	return parts, true
}

// compareDotted compares two dotted versions part by part, missing parts
// counting as zero.
func compareDotted(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// appendUnique appends s to list unless it is already there.
func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
