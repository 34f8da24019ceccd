// Package platform reads what native binaries need of the system they run
// on and turns that into a wheel platform tag that never claims less.
//
// # Inspecting a binary
//
// [Inspect] and [InspectReader] recognise a file by its magic bytes: ELF
// (Linux), Mach-O, thin or fat (macOS), and PE (Windows). Any other file
// gives [ErrNotBinary]; a file that starts like a binary but does not parse
// gives a different error, so a damaged binary is never mistaken for data.
// The parsers use only debug/elf, debug/macho and debug/pe plus bounds-checked
// reads of raw load commands; they do not panic on hostile input.
//
// # Linux (PEP 600 manylinux, PEP 656 musllinux)
//
//   - Architecture from e_machine: EM_X86_64 → x86_64, EM_386 → i686,
//     EM_AARCH64 → aarch64, EM_PPC64 (little-endian only) → ppc64le,
//     EM_S390 (64-bit) → s390x, EM_ARM → armv7l (a dynamically linked
//     binary must use the hard-float EABI), EM_RISCV (64-bit) → riscv64,
//     EM_LOONGARCH (64-bit) → loongarch64. x32, ILP32, big-endian ppc64
//     and soft-float ARM have no wheel tag and are refused.
//   - The C library: PT_INTERP ld-musl-* (or DT_NEEDED libc.so) means musl;
//     ld-linux*/ld64.so* (or DT_NEEDED libc.so.6, or any GLIBC_ symbol
//     version) means glibc. No PT_INTERP and no DT_NEEDED means a static
//     binary, which needs nothing.
//   - glibc: the tag's version is the highest GLIBC_x.y[.z] version the
//     binary references in .gnu.version_r (a x.y.z version rounds up to
//     x.y+1, since release x.y may lack it). glibc's ABI markers count too:
//     GLIBC_ABI_DT_RELR needs 2.36; GLIBC_ABI_GNU_TLS, GLIBC_ABI_GNU2_TLS and
//     GLIBC_ABI_DT_X86_64_PLT need 2.43 (the first policies listing them).
//     GLIBC_PRIVATE, or an unknown GLIBC_ABI_ marker, cannot be packaged
//     portably and is a policy error.
//   - The C++ runtime and friends: GLIBCXX_, CXXABI_, GCC_, ZLIB_ and
//     LIBATOMIC_ versions raise the tag to the oldest manylinux policy whose
//     symbol_versions for that architecture allow them (an embedded table of
//     the highest version per policy and architecture); a version newer than
//     every known policy is a policy error.
//   - musl has no symbol versions, so nothing in the binary tells which musl
//     it needs: a musl binary is tagged musllinux_1_2 (the version every
//     current musllinux build image ships; musl 1.2 changed time_t to 64 bits
//     on 32-bit targets, so 1.1 cannot be assumed) and a configured
//     musllinux_1_1 tag is refused.
//   - External libraries: every DT_NEEDED must be on the policy's allowlist
//     or be provided by another binary in the same set (matched by its
//     DT_SONAME, else its file name), i.e. bundled in the wheel. The
//     manylinux allowlist is libc.so.6, libm.so.6, libpthread.so.0,
//     libdl.so.2, librt.so.1, libutil.so.1, libnsl.so.1, libanl.so.1,
//     libresolv.so.2, libgcc_s.so.1, libstdc++.so.6, libatomic.so.1,
//     libz.so.1, libX11.so.6, libXext.so.6, libXrender.so.1, libICE.so.6,
//     libSM.so.6, libGL.so.1, libgobject-2.0.so.0, libgthread-2.0.so.0 and
//     libglib-2.0.so.0, plus libexpat.so.1 from manylinux_2_12 and
//     libmvec.so.1 from manylinux_2_24 (which raise the tag), plus the
//     dynamic loader (ld-linux*, ld64.so*). PEP 513's libcrypt.so.1 is not
//     on it: auditwheel dropped it when distributions replaced it with
//     libxcrypt. The musllinux allowlist is libc.so and libz.so.1. Anything
//     else is a policy error: bundle it in the wheel or link it statically.
//
// The policy data (allowlists and symbol versions) follows auditwheel's
// manylinux-policy.json and musllinux-policy.json as of auditwheel commit
// 2d1ad6396bff90cfff09321a4a4480b3955fe6a5 (policies manylinux_2_5 through
// manylinux_2_43). The per-symbol blacklists of that file are not
// enforced: the libc and libpthread entries are symbols versioned
// GLIBC_2.18, which the GLIBC_ check already keeps out of the policies that
// ban them, and the libz entries are zlib internals that code using zlib's
// public API does not import.
//
// The tag for glibc binaries is manylinux_<major>_<minor>_<arch>, taking the
// highest need over every binary and never going below the floor
// (manylinux_2_17 by default, see [Options]) nor below the oldest policy
// that defines the architecture (2.17 for aarch64, ppc64le, s390x and
// armv7l; 2.31 for riscv64; 2.36 for loongarch64). When the version is 2.5,
// 2.12 or 2.17 the legacy alias (manylinux1, manylinux2010, manylinux2014)
// is added as a compressed tag set so that installers older than PEP 600
// accept the wheel. A set of only static binaries needs nothing but a Linux
// kernel and gets both families:
//
//	manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64
//
// The floor is 2.17 (manylinux2014) because it is the oldest version with a
// policy for each of x86_64, i686, aarch64, ppc64le, s390x and armv7l
// (glibc 2.17 is the first release with aarch64), so one floor gives the
// same tag on every common architecture; because installers have matched
// manylinux2014 since pip 19.3; and because the distributions with an older
// glibc (CentOS 6 and before) went out of support in 2020: a lower claim
// wins no users and advertises systems nobody builds or tests on.
//
// # macOS
//
// The architecture comes from the Mach-O CPU type (x86_64, arm64); a fat
// file with both is universal2. The minimum macOS is the minos of
// LC_BUILD_VERSION for platform MACOS (debug/macho does not decode that
// command, so its raw bytes are read; the version is encoded xxxx.yy.zz in
// nibbles), or LC_VERSION_MIN_MACOSX for old binaries. A binary built only
// for another Apple platform (iOS, Mac Catalyst, ...) is refused. For
// macOS 11 and later a tag has minor 0 (macosx_11_0_arm64), since
// installers only generate X_0 tags for those releases; so a minos of 11.3
// must claim macosx_12_0, and a 10.x.z minos with z > 0 claims 10.(x+1).
// Every arm64 Mac runs macOS 11 or later, so in a universal2 binary an
// arm64 slice with minos 11.0 does not raise the tag: a universal2 binary
// whose x86_64 slice needs 10.13 is macosx_10_13_universal2. A Mach-O
// binary that links a dylib by an absolute path outside /usr/lib and
// /System is a policy error: bundle it (for instance with delocate). Over a
// set of binaries the tag takes the highest version and the architectures
// every binary has: universal2 only if all are universal2, arm64 (at least
// macosx_11_0) or x86_64 if all have that slice, an error naming them
// otherwise. Slices for other CPUs (i386, PowerPC) are ignored, and a
// binary that records no minimum macOS gets no tag.
//
// # Windows
//
// The PE machine gives the tag: AMD64 → win_amd64, ARM64 → win_arm64,
// I386 → win32. The imported DLLs are listed in [Need.Needed] but not
// judged: Windows has no policy saying which DLLs a wheel may expect.
package platform
