package platform

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// The manylinux policies, condensed from auditwheel's manylinux-policy.json
// at commit 2d1ad6396bff90cfff09321a4a4480b3955fe6a5 (manylinux_2_5 through
// manylinux_2_43). For each policy: the architectures it defines, and the
// highest version it allows of each versioned family other than GLIBC
// (GLIBC itself is the policy's name). A family missing from a spec allows
// no version at all. The policy files list every allowed version; within a
// family and architecture those lists are contiguous from the oldest, so
// the highest one stands for the list. "base" holds for every architecture
// of the policy except those given in "arch".
type manylinuxPolicy struct {
	glibc  int // manylinux_2_<glibc>
	arches string
	base   string
	arch   []archSpec
}

type archSpec struct{ arch, spec string }

const (
	x86        = "i686 x86_64"
	arches2014 = "i686 x86_64 aarch64 ppc64 ppc64le s390x armv7l"
	arches2024 = "i686 x86_64 aarch64 ppc64le s390x armv7l"
	arches2031 = arches2024 + " riscv64"
	arches2036 = arches2031 + " loongarch64"
)

var manylinuxPolicies = [...]manylinuxPolicy{
	{5, x86, "GLIBCXX=3.4.8 CXXABI=1.3.1 GCC=4.2.0", nil},
	{12, x86, "GLIBCXX=3.4.13 CXXABI=1.3.3 GCC=4.3.0 ZLIB=1.2.2.4", []archSpec{
		{"i686", "GLIBCXX=3.4.13 CXXABI=1.3.3 GCC=4.5.0 ZLIB=1.2.2.4"},
	}},
	{17, arches2014, "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.8.0 ZLIB=1.2.5.2 LIBATOMIC=1.0", []archSpec{
		{"x86_64", "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.8.0 ZLIB=1.2.5.2"},
		{"aarch64", "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.0"},
		{"ppc64le", "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.0"},
		{"s390x", "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.7.0 ZLIB=1.2.5.2"},
		{"armv7l", "GLIBCXX=3.4.19 CXXABI=1.3.7 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.0"},
	}},
	{24, arches2024, "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.8.0 ZLIB=1.2.5.2 LIBATOMIC=1.2", []archSpec{
		{"aarch64", "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
		{"ppc64le", "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
		{"s390x", "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
		{"armv7l", "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.7.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
	}},
	{26, arches2024, "GLIBCXX=3.4.24 CXXABI=1.3.11 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", []archSpec{
		{"x86_64", "GLIBCXX=3.4.22 CXXABI=1.3.10 GCC=4.8.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
		{"aarch64", "GLIBCXX=3.4.24 CXXABI=1.3.11 GCC=7.0.0 ZLIB=1.2.5.2 LIBATOMIC=1.2"},
	}},
	{27, arches2024, "GLIBCXX=3.4.24 CXXABI=1.3.11 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", nil},
	{28, arches2024, "GLIBCXX=3.4.24 CXXABI=1.3.11 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", nil},
	{31, arches2031, "GLIBCXX=3.4.28 CXXABI=1.3.12 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", nil},
	{34, arches2031, "GLIBCXX=3.4.29 CXXABI=1.3.13 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", []archSpec{
		{"aarch64", "GLIBCXX=3.4.29 CXXABI=1.3.13 GCC=11.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
	}},
	{35, arches2031, "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", []archSpec{
		{"i686", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
		{"x86_64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
		{"aarch64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=11.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
	}},
	{36, arches2036, "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=7.0.0 ZLIB=1.2.9 LIBATOMIC=1.2", []archSpec{
		{"i686", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"x86_64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
		{"aarch64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=11.0 ZLIB=1.2.9 LIBATOMIC=1.2"},
	}},
	{37, arches2036, "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=7.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", []archSpec{
		{"i686", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"x86_64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"aarch64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=11.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
	}},
	{38, arches2036, "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=7.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", []archSpec{
		{"i686", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"x86_64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=12.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"aarch64", "GLIBCXX=3.4.30 CXXABI=1.3.13 GCC=11.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
	}},
	{39, arches2036, "GLIBCXX=3.4.33 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", []archSpec{
		{"loongarch64", "GLIBCXX=3.4.32 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
	}},
	{40, arches2036, "GLIBCXX=3.4.33 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", nil},
	{41, arches2036, "GLIBCXX=3.4.33 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", nil},
	{42, arches2031, "GLIBCXX=3.4.34 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", []archSpec{
		{"riscv64", "GLIBCXX=3.4.34 CXXABI=1.3.16 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
	}},
	{43, arches2031, "GLIBCXX=3.4.34 CXXABI=1.3.15 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2", []archSpec{
		{"ppc64le", "GLIBCXX=3.4.35 CXXABI=1.3.17 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"s390x", "GLIBCXX=3.4.35 CXXABI=1.3.17 GCC=16.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"armv7l", "GLIBCXX=3.4.35 CXXABI=1.3.17 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
		{"riscv64", "GLIBCXX=3.4.34 CXXABI=1.3.16 GCC=14.0.0 ZLIB=1.2.12 LIBATOMIC=1.2"},
	}},
}

// specialVersions are non-numeric versions of the families above, with the
// oldest policy that allows them.
var specialVersions = [...]struct {
	name  string
	glibc int
}{
	{"CXXABI_TM_1", 17},
	{"CXXABI_FLOAT128", 24},
}

// newestPolicy is the newest manylinux policy the table knows.
func newestPolicy() Version {
	return Version{2, manylinuxPolicies[len(manylinuxPolicies)-1].glibc, 0}
}

// defines reports whether the policy defines the architecture.
func (p manylinuxPolicy) defines(arch string) bool {
	for _, a := range strings.Fields(p.arches) {
		if a == arch {
			return true
		}
	}
	return false
}

// allows reports whether the policy, on arch, allows version of family.
func (p manylinuxPolicy) allows(arch, family string, version []int) bool {
	spec := p.base
	for _, s := range p.arch {
		if s.arch == arch {
			spec = s.spec
		}
	}
	for _, kv := range strings.Fields(spec) {
		k, v, _ := strings.Cut(kv, "=")
		if k != family {
			continue
		}
		max, _ := parseDotted(v)
		return compareDotted(version, max) <= 0
	}
	return false
}

// archFloor is the oldest policy that defines arch: no manylinux tag is
// older for that architecture.
func archFloor(arch string) (Version, bool) {
	for _, p := range manylinuxPolicies {
		if p.defines(arch) {
			return Version{2, p.glibc, 0}, true
		}
	}
	return Version{}, false
}

// versionFloor returns the oldest manylinux policy that allows ref on arch.
// It returns an error (naming nothing but the reference) for references
// that no policy allows.
func versionFloor(arch string, ref VersionRef) (Version, error) {
	if strings.HasPrefix(ref.Name, "GLIBC_") {
		if ref.Name == "GLIBC_PRIVATE" {
			return Version{}, fmt.Errorf("uses the private glibc interface %s: it changes between glibc releases, so the binary cannot be packaged portably", ref)
		}
		if v, ok := glibcRelease(ref.Name); ok {
			return v, nil
		}
		return Version{}, fmt.Errorf("needs %s, which no manylinux policy known to this release defines", ref)
	}
	family, rest, ok := strings.Cut(ref.Name, "_")
	switch family {
	case "GLIBCXX", "CXXABI", "GCC", "ZLIB", "LIBATOMIC":
	default:
		ok = false
	}
	if !ok {
		return Version{}, fmt.Errorf("needs %s, a symbol version no manylinux policy lists", ref)
	}
	for _, s := range specialVersions {
		if s.name == ref.Name {
			return Version{2, s.glibc, 0}, nil
		}
	}
	// Long-double and IEEE-128 variants (LDBL_3.4.21, IEEE128_3.4.29) and
	// ARM_1.3.3 appear in the policies alongside the plain version they
	// name, so they are judged by that number.
	for _, prefix := range [...]string{"LDBL_", "IEEE128_", "ARM_"} {
		rest = strings.TrimPrefix(rest, prefix)
	}
	version, ok := parseDotted(rest)
	if !ok {
		return Version{}, fmt.Errorf("needs %s, a symbol version no manylinux policy lists", ref)
	}
	for _, p := range manylinuxPolicies {
		if p.defines(arch) && p.allows(arch, family, version) {
			return Version{2, p.glibc, 0}, nil
		}
	}
	return Version{}, fmt.Errorf("needs %s, newer than any manylinux policy known to this release allows on %s (up to manylinux_%d_%d)", ref, arch, newestPolicy().Major, newestPolicy().Minor)
}

// The external libraries a manylinux wheel may link without bundling them,
// with the oldest policy that allows each (auditwheel's lib_whitelist, same
// commit as the table above).
var manylinuxLibraries = [...]struct {
	soname string
	glibc  int
}{
	{"libc.so.6", 5}, {"libm.so.6", 5}, {"libpthread.so.0", 5},
	{"libdl.so.2", 5}, {"librt.so.1", 5}, {"libutil.so.1", 5},
	{"libnsl.so.1", 5}, {"libanl.so.1", 5}, {"libresolv.so.2", 5},
	{"libgcc_s.so.1", 5}, {"libstdc++.so.6", 5}, {"libatomic.so.1", 5},
	{"libz.so.1", 5},
	{"libX11.so.6", 5}, {"libXext.so.6", 5}, {"libXrender.so.1", 5},
	{"libICE.so.6", 5}, {"libSM.so.6", 5}, {"libGL.so.1", 5},
	{"libgobject-2.0.so.0", 5}, {"libgthread-2.0.so.0", 5}, {"libglib-2.0.so.0", 5},
	{"libexpat.so.1", 12},
	{"libmvec.so.1", 24},
}

// musllinuxLibraries is musllinux's allowlist (musllinux-policy.json).
var musllinuxLibraries = [...]string{"libc.so", "libz.so.1"}

// isLoader reports whether lib is the glibc dynamic loader, which a binary
// may name in DT_NEEDED and every glibc system has.
func isLoader(lib string) bool {
	return strings.HasPrefix(lib, "ld-linux") || strings.HasPrefix(lib, "ld64.so.") || strings.HasPrefix(lib, "ld.so.")
}

// libraryFloor returns the oldest manylinux policy that allows lib, and
// whether any does.
func libraryFloor(lib string) (Version, bool) {
	if isLoader(lib) {
		return Version{2, 5, 0}, true
	}
	for _, l := range manylinuxLibraries {
		if l.soname == lib {
			return Version{2, l.glibc, 0}, true
		}
	}
	return Version{}, false
}

func musllinuxAllows(lib string) bool {
	for _, l := range musllinuxLibraries {
		if l == lib {
			return true
		}
	}
	return false
}

// provider identifies a binary as a library other binaries may load: its
// DT_SONAME, else its file's base name.
func (n Need) provider() string {
	if n.Soname != "" {
		return n.Soname
	}
	return path.Base(strings.ReplaceAll(n.File, "\\", "/"))
}

// bundledSet returns the libraries a set of binaries provides itself.
func bundledSet(needs []Need) map[string]bool {
	m := map[string]bool{}
	for _, n := range needs {
		if n.OS == Linux {
			m[n.provider()] = true
		}
	}
	return m
}

// PolicyError reports what in this binary no platform policy allows,
// whatever the tag: a library outside the manylinux or musllinux allowlist,
// a private or unknown glibc interface, a C++ runtime version newer than
// every known policy, a macOS dylib linked from outside the system. It
// returns nil if there is nothing. It judges the binary alone; [CheckPolicy],
// [Tag] and [Satisfies] also accept libraries that the set provides itself.
func (n Need) PolicyError() error {
	return errors.Join(n.policyProblems(nil)...)
}

// CheckPolicy is [Need.PolicyError] over a set of binaries that ship
// together (a wheel): a library that one of them provides (by DT_SONAME,
// else file name) is bundled, so others may link it.
func CheckPolicy(needs []Need) error {
	bundled := bundledSet(needs)
	var errs []error
	for _, n := range needs {
		errs = append(errs, n.policyProblems(bundled)...)
	}
	return errors.Join(errs...)
}

func (n Need) policyProblems(bundled map[string]bool) []error {
	var errs []error
	switch n.OS {
	case Linux:
		for _, lib := range n.Needed {
			if bundled[lib] {
				continue
			}
			switch n.Libc {
			case Musl:
				if !musllinuxAllows(lib) {
					errs = append(errs, fmt.Errorf("%s: links %s, which the musllinux policy does not allow: bundle it in the wheel or link it statically", n.File, lib))
				}
			default:
				if _, ok := libraryFloor(lib); !ok {
					errs = append(errs, fmt.Errorf("%s: links %s, which the manylinux policy does not allow: bundle it in the wheel or link it statically", n.File, lib))
				}
			}
		}
		for _, ref := range n.Versions {
			if bundled[ref.Library] {
				continue
			}
			if _, ok := libraryFloor(ref.Library); !ok && !strings.HasPrefix(ref.Name, "GLIBC_") {
				continue // the library itself is reported above
			}
			if n.Libc == Musl {
				// musl defines no symbol versions; a versioned reference
				// names a library that is itself reported above.
				continue
			}
			if _, err := versionFloor(n.Arch, ref); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n.File, err))
			}
		}
	case MacOS:
		for _, lib := range n.Needed {
			if strings.HasPrefix(lib, "/") && !strings.HasPrefix(lib, "/usr/lib/") && !strings.HasPrefix(lib, "/System/") {
				errs = append(errs, fmt.Errorf("%s: links %s, which is not part of macOS: bundle it in the wheel (e.g. with delocate) and load it through @loader_path or @rpath", n.File, lib))
			}
		}
	}
	return errs
}

// manylinuxFloor is the oldest manylinux version (glibc major.minor) that
// satisfies n on its architecture: its GLIBC_ versions, its other symbol
// versions and its libraries. ref describes what sets it, for messages.
func (n Need) manylinuxFloor(bundled map[string]bool) (floor Version, why string) {
	if !n.Glibc.IsZero() {
		floor = n.Glibc
		why = "glibc " + n.Glibc.String()
		if r, ok := n.glibcRef(); ok {
			why += " (" + r.String() + ")"
		}
	}
	for _, ref := range n.Versions {
		if bundled[ref.Library] || strings.HasPrefix(ref.Name, "GLIBC_") {
			continue
		}
		if v, err := versionFloor(n.Arch, ref); err == nil && v.Compare(floor) > 0 {
			floor, why = v, fmt.Sprintf("manylinux_%d_%d (%s)", v.Major, v.Minor, ref)
		}
	}
	for _, lib := range n.Needed {
		if bundled[lib] {
			continue
		}
		if v, ok := libraryFloor(lib); ok && v.Compare(floor) > 0 {
			floor, why = v, fmt.Sprintf("manylinux_%d_%d (to link %s)", v.Major, v.Minor, lib)
		}
	}
	return floor, why
}

// glibcRef returns the GLIBC_ version reference that sets n.Glibc.
func (n Need) glibcRef() (VersionRef, bool) {
	for _, r := range n.Versions {
		if v, ok := glibcRelease(r.Name); ok && v == n.Glibc && r.Symbol == n.GlibcSymbol {
			return r, true
		}
	}
	for _, r := range n.Versions {
		if v, ok := glibcRelease(r.Name); ok && v == n.Glibc {
			return r, true
		}
	}
	return VersionRef{}, false
}
