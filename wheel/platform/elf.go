package platform

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ARM e_flags bits (ARM ELF ABI): the EABI version and the float ABI.
const (
	efARMEABIMask     = 0xff000000
	efARMEABIVer5     = 0x05000000
	efARMABIFloatHard = 0x00000400
)

func inspectELF(name string, r io.ReaderAt) (Need, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return Need{}, fmt.Errorf("%s: malformed ELF: %w", name, err)
	}
	n := Need{File: name, OS: Linux}
	switch f.OSABI {
	case elf.ELFOSABI_NONE, elf.ELFOSABI_LINUX:
	default:
		return Need{}, fmt.Errorf("%s: ELF built for %v, not Linux", name, f.OSABI)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return Need{}, fmt.Errorf("%s: ELF of type %v is neither an executable nor a shared library", name, f.Type)
	}

	// The dynamic loader.
	var interp string
	hasDynamic := false
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			b, err := io.ReadAll(io.LimitReader(p.Open(), 4096))
			if err != nil {
				return Need{}, fmt.Errorf("%s: reading PT_INTERP: %w", name, err)
			}
			interp = strings.TrimRight(string(b), "\x00")
		case elf.PT_DYNAMIC:
			hasDynamic = true
		}
	}
	if hasDynamic && f.SectionByType(elf.SHT_DYNAMIC) == nil {
		// debug/elf reads the dynamic table through section headers; a
		// binary stripped of them would look static and be under-claimed.
		return Need{}, fmt.Errorf("%s: dynamically linked ELF without section headers: cannot read what it links", name)
	}

	needed, err := f.ImportedLibraries()
	if err != nil {
		return Need{}, fmt.Errorf("%s: reading DT_NEEDED: %w", name, err)
	}
	for _, lib := range needed {
		n.Needed = appendUnique(n.Needed, lib)
	}
	if sonames, err := f.DynString(elf.DT_SONAME); err != nil {
		return Need{}, fmt.Errorf("%s: reading DT_SONAME: %w", name, err)
	} else if len(sonames) > 0 {
		n.Soname = sonames[0]
	}
	if n.Versions, err = elfVersions(f); err != nil {
		return Need{}, fmt.Errorf("%s: %w", name, err)
	}

	if n.Arch, err = elfArch(f, r, interp != "" || len(n.Needed) > 0); err != nil {
		return Need{}, fmt.Errorf("%s: %w", name, err)
	}
	if n.Libc, err = elfLibc(interp, n.Needed, n.Versions); err != nil {
		return Need{}, fmt.Errorf("%s: %w", name, err)
	}

	// The glibc release: the highest GLIBC_ version referenced.
	for _, v := range n.Versions {
		if g, ok := glibcRelease(v.Name); ok && g.Compare(n.Glibc) > 0 {
			n.Glibc, n.GlibcSymbol = g, v.Symbol
		}
	}
	return n, nil
}

// elfVersions lists the symbol versions the binary needs, from
// .gnu.version_r, each with the first undefined dynamic symbol bound to it.
func elfVersions(f *elf.File) ([]VersionRef, error) {
	if f.SectionByType(elf.SHT_GNU_VERNEED) == nil {
		if v, _ := f.DynValue(elf.DT_VERNEED); len(v) > 0 {
			return nil, errors.New("DT_VERNEED set but no .gnu.version_r section: cannot read the symbol versions it needs")
		}
		return nil, nil
	}
	if f.SectionByType(elf.SHT_DYNSYM) == nil || f.SectionByType(elf.SHT_GNU_VERSYM) == nil {
		return nil, errors.New(".gnu.version_r without .dynsym and .gnu.version: cannot read the symbol versions it needs")
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("reading dynamic symbols: %w", err)
	}
	first := map[[2]string]string{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF || !s.HasVersion || s.Version == "" || s.Name == "" {
			continue
		}
		k := [2]string{s.Library, s.Version}
		if _, seen := first[k]; !seen {
			first[k] = s.Name
		}
	}
	vneeds, err := f.DynamicVersionNeeds()
	if err != nil {
		return nil, fmt.Errorf("reading .gnu.version_r: %w", err)
	}
	var refs []VersionRef
	seen := map[[2]string]bool{}
	for _, vn := range vneeds {
		for _, d := range vn.Needs {
			k := [2]string{vn.Name, d.Dep}
			if d.Dep == "" || seen[k] {
				continue
			}
			seen[k] = true
			refs = append(refs, VersionRef{Library: vn.Name, Name: d.Dep, Symbol: first[k]})
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Library != refs[j].Library {
			return refs[i].Library < refs[j].Library
		}
		return refs[i].Name < refs[j].Name
	})
	return refs, nil
}

