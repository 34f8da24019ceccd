package platform

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

const glibcLoader = "/lib64/ld-linux-x86-64.so.2"

func TestInspectELF(t *testing.T) {
	tests := []struct {
		name    string
		spec    elfSpec
		want    Need   // checked fields: Arch, Libc, Glibc, GlibcSymbol, Needed, Soname
		tag     string // "" to skip
		policy  string // substring of PolicyError, "" for none
		inspect string // substring of Inspect's error, "" for success
	}{
		{
			name: "glibc executable",
			spec: elfSpec{typ: elf.ET_EXEC, interp: glibcLoader, needed: []string{"libc.so.6"},
				verneed: []elfVerneed{glibcLib(ver("GLIBC_2.2.5", "malloc"), ver("GLIBC_2.34", "pthread_create", "__libc_start_main"))}},
			want: Need{Arch: "x86_64", Libc: Glibc, Glibc: Version{2, 34, 0}, GlibcSymbol: "pthread_create", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_34_x86_64",
		},
		{
			name: "glibc x.y.z rounds up, floor applies",
			spec: elfSpec{needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.2.5", "malloc"))}},
			want: Need{Arch: "x86_64", Libc: Glibc, Glibc: Version{2, 3, 0}, GlibcSymbol: "malloc", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_17_x86_64.manylinux2014_x86_64",
		},
		{
			name: "shared library with soname, libc found by DT_NEEDED",
			spec: elfSpec{needed: []string{"libm.so.6", "libc.so.6"}, soname: "libfoo.so.1"},
			want: Need{Arch: "x86_64", Libc: Glibc, Soname: "libfoo.so.1", Needed: []string{"libm.so.6", "libc.so.6"}},
			tag:  "manylinux_2_17_x86_64.manylinux2014_x86_64",
		},
		{
			name: "DT_RELR marker needs glibc 2.36",
			spec: elfSpec{needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.14", "memcpy"), ver("GLIBC_ABI_DT_RELR"))}},
			want: Need{Arch: "x86_64", Libc: Glibc, Glibc: Version{2, 36, 0}, Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_36_x86_64",
		},
		{
			name: "GLIBC_PRIVATE",
			spec: elfSpec{needed: []string{"libc.so.6", "ld-linux-x86-64.so.2"}, verneed: []elfVerneed{
				glibcLib(ver("GLIBC_2.17", "clock_gettime")),
				{lib: "ld-linux-x86-64.so.2", versions: []elfVersion{ver("GLIBC_PRIVATE", "_dl_find_dso_for_object")}},
			}},
			want:   Need{Arch: "x86_64", Libc: Glibc, Glibc: Version{2, 17, 0}, GlibcSymbol: "clock_gettime", Needed: []string{"libc.so.6", "ld-linux-x86-64.so.2"}},
			policy: "GLIBC_PRIVATE via _dl_find_dso_for_object from ld-linux-x86-64.so.2",
		},
		{
			name:   "unknown glibc ABI marker",
			spec:   elfSpec{needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_ABI_SOMETHING_NEW"))}},
			want:   Need{Arch: "x86_64", Libc: Glibc, Needed: []string{"libc.so.6"}},
			policy: "GLIBC_ABI_SOMETHING_NEW",
		},
		{
			name: "C++ runtime raises the tag",
			spec: elfSpec{needed: []string{"libstdc++.so.6", "libgcc_s.so.1", "libc.so.6"}, verneed: []elfVerneed{
				glibcLib(ver("GLIBC_2.17", "clock_gettime")),
				{lib: "libstdc++.so.6", versions: []elfVersion{ver("GLIBCXX_3.4.30", "_ZSt28__throw_bad_array_new_lengthv"), ver("CXXABI_1.3.9", "_ZdlPvm")}},
				{lib: "libgcc_s.so.1", versions: []elfVersion{ver("GCC_3.0", "_Unwind_Resume")}},
			}},
			want: Need{Arch: "x86_64", Libc: Glibc, Glibc: Version{2, 17, 0}, GlibcSymbol: "clock_gettime", Needed: []string{"libstdc++.so.6", "libgcc_s.so.1", "libc.so.6"}},
			tag:  "manylinux_2_35_x86_64",
		},
		{
			name: "C++ runtime newer than every policy",
			spec: elfSpec{needed: []string{"libstdc++.so.6", "libc.so.6"}, verneed: []elfVerneed{
				{lib: "libstdc++.so.6", versions: []elfVersion{ver("GLIBCXX_3.4.99", "_Zfuture")}},
			}},
			want:   Need{Arch: "x86_64", Libc: Glibc, Needed: []string{"libstdc++.so.6", "libc.so.6"}},
			policy: "GLIBCXX_3.4.99 via _Zfuture from libstdc++.so.6, newer than any manylinux policy",
		},
		{
			name:   "external library",
			spec:   elfSpec{interp: glibcLoader, needed: []string{"libssl.so.3", "libc.so.6"}, verneed: []elfVerneed{{lib: "libssl.so.3", versions: []elfVersion{ver("OPENSSL_3.0.0", "SSL_new")}}}},
			want:   Need{Arch: "x86_64", Libc: Glibc, Needed: []string{"libssl.so.3", "libc.so.6"}},
			policy: "links libssl.so.3, which the manylinux policy does not allow: bundle it in the wheel or link it statically",
		},
		{
			name: "musl executable",
			spec: elfSpec{machine: elf.EM_AARCH64, interp: "/lib/ld-musl-aarch64.so.1", needed: []string{"libc.so"}},
			want: Need{Arch: "aarch64", Libc: Musl, Needed: []string{"libc.so"}},
			tag:  "musllinux_1_2_aarch64",
		},
		{
			name:   "musl library linking libstdc++",
			spec:   elfSpec{needed: []string{"libstdc++.so.6", "libc.so"}},
			want:   Need{Arch: "x86_64", Libc: Musl, Needed: []string{"libstdc++.so.6", "libc.so"}},
			policy: "links libstdc++.so.6, which the musllinux policy does not allow",
		},
		{
			name: "static",
			spec: elfSpec{typ: elf.ET_EXEC},
			want: Need{Arch: "x86_64"},
			tag:  "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64",
		},
		{
			name: "ppc64le", spec: elfSpec{machine: elf.EM_PPC64, interp: "/lib64/ld64.so.2", needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.17", "abort"))}},
			want: Need{Arch: "ppc64le", Libc: Glibc, Glibc: Version{2, 17, 0}, GlibcSymbol: "abort", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_17_ppc64le.manylinux2014_ppc64le",
		},
		{
			name: "s390x", spec: elfSpec{machine: elf.EM_S390, bigEndian: true, interp: "/lib/ld64.so.1", needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.28", "abort"))}},
			want: Need{Arch: "s390x", Libc: Glibc, Glibc: Version{2, 28, 0}, GlibcSymbol: "abort", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_28_s390x",
		},
		{
			name: "loongarch64 static", spec: elfSpec{machine: elf.EM_LOONGARCH, typ: elf.ET_EXEC},
			want: Need{Arch: "loongarch64"},
			tag:  "manylinux_2_36_loongarch64.musllinux_1_2_loongarch64",
		},
		{
			name: "armv7l hard-float", spec: elfSpec{class: elf.ELFCLASS32, machine: elf.EM_ARM, flags: 0x05000400, interp: "/lib/ld-linux-armhf.so.3", needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.4", "abort"))}},
			want: Need{Arch: "armv7l", Libc: Glibc, Glibc: Version{2, 4, 0}, GlibcSymbol: "abort", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_17_armv7l.manylinux2014_armv7l",
		},
		{
			name: "i686", spec: elfSpec{class: elf.ELFCLASS32, machine: elf.EM_386, interp: "/lib/ld-linux.so.2", needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.0", "abort"))}},
			want: Need{Arch: "i686", Libc: Glibc, Glibc: Version{2, 0, 0}, GlibcSymbol: "abort", Needed: []string{"libc.so.6"}},
			tag:  "manylinux_2_17_i686.manylinux2014_i686",
		},
		{name: "soft-float ARM", spec: elfSpec{class: elf.ELFCLASS32, machine: elf.EM_ARM, flags: 0x05000200, interp: "/lib/ld-linux.so.3", needed: []string{"libc.so.6"}}, inspect: "soft-float"},
		{name: "big-endian ppc64", spec: elfSpec{machine: elf.EM_PPC64, bigEndian: true, typ: elf.ET_EXEC}, inspect: "big-endian ppc64"},
		{name: "x32", spec: elfSpec{class: elf.ELFCLASS32, typ: elf.ET_EXEC}, inspect: "x32"},
		{name: "sparc", spec: elfSpec{machine: elf.EM_SPARCV9, bigEndian: true, typ: elf.ET_EXEC}, inspect: "unsupported ELF machine"},
		{name: "FreeBSD", spec: elfSpec{osabi: elf.ELFOSABI_FREEBSD, typ: elf.ET_EXEC}, inspect: "not Linux"},
		{name: "object file", spec: elfSpec{typ: elf.ET_REL}, inspect: "neither an executable nor a shared library"},
		{name: "Android", spec: elfSpec{interp: "/system/bin/linker64", needed: []string{"libc.so"}}, inspect: "Android"},
		{name: "unknown loader", spec: elfSpec{interp: "/opt/weird/loader", needed: []string{"libc.so.6"}}, inspect: "unknown dynamic loader"},
		{name: "stripped section headers", spec: elfSpec{interp: glibcLoader, needed: []string{"libc.so.6"}, noSections: true}, inspect: "without section headers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := InspectReader("lib/"+strings.ReplaceAll(tt.name, " ", "_")+".so", bytes.NewReader(tt.spec.build()))
			if tt.inspect != "" {
				if err == nil || !strings.Contains(err.Error(), tt.inspect) || errors.Is(err, ErrNotBinary) {
					t.Fatalf("Inspect error = %v, want one mentioning %q", err, tt.inspect)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := Need{Arch: n.Arch, Libc: n.Libc, Glibc: n.Glibc, GlibcSymbol: n.GlibcSymbol, Needed: n.Needed, Soname: n.Soname}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if n.OS != Linux {
				t.Errorf("OS = %q", n.OS)
			}
			perr := n.PolicyError()
			if tt.policy == "" && perr != nil {
				t.Errorf("PolicyError: %v", perr)
			}
			if tt.policy != "" && (perr == nil || !strings.Contains(perr.Error(), tt.policy) || !strings.Contains(perr.Error(), n.File)) {
				t.Errorf("PolicyError = %v, want it to name the file and %q", perr, tt.policy)
			}
			tag, err := Tag([]Need{n})
			if tt.policy != "" {
				if err == nil {
					t.Errorf("Tag = %q despite the policy problem", tag)
				}
				return
			}
			if err != nil || (tt.tag != "" && tag != tt.tag) {
				t.Errorf("Tag = %q, %v; want %q", tag, err, tt.tag)
			}
		})
	}
}

func TestInspectELFVersions(t *testing.T) {
	spec := elfSpec{needed: []string{"libstdc++.so.6", "libc.so.6"}, verneed: []elfVerneed{
		{lib: "libstdc++.so.6", versions: []elfVersion{ver("GLIBCXX_3.4", "_ZNSo3putEc"), ver("CXXABI_1.3", "__cxa_begin_catch")}},
		glibcLib(ver("GLIBC_2.34", "pthread_create", "pthread_join"), ver("GLIBC_2.2.5")),
	}}
	n, err := InspectReader("x.so", bytes.NewReader(spec.build()))
	if err != nil {
		t.Fatal(err)
	}
	want := []VersionRef{
		{"libc.so.6", "GLIBC_2.2.5", ""},
		{"libc.so.6", "GLIBC_2.34", "pthread_create"},
		{"libstdc++.so.6", "CXXABI_1.3", "__cxa_begin_catch"},
		{"libstdc++.so.6", "GLIBCXX_3.4", "_ZNSo3putEc"},
	}
	if !reflect.DeepEqual(n.Versions, want) {
		t.Errorf("Versions = %v\nwant %v", n.Versions, want)
	}
	if s := want[1].String(); s != "GLIBC_2.34 via pthread_create from libc.so.6" {
		t.Errorf("VersionRef.String = %q", s)
	}
}

func TestInspectMachO(t *testing.T) {
	x86 := func(cmds ...[]byte) machoSpec { return machoSpec{cpu: macho.CpuAmd64, cmds: cmds} }
	arm := func(cmds ...[]byte) machoSpec { return machoSpec{cpu: macho.CpuArm64, cmds: cmds} }
	tests := []struct {
		name    string
		data    []byte
		arch    string
		macOS   Version
		tag     string
		policy  string
		inspect string
	}{
		{name: "LC_VERSION_MIN_MACOSX", data: x86(versionMin(lcVersionMinMacOSX, 10, 9, 0)).build(), arch: "x86_64", macOS: Version{10, 9, 0}, tag: "macosx_10_9_x86_64"},
		{name: "10.x.y rounds up", data: x86(buildVersion(1, 10, 13, 4)).build(), arch: "x86_64", macOS: Version{10, 13, 4}, tag: "macosx_10_14_x86_64"},
		{name: "10.15.1 is 11", data: x86(buildVersion(1, 10, 15, 1)).build(), arch: "x86_64", macOS: Version{10, 15, 1}, tag: "macosx_11_0_x86_64"},
		{name: "arm64 11.0", data: arm(buildVersion(1, 11, 0, 0)).build(), arch: "arm64", macOS: Version{11, 0, 0}, tag: "macosx_11_0_arm64"},
		{name: "11.3 needs the 12_0 tag", data: arm(buildVersion(1, 11, 3, 0)).build(), arch: "arm64", macOS: Version{11, 3, 0}, tag: "macosx_12_0_arm64"},
		{name: "zippered macOS and Catalyst", data: x86(buildVersion(6, 13, 1, 0), buildVersion(1, 10, 15, 0)).build(), arch: "x86_64", macOS: Version{10, 15, 0}, tag: "macosx_10_15_x86_64"},
		{name: "iOS only", data: arm(buildVersion(2, 14, 0, 0)).build(), inspect: "built for iOS, not macOS"},
		{name: "old iOS", data: arm(versionMin(lcVersionMinIOS, 9, 0, 0)).build(), inspect: "built for iOS"},
		{name: "no version command", data: x86().build(), arch: "x86_64", policy: "", tag: ""},
		{name: "universal2, x86_64 slice sets the version",
			data: fat(x86(buildVersion(1, 10, 13, 0)).build(), arm(buildVersion(1, 11, 0, 0)).build()),
			arch: "universal2", macOS: Version{10, 13, 0}, tag: "macosx_10_13_universal2"},
		{name: "universal2, arm64 slice needs 12",
			data: fat(x86(buildVersion(1, 10, 13, 0)).build(), arm(buildVersion(1, 12, 0, 0)).build()),
			arch: "universal2", macOS: Version{12, 0, 0}, tag: "macosx_12_0_universal2"},
		{name: "fat with i386 slice ignored",
			data: fat(machoSpec{cpu: macho.Cpu386, cmds: [][]byte{versionMin(lcVersionMinMacOSX, 10, 4, 0)}}.build(), x86(versionMin(lcVersionMinMacOSX, 10, 6, 0)).build()),
			arch: "x86_64", macOS: Version{10, 6, 0}, tag: "macosx_10_6_x86_64"},
		{name: "fat with only i386", data: fat(machoSpec{cpu: macho.Cpu386}.build()), inspect: "without an x86_64 or arm64 slice"},
		{name: "thin i386", data: machoSpec{cpu: macho.Cpu386}.build(), inspect: "unsupported Mach-O CPU"},
		{name: "object file", data: machoSpec{typ: macho.TypeObj}.build(), inspect: "not an executable, dylib or bundle"},
		{name: "system dylibs", data: machoSpec{cmds: [][]byte{buildVersion(1, 11, 0, 0)}, dylib: []string{"/usr/lib/libSystem.B.dylib", "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation", "@rpath/libfoo.dylib"}}.build(),
			arch: "x86_64", macOS: Version{11, 0, 0}, tag: "macosx_11_0_x86_64"},
		{name: "Homebrew dylib", data: machoSpec{cmds: [][]byte{buildVersion(1, 11, 0, 0)}, dylib: []string{"/opt/homebrew/opt/openssl@3/lib/libssl.3.dylib"}}.build(),
			arch: "x86_64", macOS: Version{11, 0, 0}, policy: "links /opt/homebrew/opt/openssl@3/lib/libssl.3.dylib, which is not part of macOS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := InspectReader("mod.so", bytes.NewReader(tt.data))
			if tt.inspect != "" {
				if err == nil || !strings.Contains(err.Error(), tt.inspect) {
					t.Fatalf("Inspect error = %v, want one mentioning %q", err, tt.inspect)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.OS != MacOS || n.Arch != tt.arch || n.MacOS != tt.macOS {
				t.Errorf("got %s/%s minos %s, want macos/%s minos %s", n.OS, n.Arch, n.MacOS, tt.arch, tt.macOS)
			}
			perr := n.PolicyError()
			if (perr == nil) != (tt.policy == "") || (perr != nil && !strings.Contains(perr.Error(), tt.policy)) {
				t.Errorf("PolicyError = %v, want %q", perr, tt.policy)
			}
			tag, err := Tag([]Need{n})
			switch {
			case tt.policy != "":
				if err == nil {
					t.Errorf("Tag = %q despite the policy problem", tag)
				}
			case tt.tag == "":
				if err == nil || !strings.Contains(err.Error(), "no minimum macOS") {
					t.Errorf("Tag = %q, %v; want an error about the missing minimum macOS", tag, err)
				}
			case err != nil || tag != tt.tag:
				t.Errorf("Tag = %q, %v; want %q", tag, err, tt.tag)
			}
		})
	}
}

func TestInspectPE(t *testing.T) {
	for _, tt := range []struct {
		machine uint16
		arch    string
		tag     string
	}{
		{pe.IMAGE_FILE_MACHINE_AMD64, "amd64", "win_amd64"},
		{pe.IMAGE_FILE_MACHINE_ARM64, "arm64", "win_arm64"},
	} {
		n, err := InspectReader("x.pyd", bytes.NewReader(minimalPE(tt.machine)))
		if err != nil {
			t.Fatal(err)
		}
		if tag, err := Tag([]Need{n}); n.Arch != tt.arch || err != nil || tag != tt.tag {
			t.Errorf("machine %#x: arch %s, Tag %q, %v; want %s, %s", tt.machine, n.Arch, tag, err, tt.arch, tt.tag)
		}
	}
	if _, err := InspectReader("x.pyd", bytes.NewReader(minimalPE(pe.IMAGE_FILE_MACHINE_ARMNT))); err == nil || !strings.Contains(err.Error(), "unsupported PE machine") {
		t.Errorf("ARMNT PE: %v", err)
	}
}

func TestInspectNotBinary(t *testing.T) {
	elfFile := elfSpec{interp: glibcLoader, needed: []string{"libc.so.6"}, verneed: []elfVerneed{glibcLib(ver("GLIBC_2.34", "pthread_create"))}}.build()
	notBinary := map[string][]byte{
		"empty":      nil,
		"short":      []byte("ab"),
		"text":       []byte("hello, world\nthis is text\n"),
		"script":     []byte("#!/bin/sh\nexec python3 -m foo \"$@\"\n"),
		"java class": append([]byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52}, make([]byte, 64)...),
		"zip":        []byte("PK\x03\x04\x14\x00\x00\x00"),
	}
	for name, data := range notBinary {
		if _, err := InspectReader(name, bytes.NewReader(data)); !errors.Is(err, ErrNotBinary) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want ErrNotBinary naming the file", name, err)
		}
	}
	malformed := map[string][]byte{
		"ELF magic only":    []byte("\x7fELF"),
		"ELF header only":   elfFile[:64],
		"Mach-O magic":      []byte{0xcf, 0xfa, 0xed, 0xfe, 1, 2, 3, 4},
		"fat garbage":       {0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2, 1, 2, 3},
		"fat 64":            {0xca, 0xfe, 0xba, 0xbf, 0, 0, 0, 1, 1, 2, 3},
		"DOS executable":    append([]byte("MZ"), make([]byte, 100)...),
		"PE without header": minimalPE(pe.IMAGE_FILE_MACHINE_AMD64)[:0x50],
	}
	for name, data := range malformed {
		if _, err := InspectReader(name, bytes.NewReader(data)); err == nil || errors.Is(err, ErrNotBinary) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want a malformed-binary error naming the file", name, err)
		}
	}
	// Every truncation of a valid ELF, Mach-O and fat file fails cleanly.
	for name, data := range map[string][]byte{
		"elf":   elfFile,
		"macho": machoSpec{cmds: [][]byte{buildVersion(1, 11, 0, 0)}, dylib: []string{"/usr/lib/libSystem.B.dylib"}}.build(),
		"fat":   fat(machoSpec{cmds: [][]byte{buildVersion(1, 10, 9, 0)}}.build(), machoSpec{cpu: macho.CpuArm64, cmds: [][]byte{buildVersion(1, 11, 0, 0)}}.build()),
	} {
		for k := 4; k < len(data); k++ {
			if _, err := InspectReader(name, bytes.NewReader(data[:k])); err == nil {
				t.Errorf("%s truncated to %d bytes: no error", name, k)
			}
		}
	}
	if _, err := Inspect("/nonexistent/file"); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Inspect(missing) = %v", err)
	}
}

// TestSatisfiesNamesTheLoadCommand checks that a macOS tag lower than a
// binary needs is refused naming the binary and the load command that says
// so.
func TestSatisfiesNamesTheLoadCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"LC_BUILD_VERSION", machoSpec{cpu: macho.CpuArm64, cmds: [][]byte{buildVersion(1, 13, 0, 0)}}.build(),
			"lib/libvexl.dylib: needs macOS 13.0 (minos of LC_BUILD_VERSION), which takes macosx_13_0, but macosx_12_0_arm64 claims only macOS 12.0"},
		{"LC_VERSION_MIN_MACOSX", machoSpec{cpu: macho.CpuArm64, cmds: [][]byte{versionMin(lcVersionMinMacOSX, 13, 0, 0)}}.build(),
			"lib/libvexl.dylib: needs macOS 13.0 (minos of LC_VERSION_MIN_MACOSX)"},
		{"fat, the arm64 slice", fat(machoSpec{cmds: [][]byte{buildVersion(1, 10, 13, 0)}}.build(), machoSpec{cpu: macho.CpuArm64, cmds: [][]byte{buildVersion(1, 13, 0, 0)}}.build()),
			"lib/libvexl.dylib: needs macOS 13.0 (minos of LC_BUILD_VERSION)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := InspectReader("lib/libvexl.dylib", bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			tag := "macosx_12_0_arm64"
			if n.Arch == "universal2" {
				tag = "macosx_12_0_universal2"
			}
			err = Satisfies(tag, []Need{n})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Satisfies(%s) = %v, want an error with %q", tag, err, tc.want)
			}
		})
	}
}
