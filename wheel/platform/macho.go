package platform

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Mach-O load commands that debug/macho leaves undecoded.
const (
	lcBuildVersion     = 0x32
	lcVersionMinMacOSX = 0x24
	lcVersionMinIOS    = 0x25
	lcVersionMinTVOS   = 0x2f
	lcVersionMinWatch  = 0x30
	lcReqDyld          = 0x80000000
	lcLoadDylib        = 0xc
	lcLoadWeakDylib    = 0x18 | lcReqDyld
	lcReexportDylib    = 0x1f | lcReqDyld
	lcLazyLoadDylib    = 0x20
	lcLoadUpwardDylib  = 0x23 | lcReqDyld
	platformMacOS      = 1
)

// applePlatforms names LC_BUILD_VERSION platforms for messages.
var applePlatforms = [...]string{1: "macOS", 2: "iOS", 3: "tvOS", 4: "watchOS", 5: "bridgeOS", 6: "Mac Catalyst",
	7: "iOS simulator", 8: "tvOS simulator", 9: "watchOS simulator", 10: "DriverKit", 11: "visionOS", 12: "visionOS simulator"}

func applePlatform(p uint32) string {
	if int(p) < len(applePlatforms) && applePlatforms[p] != "" {
		return applePlatforms[p]
	}
	return fmt.Sprintf("platform %d", p)
}

// slice is what one Mach-O image (a thin file or one slice of a fat one)
// needs.
type slice struct {
	arch   string
	macOS  Version
	cmd    string // the load command macOS comes from
	needed []string
}

func inspectMachO(name string, r io.ReaderAt) (Need, error) {
	f, err := macho.NewFile(r)
	if err != nil {
		return Need{}, fmt.Errorf("%s: malformed Mach-O: %w", name, err)
	}
	s, err := machoSlice(f)
	if err != nil {
		return Need{}, fmt.Errorf("%s: %w", name, err)
	}
	return Need{File: name, OS: MacOS, Arch: s.arch, MacOS: s.macOS, MacOSCommand: s.cmd, Needed: s.needed}, nil
}

func inspectFat(name string, r io.ReaderAt) (Need, error) {
	var hdr [4]byte
	if _, err := r.ReadAt(hdr[:], 0); err == nil && binary.BigEndian.Uint32(hdr[:]) == 0xcafebabf {
		return Need{}, fmt.Errorf("%s: 64-bit fat Mach-O (FAT_MAGIC_64) is not supported", name)
	}
	ff, err := macho.NewFatFile(r)
	if err != nil {
		return Need{}, fmt.Errorf("%s: malformed fat Mach-O: %w", name, err)
	}
	var x86, arm *slice
	var needed []string
	for _, a := range ff.Arches {
		if a.File == nil {
			continue
		}
		s, err := machoSlice(a.File)
		if err != nil {
			var unsupported errUnsupportedCPU
			if errors.As(err, &unsupported) {
				continue // an i386 or PowerPC slice: no Mac we tag for uses it
			}
			return Need{}, fmt.Errorf("%s: %w", name, err)
		}
		switch s.arch {
		case "x86_64":
			x86 = mergeSlice(x86, s)
		case "arm64":
			arm = mergeSlice(arm, s)
		}
		for _, lib := range s.needed {
			needed = appendUnique(needed, lib)
		}
	}
	n := Need{File: name, OS: MacOS, Needed: needed}
	switch {
	case x86 != nil && arm != nil:
		n.Arch = "universal2"
		// Every arm64 Mac runs macOS 11 or later: only an arm64 slice that
		// needs more than 11.0 raises the tag.
		switch {
		case x86.macOS.IsZero() || arm.macOS.IsZero():
			// Unknown for one slice: left zero, which Tag refuses.
		case arm.macOS.Compare(Version{11, 0, 0}) > 0:
			n.MacOS = maxVersion(x86.macOS, arm.macOS)
		default:
			n.MacOS = x86.macOS
		}
	case x86 != nil:
		n.Arch, n.MacOS = "x86_64", x86.macOS
	case arm != nil:
		n.Arch, n.MacOS = "arm64", arm.macOS
	default:
		return Need{}, fmt.Errorf("%s: fat Mach-O without an x86_64 or arm64 slice", name)
	}
	for _, s := range []*slice{x86, arm} {
		if s != nil && !n.MacOS.IsZero() && s.macOS == n.MacOS {
			n.MacOSCommand = s.cmd
			break
		}
	}
	return n, nil
}

