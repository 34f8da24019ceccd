package platform

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"testing"
)

// FuzzInspect feeds arbitrary bytes to the parsers, without the recover
// that InspectReader adds, so that any panic is reported. Whatever parses
// must also survive Tag, and a tag Tag returns must satisfy its own need.
func FuzzInspect(f *testing.F) {
	for _, s := range []elfSpec{
		{interp: glibcLoader, needed: []string{"libc.so.6", "libstdc++.so.6"}, soname: "libx.so.1", verneed: []elfVerneed{
			glibcLib(ver("GLIBC_2.34", "pthread_create"), ver("GLIBC_ABI_DT_RELR")),
			{lib: "libstdc++.so.6", versions: []elfVersion{ver("GLIBCXX_3.4.30", "_ZSt4cout"), ver("CXXABI_TM_1")}},
		}},
		{class: elf.ELFCLASS32, machine: elf.EM_ARM, flags: 0x05000400, interp: "/lib/ld-linux-armhf.so.3", needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.4", "abort"))}},
		{machine: elf.EM_S390, bigEndian: true, interp: "/lib/ld-musl-s390x.so.1", needed: []string{"libc.so"}},
		{typ: elf.ET_EXEC},
	} {
		f.Add(s.build())
	}
	f.Add(machoSpec{cmds: [][]byte{buildVersion(1, 10, 13, 0)}, dylib: []string{"/usr/lib/libSystem.B.dylib"}}.build())
	f.Add(fat(machoSpec{cmds: [][]byte{versionMin(lcVersionMinMacOSX, 10, 9, 0)}}.build(), machoSpec{cpu: macho.CpuArm64, cmds: [][]byte{buildVersion(1, 11, 0, 0)}}.build()))
	f.Add(minimalPE(pe.IMAGE_FILE_MACHINE_AMD64))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Add([]byte("hello"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := inspect("fuzz", bytes.NewReader(data))
		if err != nil {
			if n.OS != "" {
				t.Fatalf("error %v with a non-empty need %+v", err, n)
			}
			return
		}
		if n.OS == "" || n.Arch == "" {
			t.Fatalf("no error but OS %q arch %q", n.OS, n.Arch)
		}
		_ = n.PolicyError()
		tag, err := Tag([]Need{n})
		if err != nil {
			return
		}
		if err := Satisfies(tag, []Need{n}); err != nil {
			t.Fatalf("Tag gave %q, which Satisfies refuses: %v", tag, err)
		}
	})
}
