package platform

import (
	"strings"
	"testing"
)

// Shorthands for needs built by hand.
func glibcNeed(file, arch string, v Version, sym string, extra ...VersionRef) Need {
	n := Need{File: file, OS: Linux, Arch: arch, Libc: Glibc, Glibc: v, GlibcSymbol: sym, Needed: []string{"libc.so.6"}}
	if !v.IsZero() {
		n.Versions = append(n.Versions, VersionRef{"libc.so.6", "GLIBC_" + v.String(), sym})
	}
	for _, r := range extra {
		n.Versions = append(n.Versions, r)
		n.Needed = appendUnique(n.Needed, r.Library)
	}
	return n
}

func staticNeed(file, arch string) Need { return Need{File: file, OS: Linux, Arch: arch} }

func muslNeed(file, arch string) Need {
	return Need{File: file, OS: Linux, Arch: arch, Libc: Musl, Needed: []string{"libc.so"}}
}

func macNeed(file, arch string, v Version) Need {
	return Need{File: file, OS: MacOS, Arch: arch, MacOS: v}
}

func winNeed(file, arch string) Need { return Need{File: file, OS: Windows, Arch: arch} }

func v2(minor int) Version { return Version{2, minor, 0} }

func cxx(name, sym string) VersionRef { return VersionRef{"libstdc++.so.6", name, sym} }