// mergeSlice combines two slices of the same architecture (which a fat
// file should not have): the higher requirement wins, and a slice without
// a recorded macOS makes the result unknown.
func mergeSlice(a *slice, b slice) *slice {
	if a == nil {
		return &b
	}
	if a.macOS.IsZero() || b.macOS.IsZero() {
		a.macOS = Version{}
	} else {
		a.macOS = maxVersion(a.macOS, b.macOS)
	}
	return a
}

type errUnsupportedCPU struct{ cpu macho.Cpu }

func (e errUnsupportedCPU) Error() string {
	return fmt.Sprintf("unsupported Mach-O CPU %v (want x86_64 or arm64)", e.cpu)
}

func machoSlice(f *macho.File) (slice, error) {
	var s slice
	switch f.Cpu {
	case macho.CpuAmd64:
		s.arch = "x86_64"
	case macho.CpuArm64:
		s.arch = "arm64"
	default:
		return slice{}, errUnsupportedCPU{f.Cpu}
	}
	switch f.Type {
	case macho.TypeExec, macho.TypeDylib, macho.TypeBundle:
	default:
		return slice{}, fmt.Errorf("Mach-O of type %v is not an executable, dylib or bundle", f.Type)
	}
	bo := f.ByteOrder
	var other string
	found := false
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 8 {
			continue
		}
		switch cmd := bo.Uint32(raw); cmd {
		case lcBuildVersion:
			// struct build_version_command: cmd, cmdsize, platform, minos,
			// sdk, ntools.
			if len(raw) < 24 {
				return slice{}, fmt.Errorf("LC_BUILD_VERSION of %d bytes, want at least 24", len(raw))
			}
			if p := bo.Uint32(raw[8:]); p == platformMacOS {
				s.raise(decodeMachOVersion(bo.Uint32(raw[12:])), "LC_BUILD_VERSION")
				found = true
			} else {
				other = applePlatform(p)
			}
		case lcVersionMinMacOSX:
			// struct version_min_command: cmd, cmdsize, version, sdk.
			if len(raw) < 16 {
				return slice{}, fmt.Errorf("LC_VERSION_MIN_MACOSX of %d bytes, want 16", len(raw))
			}
			s.raise(decodeMachOVersion(bo.Uint32(raw[8:])), "LC_VERSION_MIN_MACOSX")
			found = true
		case lcVersionMinIOS:
			other = "iOS"
		case lcVersionMinTVOS:
			other = "tvOS"
		case lcVersionMinWatch:
			other = "watchOS"
		case lcLoadDylib, lcLoadWeakDylib, lcReexportDylib, lcLazyLoadDylib, lcLoadUpwardDylib:
			// struct dylib_command: cmd, cmdsize, then dylib { name offset,
			// timestamp, current and compatibility version }.
			if len(raw) < 12 {
				return slice{}, fmt.Errorf("dylib load command of %d bytes", len(raw))
			}
			off := bo.Uint32(raw[8:])
			if off < 12 || uint64(off) >= uint64(len(raw)) {
				return slice{}, fmt.Errorf("dylib load command with name offset %d outside its %d bytes", off, len(raw))
			}
			lib := raw[off:]
			if i := bytes.IndexByte(lib, 0); i >= 0 {
				lib = lib[:i]
			}
			s.needed = appendUnique(s.needed, string(lib))
		}
	}
	if !found && other != "" {
		return slice{}, fmt.Errorf("Mach-O built for %s, not macOS", other)
	}
	return s, nil
}

// raise records that the slice needs macOS v, as load command cmd says,
// when that is more than it needed so far.
func (s *slice) raise(v Version, cmd string) {
	if s.cmd == "" || v.Compare(s.macOS) > 0 {
		s.macOS, s.cmd = v, cmd
	}
}

// decodeMachOVersion decodes a Mach-O version, nibbles xxxx.yy.zz.
func decodeMachOVersion(v uint32) Version {
	return Version{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
}
