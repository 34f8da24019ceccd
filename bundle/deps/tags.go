package deps

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/wheel"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// Tags is the set of wheel tags a target's interpreters accept: for each
// CPython feature release of the target, the ordered list that
// packaging.tags.sys_tags() gives on a machine of the target platform,
// most preferred first. Build it with [TargetTags]; it is immutable.
type Tags struct {
	platform string
	pythons  []string
	order    map[string][]string // python → tags every machine accepts, best first
	// rank holds, for each python, one map per machine the target stands
	// for: tag → its index in that machine's sys_tags() order.
	rank map[string][]map[string]int
}

// TargetTags returns the tags accepted by CPython pythons (feature
// releases "3.Y"; a full version "3.Y.Z" counts as its feature release)
// on the platform a release's wheels are tagged for, platformTag, such as
// "manylinux_2_34_x86_64", "macosx_11_0_arm64" or "win_amd64" (see
// [platform.ParseTag]).
//
// For each Python the order is that of packaging.tags.sys_tags() for
// CPython: cpXY-cpXY-PLAT (cpXYm for Python < 3.8), cpXY-abi3-PLAT,
// cpXY-none-PLAT, cpXW-abi3-PLAT for W from Y-1 down to 2, pyXY-none-PLAT,
// py3-none-PLAT and py3W-none-PLAT down to py30, cpXY-none-any, then
// pyXY-none-any, py3-none-any and py3W-none-any; each step runs over PLAT
// in platform order. The platforms of a target:
//
//   - manylinux_2_Y_ARCH (or a legacy alias): manylinux_2_V_ARCH for V from
//     Y down to 5 (x86_64, i686) or 17 (other architectures), each followed
//     by its legacy alias where one exists (manylinux2014 for 2.17,
//     manylinux2010 for 2.12, manylinux1 for 2.5). A wheel built for an
//     older glibc runs on a newer one; never the reverse.
//   - musllinux_1_Y_ARCH: musllinux_1_V_ARCH for V from Y down to 0.
//   - macosx_X_Y_ARCH: for macOS 11 and later macosx_V_0 for V from X down
//     to 11, then every macosx_10_V for V from 16 down to 4 (x86_64; arm64
//     Macs run only macOS 11 and later, so arm64 gets only universal2 10.x
//     tags); for 10.Y the 10.V releases from Y down. Each version lists the
//     architecture and the multi-architecture formats that contain it
//     (x86_64: x86_64, intel, fat64, fat32, universal2, universal; arm64:
//     arm64, universal2).
//   - win_amd64, win_arm64, win32: just that tag.
//
// Only the default CPython builds are targets: free-threaded (cp313t) and
// debug ABIs are not accepted. Plain linux_ARCH wheels are never accepted: they are built for one
// machine and do not belong in a portable bundle. A universal2 platform is
// both an arm64 and an x86_64 Mac; a compressed tag set
// ("manylinux_2_17_x86_64.musllinux_1_2_x86_64") is every platform it
// lists. Where a target is several platforms, a wheel is accepted only if
// it installs on every one of them (through any of its tags), since the
// bundle must install wherever the release's own wheels do.
func TargetTags(pythons []string, platformTag string) (Tags, error) {
	if len(pythons) == 0 {
		return Tags{}, fmt.Errorf("target tags: no Python versions given")
	}
	machines, err := targetMachines(platformTag)
	if err != nil {
		return Tags{}, err
	}
	t := Tags{platform: platformTag, order: map[string][]string{}, rank: map[string][]map[string]int{}}
	for _, py := range pythons {
		major, minor, err := parsePython(py)
		if err != nil {
			return Tags{}, err
		}
		key := fmt.Sprintf("%d.%d", major, minor)
		if _, dup := t.order[key]; dup {
			continue
		}
		var list []string
		for i, plats := range machines {
			tags := cpythonTags(major, minor, plats)
			r := make(map[string]int, len(tags))
			for j, tag := range tags {
				if _, seen := r[tag]; !seen {
					r[tag] = j
				}
			}
			t.rank[key] = append(t.rank[key], r)
			if i == 0 {
				list = tags
				continue
			}
			list = slices.DeleteFunc(list, func(tag string) bool { _, ok := r[tag]; return !ok })
		}
		t.pythons = append(t.pythons, key)
		t.order[key] = list
	}
	slices.SortFunc(t.pythons, comparePython)
	return t, nil
}

