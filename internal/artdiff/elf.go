package artdiff

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxSectionsShown bounds the differing sections a detail lists.
const maxSectionsShown = 8

// compareELF compares two ELF files whose bytes differ: where the first
// difference falls (a section, a header table) and which sections differ.
func (c *comparer) compareELF(p []string, a, b blob, res scanResult) (*Difference, error) {
	raA, sizeA, releaseA, err := c.readerAt(a)
	if err != nil {
		return c.fail(p, onSide(original, err))
	}
	defer releaseA()
	raB, sizeB, releaseB, err := c.readerAt(b)
	if err != nil {
		return c.fail(p, onSide(rebuilt, err))
	}
	defer releaseB()
	ea, errA := openELF(raA)
	eb, errB := openELF(raB)
	switch {
	case errA != nil && errB != nil:
		return c.diff(p, "content", byteDetail(res.off, sizeA, sizeB)+"; neither side parses as ELF"), nil
	case errA != nil || errB != nil:
		return c.failBoth(p, onSide(original, errA), onSide(rebuilt, errB), res)
	}
	detail := fmt.Sprintf("first difference at byte %d, in %s", res.off, elfRegion(ea, res.headA, res.off, sizeA))
	differing, err := c.differingSections(ea, eb, raA, raB)
	if err != nil {
		return c.fail(p, err)
	}
	if len(differing) > maxSectionsShown {
		differing = append(differing[:maxSectionsShown], fmt.Sprintf("and %d more", len(differing)-maxSectionsShown))
	}
	if len(differing) > 0 {
		detail += "; sections that differ: " + strings.Join(differing, ", ")
	}
	if sizeA != sizeB {
		detail += fmt.Sprintf("; sizes %d and %d bytes", sizeA, sizeB)
	}
	return c.diff(p, "content", detail), nil
}

// openELF parses an ELF file, turning a panic of debug/elf on a damaged
// file into an error.
func openELF(ra io.ReaderAt) (f *elf.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("debug/elf: %v", r)
		}
	}()
	return elf.NewFile(ra)
}

// differingSections lists the sections whose bytes (or, for sections
// without file data, sizes) differ, matched by name, in the original's
// file order, then the sections only the rebuilt file has.
func (c *comparer) differingSections(ea, eb *elf.File, raA, raB io.ReaderAt) ([]string, error) {
	inB := map[string]*elf.Section{}
	for _, s := range slices.Backward(eb.Sections) {
		inB[s.Name] = s
	}
	inA := map[string]bool{}
	sections := slices.Clone(ea.Sections)
	// File order keeps the reads of a streamed file going forward.
	slices.SortStableFunc(sections, func(x, y *elf.Section) int { return cmp.Compare(x.Offset, y.Offset) })
	var differing []string
	for _, s := range sections {
		if err := c.ctx.Err(); err != nil {
			return nil, err
		}
		inA[s.Name] = true
		if s.Type == elf.SHT_NULL {
			continue
		}
		name := printable(s.Name)
		t := inB[s.Name]
		switch {
		case t == nil:
			differing = append(differing, name+" (missing in rebuilt)")
		case s.Type == elf.SHT_NOBITS || t.Type == elf.SHT_NOBITS:
			if s.Type != t.Type || s.Size != t.Size {
				differing = append(differing, fmt.Sprintf("%s (sizes %d and %d)", name, s.Size, t.Size))
			}
		case s.FileSize != t.FileSize:
			differing = append(differing, fmt.Sprintf("%s (sizes %d and %d)", name, s.FileSize, t.FileSize))
		default:
			res, err := c.scanReaders(io.NewSectionReader(raA, int64(s.Offset), int64(s.FileSize)),
				io.NewSectionReader(raB, int64(t.Offset), int64(t.FileSize)))
			if err != nil {
				return nil, err
			}
			if !res.equal {
				differing = append(differing, name)
			}
		}
	}
	for _, t := range eb.Sections {
		if !inA[t.Name] && t.Type != elf.SHT_NULL {
			differing = append(differing, printable(t.Name)+" (extra in rebuilt)")
		}
	}
	return differing, nil
}

// elfRegion names the part of an ELF file (parsed as f, starting with
// head) that holds byte off.
func elfRegion(f *elf.File, head []byte, off, size int64) string {
	if off >= size {
		return "the rebuilt file's extra bytes past the original's end"
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Type != elf.SHT_NULL && int64(s.Offset) <= off && off < int64(s.Offset+s.FileSize) {
			return "ELF section " + printable(s.Name)
		}
	}
	type table struct {
		name       string
		start, end uint64
	}
	var tables []table
	var bo binary.ByteOrder = binary.LittleEndian
	if f.Data == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	switch {
	case f.Class == elf.ELFCLASS64 && len(head) >= 64:
		tables = []table{
			{"ELF header", 0, uint64(bo.Uint16(head[0x34:]))},
			{"program header table", bo.Uint64(head[0x20:]), bo.Uint64(head[0x20:]) + uint64(bo.Uint16(head[0x36:]))*uint64(bo.Uint16(head[0x38:]))},
			{"section header table", bo.Uint64(head[0x28:]), bo.Uint64(head[0x28:]) + uint64(bo.Uint16(head[0x3a:]))*uint64(bo.Uint16(head[0x3c:]))},
		}
	case f.Class == elf.ELFCLASS32 && len(head) >= 52:
		tables = []table{
			{"ELF header", 0, uint64(bo.Uint16(head[0x28:]))},
			{"program header table", uint64(bo.Uint32(head[0x1c:])), uint64(bo.Uint32(head[0x1c:])) + uint64(bo.Uint16(head[0x2a:]))*uint64(bo.Uint16(head[0x2c:]))},
			{"section header table", uint64(bo.Uint32(head[0x20:])), uint64(bo.Uint32(head[0x20:])) + uint64(bo.Uint16(head[0x2e:]))*uint64(bo.Uint16(head[0x30:]))},
		}
	}
	for _, t := range tables {
		if t.start <= uint64(off) && uint64(off) < t.end {
			return "the " + t.name
		}
	}
	return "bytes outside any section"
}
