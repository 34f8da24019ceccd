package platform

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
)

// elfSpec describes a small synthetic ELF file: just the headers, dynamic
// table and symbol versions that Inspect reads. It lets tests cover cases
// no toolchain here produces (musl, GLIBC_PRIVATE, other architectures).
type elfSpec struct {
	class     elf.Class // default ELFCLASS64
	bigEndian bool
	machine   elf.Machine // default EM_X86_64
	osabi     elf.OSABI
	typ       elf.Type // default ET_DYN
	flags     uint32
	interp    string
	needed    []string
	soname    string
	verneed   []elfVerneed
	// noSections drops the section headers but keeps PT_DYNAMIC, as sstrip
	// does.
	noSections bool
}

type elfVerneed struct {
	lib      string
	versions []elfVersion
}

type elfVersion struct {
	name    string
	symbols []string // undefined symbols bound to this version
}

// build lays the file out as: header, program headers, .interp, .dynstr,
// .dynsym, .gnu.version, .gnu.version_r, .dynamic, .shstrtab, section
// headers.
func (s elfSpec) build() []byte {
	is64 := s.class != elf.ELFCLASS32
	var bo binary.AppendByteOrder = binary.LittleEndian
	if s.bigEndian {
		bo = binary.BigEndian
	}
	machine := s.machine
	if machine == 0 {
		machine = elf.EM_X86_64
	}
	typ := s.typ
	if typ == 0 {
		typ = elf.ET_DYN
	}
	ehsize, phentsize, shentsize, symsize, dynsize := 52, 32, 40, 16, 8
	if is64 {
		ehsize, phentsize, shentsize, symsize, dynsize = 64, 56, 64, 24, 16
	}

	// String table.
	dynstr := []byte{0}
	str := func(x string) uint32 {
		if i := bytes.Index(dynstr, append([]byte(x), 0)); i > 0 && dynstr[i-1] == 0 {
			return uint32(i)
		}
		off := uint32(len(dynstr))
		dynstr = append(append(dynstr, x...), 0)
		return off
	}

	// Symbols and their versions.
	put16 := func(b []byte, v uint16) []byte { return bo.AppendUint16(b, v) }
	put32 := func(b []byte, v uint32) []byte { return bo.AppendUint32(b, v) }
	putWord := func(b []byte, v uint64) []byte {
		if is64 {
			return bo.AppendUint64(b, v)
		}
		return bo.AppendUint32(b, uint32(v))
	}
	dynsym := make([]byte, symsize) // the null symbol
	versym := put16(nil, 0)
	var verneed []byte
	index := uint16(2)
	for i, vn := range s.verneed {
		entry := put16(nil, 1)
		entry = put16(entry, uint16(len(vn.versions)))
		entry = put32(entry, str(vn.lib))
		entry = put32(entry, 16)
		next := uint32(0)
		if i < len(s.verneed)-1 {
			next = uint32(16 + 16*len(vn.versions))
		}
		entry = put32(entry, next)
		for j, v := range vn.versions {
			entry = put32(entry, 0) // hash: not checked by readers here
			entry = put16(entry, 0)
			entry = put16(entry, index)
			entry = put32(entry, str(v.name))
			if j < len(vn.versions)-1 {
				entry = put32(entry, 16)
			} else {
				entry = put32(entry, 0)
			}
			for _, sym := range v.symbols {
				name := str(sym)
				if is64 {
					dynsym = put32(dynsym, name)
					dynsym = append(dynsym, 0x12, 0) // GLOBAL FUNC
					dynsym = put16(dynsym, 0)        // SHN_UNDEF
					dynsym = bo.AppendUint64(dynsym, 0)
					dynsym = bo.AppendUint64(dynsym, 0)
				} else {
					dynsym = put32(dynsym, name)
					dynsym = put32(dynsym, 0)
					dynsym = put32(dynsym, 0)
					dynsym = append(dynsym, 0x12, 0)
					dynsym = put16(dynsym, 0)
				}
				versym = put16(versym, index)
			}
			index++
		}
		verneed = append(verneed, entry...)
	}

	// Dynamic table.
	var dynamic []byte
	dyn := func(tag elf.DynTag, val uint64) {
		dynamic = putWord(dynamic, uint64(tag))
		dynamic = putWord(dynamic, val)
	}
	for _, lib := range s.needed {
		dyn(elf.DT_NEEDED, uint64(str(lib)))
	}
	if s.soname != "" {
		dyn(elf.DT_SONAME, uint64(str(s.soname)))
	}
	if len(s.verneed) > 0 {
		dyn(elf.DT_VERNEED, 0x1000)
		dyn(elf.DT_VERNEEDNUM, uint64(len(s.verneed)))
	}
	dyn(elf.DT_NULL, 0)
	hasDynamic := len(s.needed) > 0 || s.soname != "" || len(s.verneed) > 0

	shstrtab := []byte("\x00.interp\x00.dynstr\x00.dynsym\x00.gnu.version\x00.gnu.version_r\x00.dynamic\x00.shstrtab\x00")
	shname := func(n string) uint32 { return uint32(bytes.Index(shstrtab, []byte("\x00"+n+"\x00")) + 1) }

	// Layout.
	var phnum int
	if s.interp != "" {
		phnum++
	}
	if hasDynamic {
		phnum++
	}
	off := ehsize + phnum*phentsize
	type chunk struct {
		name             string
		typ              elf.SectionType
		data             []byte
		link, info, ents int
		off              int
	}
	var chunks []*chunk
	add := func(c *chunk) *chunk {
		c.off = off
		off += len(c.data)
		for off%8 != 0 {
			off++
		}
		chunks = append(chunks, c)
		return c
	}
	var interpC, dynC *chunk
	if s.interp != "" {
		interpC = add(&chunk{name: ".interp", typ: elf.SHT_PROGBITS, data: append([]byte(s.interp), 0)})
	}
	if hasDynamic {
		add(&chunk{name: ".dynstr", typ: elf.SHT_STRTAB, data: dynstr})
		strIdx := len(chunks) // section index: the null section is 0
		if len(s.verneed) > 0 {
			add(&chunk{name: ".dynsym", typ: elf.SHT_DYNSYM, data: dynsym, link: strIdx, info: 1, ents: symsize})
			symIdx := len(chunks)
			add(&chunk{name: ".gnu.version", typ: elf.SHT_GNU_VERSYM, data: versym, link: symIdx, ents: 2})
			add(&chunk{name: ".gnu.version_r", typ: elf.SHT_GNU_VERNEED, data: verneed, link: strIdx, info: len(s.verneed)})
		}
		dynC = add(&chunk{name: ".dynamic", typ: elf.SHT_DYNAMIC, data: dynamic, link: strIdx, ents: dynsize})
	}
	shstrC := add(&chunk{name: ".shstrtab", typ: elf.SHT_STRTAB, data: shstrtab})
	shoff := off
	shnum := len(chunks) + 1
	if s.noSections {
		shoff, shnum = 0, 0
	}

	// ELF header.
	var out []byte
	out = append(out, 0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS32), byte(elf.ELFDATA2LSB), 1, byte(s.osabi))
	if is64 {
		out[4] = byte(elf.ELFCLASS64)
	}
	if s.bigEndian {
		out[5] = byte(elf.ELFDATA2MSB)
	}
	out = append(out, make([]byte, 8)...)
	out = put16(out, uint16(typ))
	out = put16(out, uint16(machine))
	out = put32(out, 1)
	out = putWord(out, 0)                                        // entry
	out = putWord(out, uint64(ehsize))                           // phoff
	out = putWord(out, uint64(shoff))                            // shoff
	out = put32(out, s.flags)                                    // flags
	out = put16(out, uint16(ehsize))                             // ehsize
	out = put16(out, uint16(phentsize))                          // phentsize
	out = put16(out, uint16(phnum))                              // phnum
	out = put16(out, uint16(shentsize))                          // shentsize
	out = put16(out, uint16(shnum))                              // shnum
	out = put16(out, uint16(len(chunks)*boolInt(!s.noSections))) // shstrndx
	_ = shstrC

	// Program headers.
	ph := func(typ elf.ProgType, c *chunk) {
		if is64 {
			out = put32(out, uint32(typ))
			out = put32(out, 4) // flags
			out = putWord(out, uint64(c.off))
			out = putWord(out, uint64(c.off)) // vaddr
			out = putWord(out, uint64(c.off)) // paddr
			out = putWord(out, uint64(len(c.data)))
			out = putWord(out, uint64(len(c.data)))
			out = putWord(out, 8)
		} else {
			out = put32(out, uint32(typ))
			out = put32(out, uint32(c.off))
			out = put32(out, uint32(c.off))
			out = put32(out, uint32(c.off))
			out = put32(out, uint32(len(c.data)))
			out = put32(out, uint32(len(c.data)))
			out = put32(out, 4)
			out = put32(out, 4)
		}
	}
	if interpC != nil {
		ph(elf.PT_INTERP, interpC)
	}
	if dynC != nil {
		ph(elf.PT_DYNAMIC, dynC)
	}

	// Section contents.
	for _, c := range chunks {
		for len(out) < c.off {
			out = append(out, 0)
		}
		out = append(out, c.data...)
	}
	for len(out) < shoff {
		out = append(out, 0)
	}

	// Section headers.
	if !s.noSections {
		out = append(out, make([]byte, shentsize)...)
		for _, c := range chunks {
			out = put32(out, shname(c.name))
			out = put32(out, uint32(c.typ))
			out = putWord(out, 2) // SHF_ALLOC
			out = putWord(out, uint64(c.off))
			out = putWord(out, uint64(c.off))
			out = putWord(out, uint64(len(c.data)))
			out = put32(out, uint32(c.link))
			out = put32(out, uint32(c.info))
			out = putWord(out, 8)
			out = putWord(out, uint64(c.ents))
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// glibcLib is a shorthand for a verneed on libc.so.6.
func glibcLib(versions ...elfVersion) elfVerneed {
	return elfVerneed{lib: "libc.so.6", versions: versions}
}

func ver(name string, symbols ...string) elfVersion {
	return elfVersion{name: name, symbols: symbols}
}
