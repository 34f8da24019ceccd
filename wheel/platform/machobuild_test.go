package platform

import (
	"debug/macho"
	"encoding/binary"
)

// machoSpec describes a small synthetic 64-bit little-endian Mach-O: a
// header and a few load commands, enough for what Inspect reads.
type machoSpec struct {
	cpu   macho.Cpu // default CpuAmd64
	typ   macho.Type
	cmds  [][]byte
	dylib []string // LC_LOAD_DYLIB install names
}

func (s machoSpec) build() []byte {
	cpu := s.cpu
	if cpu == 0 {
		cpu = macho.CpuAmd64
	}
	typ := s.typ
	if typ == 0 {
		typ = macho.TypeDylib
	}
	le := binary.LittleEndian
	cmds := append([][]byte(nil), s.cmds...)
	for _, lib := range s.dylib {
		name := append([]byte(lib), 0)
		size := 24 + len(name)
		for size%8 != 0 {
			size++
		}
		c := le.AppendUint32(nil, uint32(macho.LoadCmdDylib))
		c = le.AppendUint32(c, uint32(size))
		c = le.AppendUint32(c, 24) // name offset
		c = le.AppendUint32(c, 2)  // timestamp
		c = le.AppendUint32(c, 0x10000)
		c = le.AppendUint32(c, 0x10000)
		c = append(c, name...)
		for len(c) < size {
			c = append(c, 0)
		}
		cmds = append(cmds, c)
	}
	var size int
	for _, c := range cmds {
		size += len(c)
	}
	out := le.AppendUint32(nil, macho.Magic64)
	out = le.AppendUint32(out, uint32(cpu))
	out = le.AppendUint32(out, 3) // subtype: all
	out = le.AppendUint32(out, uint32(typ))
	out = le.AppendUint32(out, uint32(len(cmds)))
	out = le.AppendUint32(out, uint32(size))
	out = le.AppendUint32(out, 0) // flags
	out = le.AppendUint32(out, 0) // reserved
	for _, c := range cmds {
		out = append(out, c...)
	}
	return out
}

// buildVersion is an LC_BUILD_VERSION command with no tools.
func buildVersion(platform uint32, major, minor, patch int) []byte {
	le := binary.LittleEndian
	c := le.AppendUint32(nil, lcBuildVersion)
	c = le.AppendUint32(c, 24)
	c = le.AppendUint32(c, platform)
	c = le.AppendUint32(c, uint32(major<<16|minor<<8|patch))
	c = le.AppendUint32(c, uint32(major<<16|minor<<8|patch)) // sdk
	return le.AppendUint32(c, 0)
}

// versionMin is an LC_VERSION_MIN_* command.
func versionMin(cmd uint32, major, minor, patch int) []byte {
	le := binary.LittleEndian
	c := le.AppendUint32(nil, cmd)
	c = le.AppendUint32(c, 16)
	c = le.AppendUint32(c, uint32(major<<16|minor<<8|patch))
	return le.AppendUint32(c, uint32(major<<16|minor<<8|patch))
}

// fat wraps Mach-O images into a fat file (FAT_MAGIC, big-endian headers,
// slices aligned to 2^12).
func fat(slices ...[]byte) []byte {
	be := binary.BigEndian
	const align = 1 << 12
	out := be.AppendUint32(nil, macho.MagicFat)
	out = be.AppendUint32(out, uint32(len(slices)))
	off := align
	for _, s := range slices {
		le := binary.LittleEndian
		out = be.AppendUint32(out, le.Uint32(s[4:])) // cputype
		out = be.AppendUint32(out, le.Uint32(s[8:])) // cpusubtype
		out = be.AppendUint32(out, uint32(off))      // offset
		out = be.AppendUint32(out, uint32(len(s)))   // size
		out = be.AppendUint32(out, 12)               // align
		off += (len(s) + align - 1) / align * align
	}
	for _, s := range slices {
		for len(out)%align != 0 {
			out = append(out, 0)
		}
		out = append(out, s...)
	}
	return out
}

// minimalPE is a PE32+ header with no sections and no imports.
func minimalPE(machine uint16) []byte {
	le := binary.LittleEndian
	out := make([]byte, 0x40)
	copy(out, "MZ")
	le.PutUint32(out[0x3c:], 0x40)
	out = append(out, "PE\x00\x00"...)
	out = le.AppendUint16(out, machine)
	out = le.AppendUint16(out, 0)    // sections
	out = le.AppendUint32(out, 0)    // timestamp
	out = le.AppendUint32(out, 0)    // symbol table
	out = le.AppendUint32(out, 0)    // symbols
	out = le.AppendUint16(out, 240)  // optional header size (PE32+)
	out = le.AppendUint16(out, 0x22) // executable, large address aware
	opt := make([]byte, 240)
	le.PutUint16(opt, 0x20b)    // PE32+
	le.PutUint32(opt[108:], 16) // NumberOfRvaAndSizes
	return append(out, opt...)
}