// Platform returns the platform tag the tags were built for.
func (t Tags) Platform() string { return t.platform }

// Pythons returns the target's CPython feature releases ("3.Y"), oldest
// first.
func (t Tags) Pythons() []string { return slices.Clone(t.pythons) }

// For returns the tags Python python accepts on every machine the target
// stands for, most preferred first (a wheel may also fit through several
// tags, one per machine: see [Tags.Rank]); nil for a Python that is not
// one of the target's.
func (t Tags) For(python string) []string { return slices.Clone(t.order[featureRelease(python)]) }

// Rank returns the preference of the wheel f for Python python (0 is
// best), and false when f does not install on every machine the target
// stands for. On each machine the wheel's best tag is the first of its
// tags (a compressed tag set has several) in that machine's order; the
// rank is the worst of these positions. For a target of one machine it is
// the position of the wheel's best tag in [Tags.For]. A wheel tagged
// "manylinux_2_17_x86_64.musllinux_1_2_x86_64" installs on a target that
// is both a glibc and a musl machine, though no one of its tags does.
func (t Tags) Rank(python string, f wheel.Filename) (int, bool) {
	machines := t.rank[featureRelease(python)]
	if len(machines) == 0 {
		return 0, false
	}
	worst := 0
	for _, r := range machines {
		best, ok := 0, false
		for _, tag := range f.Tags() {
			if i, found := r[tag]; found && (!ok || i < best) {
				best, ok = i, true
			}
		}
		if !ok {
			return 0, false
		}
		worst = max(worst, best)
	}
	return worst, true
}

// Fits reports whether the wheel f installs on at least one of the
// target's Pythons.
func (t Tags) Fits(f wheel.Filename) bool {
	for _, py := range t.pythons {
		if _, ok := t.Rank(py, f); ok {
			return true
		}
	}
	return false
}

// FitsAll reports whether the wheel f installs on every one of the
// target's Pythons.
func (t Tags) FitsAll(f wheel.Filename) bool {
	for _, py := range t.pythons {
		if _, ok := t.Rank(py, f); !ok {
			return false
		}
	}
	return len(t.pythons) > 0
}

// parsePython reads "3.Y" or "3.Y.Z[suffix]".
func parsePython(s string) (major, minor int, err error) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) >= 2 {
		major, err1 := strconv.Atoi(parts[0])
		minor, err2 := strconv.Atoi(parts[1])
		if err1 == nil && err2 == nil && major == 3 && minor >= 0 && minor < 100 && strconv.Itoa(minor) == parts[1] {
			return major, minor, nil
		}
	}
	return 0, 0, fmt.Errorf("invalid Python version %q: want a CPython 3 release such as \"3.11\"", s)
}

// featureRelease returns "3.Y" for "3.Y" or "3.Y.Z", or s unchanged.
func featureRelease(s string) string {
	if major, minor, err := parsePython(s); err == nil {
		return fmt.Sprintf("%d.%d", major, minor)
	}
	return s
}

func comparePython(a, b string) int {
	_, am, _ := parsePython(a)
	_, bm, _ := parsePython(b)
	return am - bm
}

// cpythonTags lists sys_tags() of CPython major.minor on plats, in order.
func cpythonTags(major, minor int, plats []string) []string {
	var tags []string
	add := func(py, abi string) {
		for _, p := range plats {
			tags = append(tags, py+"-"+abi+"-"+p)
		}
	}
	cp := fmt.Sprintf("cp%d%d", major, minor)
	abi := cp
	if minor < 8 {
		abi += "m" // pymalloc builds before 3.8
	}
	add(cp, abi)
	abi3 := minor >= 2
	if abi3 {
		add(cp, "abi3")
	}
	add(cp, "none")
	if abi3 {
		for m := minor - 1; m >= 2; m-- {
			add(fmt.Sprintf("cp%d%d", major, m), "abi3")
		}
	}
	pys := pyRange(major, minor)
	for _, py := range pys {
		add(py, "none")
	}
	tags = append(tags, cp+"-none-any")
	for _, py := range pys {
		tags = append(tags, py+"-none-any")
	}
	return tags
}