func TestTag(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		needs []Need
		want  string
		err   []string // substrings of the error; nil for success
	}{
		{name: "no binaries", want: "any"},
		{name: "highest glibc wins", needs: []Need{
			glibcNeed("a.so", "x86_64", v2(28), "statx"),
			glibcNeed("b.so", "x86_64", v2(31), "pidfd_open"),
			staticNeed("tool", "x86_64"),
		}, want: "manylinux_2_31_x86_64"},
		{name: "below the floor", needs: []Need{glibcNeed("a.so", "x86_64", v2(5), "malloc")},
			want: "manylinux_2_17_x86_64.manylinux2014_x86_64"},
		{name: "floor 2.5 gives manylinux1", opts: Options{Floor: v2(5)}, needs: []Need{glibcNeed("a.so", "x86_64", v2(5), "malloc")},
			want: "manylinux_2_5_x86_64.manylinux1_x86_64"},
		{name: "floor 2.12 gives manylinux2010", opts: Options{Floor: v2(12)}, needs: []Need{glibcNeed("a.so", "i686", v2(3), "malloc")},
			want: "manylinux_2_12_i686.manylinux2010_i686"},
		{name: "aarch64 has no policy before 2.17", opts: Options{Floor: v2(5)}, needs: []Need{glibcNeed("a.so", "aarch64", v2(17), "abort")},
			want: "manylinux_2_17_aarch64.manylinux2014_aarch64"},
		{name: "riscv64 has no policy before 2.31", needs: []Need{glibcNeed("a.so", "riscv64", v2(27), "abort")},
			want: "manylinux_2_31_riscv64"},
		{name: "floor above the need", opts: Options{Floor: v2(28)}, needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort")},
			want: "manylinux_2_28_x86_64"},
		{name: "bad floor", opts: Options{Floor: Version{3, 1, 0}}, needs: []Need{staticNeed("a", "x86_64")}, err: []string{"floor 3.1"}},
		{name: "static only", needs: []Need{staticNeed("a", "aarch64"), staticNeed("b", "aarch64")},
			want: "manylinux_2_17_aarch64.manylinux2014_aarch64.musllinux_1_2_aarch64"},
		{name: "musl", needs: []Need{muslNeed("a.so", "x86_64"), staticNeed("tool", "x86_64")}, want: "musllinux_1_2_x86_64"},
		{name: "GLIBCXX_3.4.30 needs manylinux_2_35", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", cxx("GLIBCXX_3.4.30", "_ZSt28__throw_bad_array_new_lengthv"))},
			want: "manylinux_2_35_x86_64"},
		{name: "CXXABI_1.3.15 needs manylinux_2_39", needs: []Need{glibcNeed("a.so", "aarch64", v2(17), "abort", cxx("CXXABI_1.3.15", "__cxa_x"))},
			want: "manylinux_2_39_aarch64"},
		{name: "CXXABI_TM_1 is in manylinux2014", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", cxx("CXXABI_TM_1", "_ITM_x"))},
			want: "manylinux_2_17_x86_64.manylinux2014_x86_64"},
		{name: "CXXABI_FLOAT128 needs manylinux_2_24", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", cxx("CXXABI_FLOAT128", "_ZTIg"))},
			want: "manylinux_2_24_x86_64"},
		{name: "LDBL_ variants by their number", needs: []Need{glibcNeed("a.so", "ppc64le", v2(17), "abort", cxx("GLIBCXX_LDBL_3.4.21", "_ZNKSt7__cxx11x"))},
			want: "manylinux_2_24_ppc64le"},
		{name: "GCC_7.0.0: 2_27 on x86_64 (2_26 lacks it there)", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", VersionRef{"libgcc_s.so.1", "GCC_7.0.0", "__divmodti4"})},
			want: "manylinux_2_27_x86_64"},
		{name: "GCC_7.0.0: 2_26 on aarch64", needs: []Need{glibcNeed("a.so", "aarch64", v2(17), "abort", VersionRef{"libgcc_s.so.1", "GCC_7.0.0", "__divmodti4"})},
			want: "manylinux_2_26_aarch64"},
		{name: "GCC_4.8.0 is in manylinux2014 on x86_64", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", VersionRef{"libgcc_s.so.1", "GCC_4.8.0", "__cpu_indicator_init"})},
			want: "manylinux_2_17_x86_64.manylinux2014_x86_64"},
		{name: "LIBATOMIC_1.0: 2_24 on x86_64", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", VersionRef{"libatomic.so.1", "LIBATOMIC_1.0", "__atomic_load_16"})},
			want: "manylinux_2_24_x86_64"},
		{name: "LIBATOMIC_1.0: 2_17 on aarch64", needs: []Need{glibcNeed("a.so", "aarch64", v2(17), "abort", VersionRef{"libatomic.so.1", "LIBATOMIC_1.0", "__atomic_load_16"})},
			want: "manylinux_2_17_aarch64.manylinux2014_aarch64"},
		{name: "ZLIB_1.2.9: 2_27 on x86_64, 2_26 on i686", needs: []Need{glibcNeed("a.so", "i686", v2(17), "abort", VersionRef{"libz.so.1", "ZLIB_1.2.9", "inflateValidate"})},
			want: "manylinux_2_26_i686"},
		{name: "libexpat needs manylinux2010", opts: Options{Floor: v2(5)}, needs: []Need{{File: "a.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libexpat.so.1", "libc.so.6"}}},
			want: "manylinux_2_12_x86_64.manylinux2010_x86_64"},
		{name: "libmvec needs manylinux_2_24", needs: []Need{{File: "a.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libmvec.so.1", "libc.so.6"}}},
			want: "manylinux_2_24_x86_64"},
		{name: "bundled library by soname", needs: []Need{
			{File: "pkg/_ext.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libfoo.so.1", "libc.so.6"},
				Versions: []VersionRef{{"libfoo.so.1", "FOO_1.0", "foo_init"}}},
			{File: "pkg.libs/libfoo-1a2b3c.so.1", Soname: "libfoo.so.1", OS: Linux, Arch: "x86_64", Libc: Glibc, Glibc: v2(28), Needed: []string{"libc.so.6"}},
		}, want: "manylinux_2_28_x86_64"},
		{name: "bundled library by file name", needs: []Need{
			{File: "pkg/_ext.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libbar.so", "libc.so.6"}},
			{File: "pkg/libbar.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libc.so.6"}},
		}, want: "manylinux_2_17_x86_64.manylinux2014_x86_64"},
		{name: "external library", needs: []Need{{File: "pkg/_ext.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libfoo.so.1"}}},
			err: []string{"pkg/_ext.so", "libfoo.so.1", "bundle it in the wheel or link it statically"}},
		{name: "GLIBC_PRIVATE", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", VersionRef{"libc.so.6", "GLIBC_PRIVATE", "__libc_x"})},
			err: []string{"a.so", "GLIBC_PRIVATE via __libc_x", "cannot be packaged portably"}},
		{name: "OS disagreement", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort"), macNeed("b.dylib", "x86_64", Version{11, 0, 0})},
			err: []string{"operating system", "linux: a.so", "macos: b.dylib"}},
		{name: "arch disagreement", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort"), glibcNeed("b.so", "aarch64", v2(17), "abort"), staticNeed("c", "x86_64")},
			err: []string{"architecture", "aarch64: b.so", "x86_64: a.so, c"}},
		{name: "libc disagreement", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort"), muslNeed("b.so", "x86_64")},
			err: []string{"C library", "glibc: a.so", "musl: b.so"}},
		{name: "macOS highest minos", needs: []Need{macNeed("a.so", "x86_64", Version{10, 13, 0}), macNeed("b.so", "x86_64", Version{10, 15, 0})},
			want: "macosx_10_15_x86_64"},
		{name: "macOS universal2 with x86_64", needs: []Need{macNeed("a.so", "universal2", Version{10, 13, 0}), macNeed("b.so", "x86_64", Version{10, 9, 0})},
			want: "macosx_10_13_x86_64"},
		{name: "macOS universal2 with arm64", needs: []Need{macNeed("a.so", "universal2", Version{10, 13, 0}), macNeed("b.so", "arm64", Version{11, 0, 0})},
			want: "macosx_11_0_arm64"},
		{name: "macOS all universal2", needs: []Need{macNeed("a.so", "universal2", Version{10, 9, 0}), macNeed("b.so", "universal2", Version{10, 12, 0})},
			want: "macosx_10_12_universal2"},
		{name: "macOS 12.1 takes 13_0", needs: []Need{macNeed("a.so", "arm64", Version{12, 1, 0})}, want: "macosx_13_0_arm64"},
		{name: "macOS no shared arch", needs: []Need{macNeed("a.so", "x86_64", Version{11, 0, 0}), macNeed("b.so", "arm64", Version{11, 0, 0})},
			err: []string{"no architecture", "arm64: b.so", "x86_64: a.so"}},
		{name: "macOS unknown minos", needs: []Need{macNeed("a.so", "x86_64", Version{})}, err: []string{"a.so", "no minimum macOS"}},
		{name: "windows", needs: []Need{winNeed("a.pyd", "amd64"), winNeed("b.dll", "amd64")}, want: "win_amd64"},
		{name: "windows 32-bit", needs: []Need{winNeed("a.pyd", "win32")}, want: "win32"},
		{name: "windows arch disagreement", needs: []Need{winNeed("a.pyd", "amd64"), winNeed("b.pyd", "arm64")},
			err: []string{"architecture", "amd64: a.pyd", "arm64: b.pyd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.opts.Tag(tt.needs)
			if tt.err != nil {
				if err == nil {
					t.Fatalf("Tag = %q, want an error", got)
				}
				for _, s := range tt.err {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Tag = %q, %v; want %q", got, err, tt.want)
			}
			// The tag Tag chooses always satisfies the needs it came from.
			if err := Satisfies(got, tt.needs); err != nil {
				t.Errorf("Satisfies(%q): %v", got, err)
			}
		})
	}
}