// elfArch maps the ELF machine to the wheel-tag architecture.
func elfArch(f *elf.File, r io.ReaderAt, dynamic bool) (string, error) {
	is64 := f.Class == elf.ELFCLASS64
	le := f.Data == elf.ELFDATA2LSB
	switch f.Machine {
	case elf.EM_X86_64:
		if is64 {
			return "x86_64", nil
		}
		return "", errors.New("x32 ELF (EM_X86_64, 32-bit) has no wheel platform tag")
	case elf.EM_386:
		if !is64 {
			return "i686", nil
		}
	case elf.EM_AARCH64:
		if is64 && le {
			return "aarch64", nil
		}
		if !is64 {
			return "", errors.New("ILP32 aarch64 ELF has no wheel platform tag")
		}
	case elf.EM_PPC64:
		if is64 && le {
			return "ppc64le", nil
		}
		if is64 {
			return "", errors.New("big-endian ppc64 ELF is not supported (only ppc64le)")
		}
	case elf.EM_S390:
		if is64 {
			return "s390x", nil
		}
		return "", errors.New("31-bit s390 ELF has no wheel platform tag (only s390x)")
	case elf.EM_RISCV:
		if is64 {
			return "riscv64", nil
		}
		return "", errors.New("32-bit RISC-V ELF has no wheel platform tag (only riscv64)")
	case elf.EM_LOONGARCH:
		if is64 {
			return "loongarch64", nil
		}
	case elf.EM_ARM:
		if is64 || !le {
			break
		}
		// e_flags is not exposed by debug/elf: it sits at offset 36 of the
		// 32-bit header.
		var b [4]byte
		if _, err := r.ReadAt(b[:], 36); err != nil {
			return "", fmt.Errorf("reading ARM e_flags: %w", err)
		}
		flags := binary.LittleEndian.Uint32(b[:])
		if flags&efARMEABIMask != efARMEABIVer5 {
			return "", fmt.Errorf("ARM ELF with EABI version %d (flags %#x): only EABI 5 (armv7l) is supported", flags>>24, flags)
		}
		// A static binary calls no one else, so its float ABI does not
		// matter; a dynamic one must match the hard-float system.
		if dynamic && flags&efARMABIFloatHard == 0 {
			return "", fmt.Errorf("soft-float ARM ELF (flags %#x) has no wheel platform tag (armv7l is hard-float)", flags)
		}
		return "armv7l", nil
	}
	return "", fmt.Errorf("unsupported ELF machine %v (%v, %v)", f.Machine, f.Class, f.Data)
}

// elfLibc tells which C library a Linux binary links with.
func elfLibc(interp string, needed []string, versions []VersionRef) (string, error) {
	if interp != "" {
		base := interp[strings.LastIndexByte(interp, '/')+1:]
		switch {
		case strings.HasPrefix(base, "ld-musl-"):
			return Musl, nil
		case strings.HasPrefix(base, "ld-linux"), strings.HasPrefix(base, "ld64.so."), strings.HasPrefix(base, "ld.so."):
			return Glibc, nil
		case strings.HasPrefix(interp, "/system/bin/linker"):
			return "", fmt.Errorf("binary for Android (PT_INTERP %q) has no manylinux or musllinux tag", interp)
		}
		return "", fmt.Errorf("unknown dynamic loader %q: neither glibc nor musl", interp)
	}
	for _, lib := range needed {
		switch {
		case lib == "libc.so.6":
			return Glibc, nil
		case lib == "libc.so", strings.HasPrefix(lib, "libc.musl-"):
			return Musl, nil
		}
	}
	for _, v := range versions {
		if strings.HasPrefix(v.Name, "GLIBC_") {
			return Glibc, nil
		}
	}
	if len(needed) > 0 {
		// Linked, but to no C library by name: the system's is glibc on
		// every manylinux platform, and the libraries are checked against
		// the manylinux policy.
		return Glibc, nil
	}
	return "", nil // static
}

// glibcMarkers maps glibc's non-numeric ABI versions to the first glibc
// release (per the auditwheel policies) that defines them.
var glibcMarkers = [...]struct {
	name    string
	release Version
}{
	{"GLIBC_ABI_DT_RELR", Version{2, 36, 0}},
	{"GLIBC_ABI_GNU_TLS", Version{2, 43, 0}},
	{"GLIBC_ABI_GNU2_TLS", Version{2, 43, 0}},
	{"GLIBC_ABI_DT_X86_64_PLT", Version{2, 43, 0}},
}

// glibcRelease gives the glibc release (major.minor) that a GLIBC_ version
// name requires: GLIBC_2.34 → 2.34, GLIBC_2.2.5 → 2.3 (2.2 may lack it),
// GLIBC_ABI_DT_RELR → 2.36. ok is false for anything else, including
// GLIBC_PRIVATE and unknown markers.
func glibcRelease(name string) (Version, bool) {
	rest, ok := strings.CutPrefix(name, "GLIBC_")
	if !ok {
		return Version{}, false
	}
	for _, m := range glibcMarkers {
		if m.name == name {
			return m.release, true
		}
	}
	p, ok := parseDotted(rest)
	if !ok || len(p) < 2 || len(p) > 3 {
		return Version{}, false
	}
	v := Version{Major: p[0], Minor: p[1]}
	if len(p) == 3 && p[2] > 0 {
		v.Minor++
	}
	return v, true
}