// pyRange is pyXY, pyX, then pyXW for W from Y-1 down to 0.
func pyRange(major, minor int) []string {
	out := []string{fmt.Sprintf("py%d%d", major, minor), fmt.Sprintf("py%d", major)}
	for m := minor - 1; m >= 0; m-- {
		out = append(out, fmt.Sprintf("py%d%d", major, m))
	}
	return out
}

// targetMachines parses a platform tag (or compressed set) into the
// platform tag lists of the machines it stands for.
func targetMachines(tag string) ([][]string, error) {
	if tag == "" {
		return nil, fmt.Errorf("target tags: no platform tag given")
	}
	seen := map[string]bool{}
	var machines [][]string
	for _, part := range strings.Split(tag, ".") {
		p, err := platform.ParseTag(part)
		if err != nil {
			return nil, fmt.Errorf("target tags: %w", err)
		}
		if seen[p.String()] {
			continue // a legacy alias of a tag already listed
		}
		seen[p.String()] = true
		for _, m := range machinesOf(p) {
			machines = append(machines, platformList(m))
		}
	}
	return machines, nil
}

// machinesOf splits universal2 into its two architectures.
func machinesOf(p platform.Platform) []platform.Platform {
	if p.OS == platform.MacOS && p.Arch == "universal2" {
		x86 := platform.Platform{OS: platform.MacOS, Version: p.Version, Arch: "x86_64"}
		arm := platform.Platform{OS: platform.MacOS, Version: p.Version, Arch: "arm64"}
		if arm.Version.Major < 11 {
			arm.Version = platform.Version{Major: 11}
		}
		return []platform.Platform{x86, arm}
	}
	return []platform.Platform{p}
}

// legacyAlias returns the pre-PEP 600 manylinux name of glibc 2.minor, or
// "".
func legacyAlias(minor int) string {
	switch minor {
	case 5:
		return "manylinux1"
	case 12:
		return "manylinux2010"
	case 17:
		return "manylinux2014"
	}
	return ""
}

// platformList is the ordered platform part of sys_tags() on machine p.
func platformList(p platform.Platform) []string {
	var out []string
	switch p.OS {
	case platform.Linux:
		if p.Libc == platform.Musl {
			for m := p.Version.Minor; m >= 0; m-- {
				out = append(out, fmt.Sprintf("musllinux_%d_%d_%s", p.Version.Major, m, p.Arch))
			}
			return out
		}
		oldest := 17 // the first glibc with policies for the other architectures
		if p.Arch == "x86_64" || p.Arch == "i686" {
			oldest = 5
		}
		for m := p.Version.Minor; m >= oldest; m-- {
			out = append(out, fmt.Sprintf("manylinux_2_%d_%s", m, p.Arch))
			if alias := legacyAlias(m); alias != "" {
				out = append(out, alias+"_"+p.Arch)
			}
		}
	case platform.MacOS:
		formats := func() []string {
			if p.Arch == "arm64" {
				return []string{"arm64", "universal2"}
			}
			return []string{"x86_64", "intel", "fat64", "fat32", "universal2", "universal"}
		}
		addMac := func(major, minor int, fs []string) {
			for _, f := range fs {
				out = append(out, fmt.Sprintf("macosx_%d_%d_%s", major, minor, f))
			}
		}
		v := p.Version
		if v.Major == 10 {
			for m := v.Minor; m >= 4; m-- {
				addMac(10, m, formats())
			}
			return out
		}
		for major := v.Major; major >= 11; major-- {
			addMac(major, 0, formats())
		}
		for m := 16; m >= 4; m-- {
			if p.Arch == "arm64" {
				addMac(10, m, []string{"universal2"})
			} else {
				addMac(10, m, formats())
			}
		}
	case platform.Windows:
		out = append(out, p.String())
	}
	return out
}