func TestSatisfies(t *testing.T) {
	pthread := glibcNeed("pkg/_core.so", "x86_64", v2(34), "pthread_create")
	tests := []struct {
		name  string
		tag   string
		needs []Need
		err   []string // substrings; nil when accepted
	}{
		{name: "lower glibc refused", tag: "manylinux_2_17_x86_64", needs: []Need{pthread},
			err: []string{"pkg/_core.so", "glibc 2.34", "GLIBC_2.34 via pthread_create", "manylinux_2_17_x86_64", "claims only glibc 2.17"}},
		{name: "equal accepted", tag: "manylinux_2_34_x86_64", needs: []Need{pthread}},
		{name: "higher accepted", tag: "manylinux_2_39_x86_64", needs: []Need{pthread}},
		{name: "legacy alias understood", tag: "manylinux2014_x86_64", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "clock_gettime")}},
		{name: "legacy alias too low", tag: "manylinux2014_x86_64", needs: []Need{pthread}, err: []string{"manylinux2014_x86_64", "GLIBC_2.34"}},
		{name: "manylinux1 alias", tag: "manylinux1_x86_64", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "clock_gettime")}, err: []string{"claims only glibc 2.5"}},
		{name: "every tag of a set must hold", tag: "manylinux_2_34_x86_64.manylinux_2_17_x86_64", needs: []Need{pthread}, err: []string{"manylinux_2_17_x86_64"}},
		{name: "C++ runtime", tag: "manylinux_2_28_x86_64", needs: []Need{glibcNeed("a.so", "x86_64", v2(17), "abort", cxx("GLIBCXX_3.4.30", "_ZSt28__throw_bad_array_new_lengthv"))},
			err: []string{"a.so", "manylinux_2_35", "GLIBCXX_3.4.30 via _ZSt28__throw_bad_array_new_lengthv from libstdc++.so.6", "manylinux_2_28_x86_64"}},
		{name: "wrong arch", tag: "manylinux_2_34_aarch64", needs: []Need{pthread}, err: []string{"pkg/_core.so", "built for x86_64", "manylinux_2_34_aarch64"}},
		{name: "wrong OS", tag: "macosx_11_0_arm64", needs: []Need{pthread}, err: []string{"pkg/_core.so", "linux binary", "macos tag"}},
		{name: "glibc binary, musllinux tag", tag: "musllinux_1_2_x86_64", needs: []Need{pthread}, err: []string{"links glibc"}},
		{name: "musl binary, manylinux tag", tag: "manylinux_2_17_x86_64", needs: []Need{muslNeed("m.so", "x86_64")}, err: []string{"m.so", "links musl"}},
		{name: "musl binary, musllinux_1_1", tag: "musllinux_1_1_x86_64", needs: []Need{muslNeed("m.so", "x86_64")}, err: []string{"musl 1.2"}},
		{name: "static binary, both families", tag: "manylinux_2_17_x86_64.musllinux_1_1_x86_64", needs: []Need{staticNeed("tool", "x86_64")}},
		{name: "policy problem refused", tag: "manylinux_2_34_x86_64", needs: []Need{{File: "x.so", OS: Linux, Arch: "x86_64", Libc: Glibc, Needed: []string{"libfoo.so.1"}}}, err: []string{"x.so", "libfoo.so.1"}},
		{name: "any with binaries", tag: "any", needs: []Need{pthread}, err: []string{"pure-Python", "pkg/_core.so"}},
		{name: "any without binaries", tag: "any"},
		{name: "macOS lower refused", tag: "macosx_11_0_arm64", needs: []Need{macNeed("m.so", "arm64", Version{12, 0, 0})}, err: []string{"m.so", "macOS 12.0", "macosx_11_0_arm64", "claims only macOS 11.0"}},
		{name: "macOS universal2 tag, thin binary", tag: "macosx_11_0_universal2", needs: []Need{macNeed("m.so", "arm64", Version{11, 0, 0})}, err: []string{"m.so", "built for arm64", "needs x86_64"}},
		{name: "macOS universal2 binary, x86_64 tag", tag: "macosx_10_13_x86_64", needs: []Need{macNeed("m.so", "universal2", Version{10, 13, 0})}},
		{name: "windows", tag: "win_amd64", needs: []Need{winNeed("a.pyd", "amd64")}},
		{name: "windows wrong arch", tag: "win32", needs: []Need{winNeed("a.pyd", "amd64")}, err: []string{"a.pyd", "amd64", "win32"}},
		{name: "unparseable tag", tag: "linux_x86_64", needs: []Need{pthread}, err: []string{"not portable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Satisfies(tt.tag, tt.needs)
			if tt.err == nil {
				if err != nil {
					t.Fatalf("Satisfies: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Satisfies accepted it")
			}
			for _, s := range tt.err {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestParseTag(t *testing.T) {
	good := []struct {
		tag, canonical string
		want           Platform
	}{
		{"manylinux_2_17_x86_64", "", Platform{Linux, Glibc, v2(17), "x86_64"}},
		{"manylinux_2_35_aarch64", "", Platform{Linux, Glibc, v2(35), "aarch64"}},
		{"manylinux1_i686", "manylinux_2_5_i686", Platform{Linux, Glibc, v2(5), "i686"}},
		{"manylinux2010_x86_64", "manylinux_2_12_x86_64", Platform{Linux, Glibc, v2(12), "x86_64"}},
		{"manylinux2014_s390x", "manylinux_2_17_s390x", Platform{Linux, Glibc, v2(17), "s390x"}},
		{"musllinux_1_2_armv7l", "", Platform{Linux, Musl, Version{1, 2, 0}, "armv7l"}},
		{"macosx_10_9_x86_64", "", Platform{MacOS, "", Version{10, 9, 0}, "x86_64"}},
		{"macosx_11_0_arm64", "", Platform{MacOS, "", Version{11, 0, 0}, "arm64"}},
		{"macosx_10_13_universal2", "", Platform{MacOS, "", Version{10, 13, 0}, "universal2"}},
		{"win_amd64", "", Platform{Windows, "", Version{}, "amd64"}},
		{"win_arm64", "", Platform{Windows, "", Version{}, "arm64"}},
		{"win32", "", Platform{Windows, "", Version{}, "win32"}},
	}
	for _, tt := range good {
		p, err := ParseTag(tt.tag)
		if err != nil || p != tt.want {
			t.Errorf("ParseTag(%q) = %+v, %v; want %+v", tt.tag, p, err, tt.want)
		}
		canonical := tt.canonical
		if canonical == "" {
			canonical = tt.tag
		}
		if p.String() != canonical {
			t.Errorf("ParseTag(%q).String() = %q, want %q", tt.tag, p.String(), canonical)
		}
	}
	bad := map[string]string{
		"linux_x86_64":                    "not portable",
		"manylinux1_aarch64":              "not defined",
		"manylinux_2_17":                  "want manylinux",
		"manylinux_2_x_x86_64":            "decimal",
		"manylinux_02_17_x86_64":          "decimal",
		"manylinux_2_17_sparc":            "unknown Linux architecture",
		"macosx_11_3_arm64":               "minor version must be 0",
		"macosx_10_15_arm64":              "arm64 Macs run macOS 11",
		"macosx_10_6_intel":               "unsupported macOS architecture",
		"macosx_9_0_x86_64":               "does not exist",
		"manylinux_2_17_x86_64.win_amd64": "compressed tag set",
		"any":                             "unknown platform",
		"":                                "unknown platform",
		"win_ia64":                        "unknown platform",
	}
	for tag, want := range bad {
		if _, err := ParseTag(tag); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTag(%q) = %v, want an error mentioning %q", tag, err, want)
		}
	}
}

func TestVersion(t *testing.T) {
	if s := (Version{2, 34, 0}).String(); s != "2.34" {
		t.Errorf("String = %q", s)
	}
	if s := (Version{10, 13, 4}).String(); s != "10.13.4" {
		t.Errorf("String = %q", s)
	}
	for _, tt := range []struct {
		a, b Version
		want int
	}{
		{v2(17), v2(34), -1}, {v2(34), v2(34), 0}, {Version{10, 13, 4}, Version{10, 13, 0}, 1}, {Version{11, 0, 0}, Version{10, 15, 7}, 1},
	} {
		if got := tt.a.Compare(tt.b); got != tt.want {
			t.Errorf("%s.Compare(%s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	for name, want := range map[string]Version{
		"GLIBC_2.34": v2(34), "GLIBC_2.2.5": v2(3), "GLIBC_2.0": v2(0), "GLIBC_ABI_DT_RELR": v2(36), "GLIBC_ABI_GNU2_TLS": v2(43),
	} {
		if got, ok := glibcRelease(name); !ok || got != want {
			t.Errorf("glibcRelease(%q) = %s, %v; want %s", name, got, ok, want)
		}
	}
	for _, name := range []string{"GLIBC_PRIVATE", "GLIBC_ABI_X", "GLIBC_2", "GLIBC_2.x", "GLIBCXX_3.4", "GLIBC_2.3.4.5"} {
		if got, ok := glibcRelease(name); ok {
			t.Errorf("glibcRelease(%q) = %s, want not ok", name, got)
		}
	}
}

// The policy table must be ordered and each family must never shrink from
// one policy to the next on an architecture both define (except where the
// auditwheel data itself does: x86_64 in manylinux_2_26 lags 2_24's peers).
func TestPolicyTable(t *testing.T) {
	for i := 1; i < len(manylinuxPolicies); i++ {
		prev, cur := manylinuxPolicies[i-1], manylinuxPolicies[i]
		if prev.glibc >= cur.glibc {
			t.Fatalf("policies out of order: %d then %d", prev.glibc, cur.glibc)
		}
		for _, arch := range strings.Fields(cur.arches) {
			if !prev.defines(arch) {
				continue
			}
			for _, family := range []string{"GLIBCXX", "CXXABI", "GCC", "ZLIB", "LIBATOMIC"} {
				for _, probe := range []string{"1.0", "1.2.5.2", "1.2.9", "1.3.7", "1.3.13", "3.4.19", "3.4.30", "4.8.0", "7.0.0", "14.0.0"} {
					v, _ := parseDotted(probe)
					if prev.allows(arch, family, v) && !cur.allows(arch, family, v) {
						t.Errorf("%s_%s allowed on %s by manylinux_2_%d but not by manylinux_2_%d", family, probe, arch, prev.glibc, cur.glibc)
					}
				}
			}
		}
		for _, s := range cur.arch {
			if !cur.defines(s.arch) {
				t.Errorf("manylinux_2_%d overrides %s, which it does not define", cur.glibc, s.arch)
			}
		}
	}
}

func TestRunsOn(t *testing.T) {
	tests := []struct {
		tag, goos, goarch string
		want              bool
	}{
		{"any", "linux", "amd64", true},
		{"manylinux_2_34_x86_64", "linux", "amd64", true},
		{"manylinux_2_34_aarch64", "linux", "amd64", false},
		{"manylinux_2_34_aarch64", "linux", "arm64", true},
		{"manylinux2014_x86_64.manylinux_2_17_x86_64", "linux", "amd64", true},
		{"musllinux_1_2_x86_64", "linux", "amd64", true},
		{"manylinux_2_34_x86_64", "darwin", "amd64", false},
		{"macosx_11_0_arm64", "darwin", "arm64", true},
		{"macosx_10_13_universal2", "darwin", "amd64", true},
		{"macosx_10_13_x86_64", "darwin", "arm64", false},
		{"win_amd64", "windows", "amd64", true},
		{"not-a-tag", "linux", "amd64", false},
	}
	for _, tt := range tests {
		if got := RunsOn(tt.tag, tt.goos, tt.goarch); got != tt.want {
			t.Errorf("RunsOn(%q, %s, %s) = %v, want %v", tt.tag, tt.goos, tt.goarch, got, tt.want)
		}
	}
}

func TestClassifier(t *testing.T) {
	for _, tc := range []struct{ tag, want string }{
		{"any", ""},
		{"manylinux_2_17_x86_64.manylinux2014_x86_64", "Operating System :: POSIX :: Linux"},
		{"musllinux_1_2_aarch64", "Operating System :: POSIX :: Linux"},
		{"macosx_13_0_arm64", "Operating System :: MacOS"},
		{"win_amd64", "Operating System :: Microsoft :: Windows"},
	} {
		if got, err := Classifier(tc.tag); err != nil || got != tc.want {
			t.Errorf("Classifier(%q) = %q, %v, want %q", tc.tag, got, err, tc.want)
		}
	}
	if _, err := Classifier("linux_x86_64"); err == nil {
		t.Error("Classifier(linux_x86_64) accepts a tag ParseTag refuses")
	}
}

func TestContradictsClassifier(t *testing.T) {
	for _, tc := range []struct {
		tag, classifier string
		want            bool
	}{
		{"macosx_13_0_arm64", "Operating System :: POSIX :: Linux", true},
		{"macosx_13_0_arm64", "Operating System :: Microsoft :: Windows :: Windows 10", true},
		{"macosx_13_0_arm64", "Operating System :: OS Independent", true},
		{"macosx_13_0_arm64", "Operating System :: MacOS :: MacOS X", false},
		{"macosx_13_0_arm64", "Operating System :: POSIX", false}, // macOS is POSIX too
		{"win_amd64", "Operating System :: MacOS", true},
		{"manylinux_2_17_x86_64", "Operating System :: POSIX :: Linux", false},
		{"manylinux_2_17_x86_64", "Operating System :: POSIX :: Linuxish", false}, // not a sub-classifier
		{"manylinux_2_17_x86_64", "Programming Language :: Python :: 3", false},
		{"any", "Operating System :: POSIX :: Linux", false},
		{"any", "Operating System :: OS Independent", false},
	} {
		if got := ContradictsClassifier(tc.tag, tc.classifier); got != tc.want {
			t.Errorf("ContradictsClassifier(%q, %q) = %v, want %v", tc.tag, tc.classifier, got, tc.want)
		}
	}
}
