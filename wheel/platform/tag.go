package platform

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Platform is one parsed platform tag.
type Platform struct {
	// OS is Linux, MacOS or Windows.
	OS string
	// Libc is, for Linux, Glibc (manylinux) or Musl (musllinux).
	Libc string
	// Version is the glibc version of a manylinux tag, the musl version of
	// a musllinux tag, the macOS version of a macosx tag; zero on Windows.
	Version Version
	// Arch is spelled as in [Need.Arch].
	Arch string
}

// String renders the platform as its canonical tag (legacy manylinux
// aliases become their PEP 600 spelling).
func (p Platform) String() string {
	switch p.OS {
	case Linux:
		family := "manylinux"
		if p.Libc == Musl {
			family = "musllinux"
		}
		return fmt.Sprintf("%s_%d_%d_%s", family, p.Version.Major, p.Version.Minor, p.Arch)
	case MacOS:
		return fmt.Sprintf("macosx_%d_%d_%s", p.Version.Major, p.Version.Minor, p.Arch)
	case Windows:
		if p.Arch == "win32" {
			return "win32"
		}
		return "win_" + p.Arch
	}
	return ""
}

var linuxArches = [...]string{"x86_64", "i686", "aarch64", "armv7l", "ppc64le", "ppc64", "s390x", "riscv64", "loongarch64"}

// legacyManylinux are the pre-PEP 600 tags: name, glibc version, and the
// architectures they were defined for.
var legacyManylinux = [...]struct {
	name   string
	glibc  int
	arches string
}{
	{"manylinux1", 5, x86},
	{"manylinux2010", 12, x86},
	{"manylinux2014", 17, arches2014},
}

func hasField(list, s string) bool {
	for _, f := range strings.Fields(list) {
		if f == s {
			return true
		}
	}
	return false
}

// ParseTag parses one platform tag: manylinux_X_Y_ARCH and its legacy
// aliases manylinux1_ARCH (2.5), manylinux2010_ARCH (2.12) and
// manylinux2014_ARCH (2.17); musllinux_X_Y_ARCH; macosx_X_Y_ARCH for
// x86_64, arm64 and universal2; win_amd64, win_arm64 and win32. It refuses
// tags no installer would match (linux_ARCH, macosx_11_3_*,
// macosx_10_X_arm64) and compressed tag sets (split them at the dots).
func ParseTag(tag string) (Platform, error) {
	bad := func(format string, a ...any) (Platform, error) {
		return Platform{}, fmt.Errorf("platform tag %q: %s", tag, fmt.Sprintf(format, a...))
	}
	if strings.Contains(tag, ".") {
		return bad("a compressed tag set: parse each dot-separated tag on its own")
	}
	switch tag {
	case "win_amd64":
		return Platform{OS: Windows, Arch: "amd64"}, nil
	case "win_arm64":
		return Platform{OS: Windows, Arch: "arm64"}, nil
	case "win32":
		return Platform{OS: Windows, Arch: "win32"}, nil
	}
	for _, l := range legacyManylinux {
		if arch, ok := strings.CutPrefix(tag, l.name+"_"); ok {
			if !hasField(l.arches, arch) {
				return bad("%s is not defined for %q", l.name, arch)
			}
			return Platform{OS: Linux, Libc: Glibc, Version: Version{2, l.glibc, 0}, Arch: arch}, nil
		}
	}
	family, rest, _ := strings.Cut(tag, "_")
	parts := strings.SplitN(rest, "_", 3)
	switch family {
	case "manylinux", "musllinux", "macosx":
	case "linux":
		return bad("not portable: use manylinux_X_Y_%s or musllinux_X_Y_%s", rest, rest)
	default:
		return bad("unknown platform")
	}
	if len(parts) != 3 {
		return bad("want %s_<major>_<minor>_<arch>", family)
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 || strconv.Itoa(major) != parts[0] || strconv.Itoa(minor) != parts[1] {
		return bad("version %s_%s is not two decimal numbers", parts[0], parts[1])
	}
	p := Platform{Version: Version{major, minor, 0}, Arch: parts[2]}
	switch family {
	case "manylinux", "musllinux":
		p.OS, p.Libc = Linux, Glibc
		if family == "musllinux" {
			p.Libc = Musl
		}
		if !hasField(strings.Join(linuxArches[:], " "), p.Arch) {
			return bad("unknown Linux architecture %q", p.Arch)
		}
	case "macosx":
		p.OS = MacOS
		switch p.Arch {
		case "x86_64", "arm64", "universal2":
		default:
			return bad("unsupported macOS architecture %q (want x86_64, arm64 or universal2)", p.Arch)
		}
		switch {
		case major >= 11 && minor != 0:
			return bad("for macOS 11 and later the minor version must be 0 (installers only match macosx_%d_0)", major)
		case major < 10:
			return bad("macOS version %d.%d does not exist", major, minor)
		case major == 10 && p.Arch == "arm64":
			return bad("arm64 Macs run macOS 11 or later: use macosx_11_0_arm64 or a universal2 tag")
		}
	}
	return p, nil
}

// Options tune [Options.Tag].
type Options struct {
	// Floor is the lowest manylinux version claimed, for binaries that
	// need less or nothing (static ones). Zero means 2.17: see the package
	// documentation for why. It must be 2.5 or later.
	Floor Version
}

// DefaultFloor is the manylinux floor [Tag] uses: glibc 2.17
// (manylinux2014).
func DefaultFloor() Version { return Version{2, 17, 0} }

// Tag returns the most compatible platform tag that every binary in needs
// runs on, with the default floor; see [Options.Tag].
func Tag(needs []Need) (string, error) { return Options{}.Tag(needs) }

// Tag returns the most compatible platform tag (or compressed tag set)
// that satisfies every need: on Linux the highest glibc and C++-runtime
// need over all binaries (never below the floor), on macOS the highest
// minimum macOS and the architectures every binary has. With no needs the
// tag is "any". It returns an error naming the binaries when they disagree
// on operating system, architecture or C library, or when one breaks the
// platform policy (see [CheckPolicy]).
func (o Options) Tag(needs []Need) (string, error) {
	if len(needs) == 0 {
		return "any", nil
	}
	floor := o.Floor
	if floor.IsZero() {
		floor = DefaultFloor()
	}
	if floor.Major != 2 || floor.Minor < 5 || floor.Patch != 0 {
		return "", fmt.Errorf("platform: manylinux floor %s: want 2.5 or later (major.minor)", floor)
	}
	if err := CheckPolicy(needs); err != nil {
		return "", err
	}
	if err := agree(needs, "operating system", func(n Need) string { return n.OS }); err != nil {
		return "", err
	}
	switch needs[0].OS {
	case Linux:
		return linuxTag(needs, floor)
	case MacOS:
		return macTag(needs)
	case Windows:
		if err := agree(needs, "architecture", func(n Need) string { return n.Arch }); err != nil {
			return "", err
		}
		return Platform{OS: Windows, Arch: needs[0].Arch}.String(), nil
	}
	return "", fmt.Errorf("platform: %s: unknown operating system %q", needs[0].File, needs[0].OS)
}

// agree returns an error naming the binaries if key differs between them.
func agree(needs []Need, what string, key func(Need) string) error {
	groups := map[string][]string{}
	for _, n := range needs {
		groups[key(n)] = append(groups[key(n)], n.File)
	}
	if len(groups) <= 1 {
		return nil
	}
	return fmt.Errorf("platform: binaries disagree on %s: %s", what, describeGroups(groups))
}

func describeGroups(groups map[string][]string) string {
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString("; ")
		}
		name := k
		if name == "" {
			name = "none"
		}
		fmt.Fprintf(&b, "%s: %s", name, strings.Join(groups[k], ", "))
	}
	return b.String()
}

func linuxTag(needs []Need, floor Version) (string, error) {
	if err := agree(needs, "architecture", func(n Need) string { return n.Arch }); err != nil {
		return "", err
	}
	arch := needs[0].Arch
	libcs := map[string][]string{}
	for _, n := range needs {
		if n.Libc != "" {
			libcs[n.Libc] = append(libcs[n.Libc], n.File)
		}
	}
	if len(libcs) > 1 {
		return "", fmt.Errorf("platform: binaries disagree on C library: %s", describeGroups(libcs))
	}
	if _, ok := libcs[Musl]; ok {
		return fmt.Sprintf("musllinux_%d_%d_%s", muslAssumed().Major, muslAssumed().Minor, arch), nil
	}
	af, ok := archFloor(arch)
	if !ok {
		return "", fmt.Errorf("platform: no manylinux policy defines architecture %q", arch)
	}
	v := maxVersion(floor, af)
	bundled := bundledSet(needs)
	for _, n := range needs {
		if f, _ := n.manylinuxFloor(bundled); f.Compare(v) > 0 {
			v = f
		}
	}
	tags := []string{Platform{OS: Linux, Libc: Glibc, Version: v, Arch: arch}.String()}
	for _, l := range legacyManylinux {
		if v == (Version{2, l.glibc, 0}) && hasField(l.arches, arch) {
			tags = append(tags, l.name+"_"+arch)
		}
	}
	if _, ok := libcs[Glibc]; !ok {
		// Static binaries need only the kernel: musl systems run them too.
		tags = append(tags, fmt.Sprintf("musllinux_%d_%d_%s", muslAssumed().Major, muslAssumed().Minor, arch))
	}
	return strings.Join(tags, "."), nil
}

// muslAssumed is the musl version claimed for musl binaries, which record
// none (see the package documentation).
func muslAssumed() Version { return Version{1, 2, 0} }

// macArches is the set of architectures a macOS binary runs on.
func macArches(arch string) []string {
	if arch == "universal2" {
		return []string{"arm64", "x86_64"}
	}
	return []string{arch}
}

func macTag(needs []Need) (string, error) {
	count := map[string]int{}
	groups := map[string][]string{}
	v := Version{}
	var errs []error
	for _, n := range needs {
		for _, a := range macArches(n.Arch) {
			count[a]++
		}
		groups[n.Arch] = append(groups[n.Arch], n.File)
		if n.MacOS.IsZero() {
			errs = append(errs, fmt.Errorf("%s: records no minimum macOS (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)", n.File))
		}
		v = maxVersion(v, macTagVersion(n.MacOS))
	}
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	var common []string
	for _, a := range []string{"arm64", "x86_64"} {
		if count[a] == len(needs) {
			common = append(common, a)
		}
	}
	var arch string
	switch len(common) {
	case 0:
		return "", fmt.Errorf("platform: binaries share no architecture: %s", describeGroups(groups))
	case 1:
		arch = common[0]
	default:
		arch = "universal2"
	}
	if arch == "arm64" {
		v = maxVersion(v, Version{11, 0, 0})
	}
	return Platform{OS: MacOS, Version: v, Arch: arch}.String(), nil
}

// macTagVersion is the version a macosx tag must carry for a binary with
// minimum macOS v: major_0 from macOS 11 on (rounded up when v has a minor
// or patch), 10_minor before (rounded up when v has a patch).
func macTagVersion(v Version) Version {
	switch {
	case v.Major >= 11:
		if v.Minor != 0 || v.Patch != 0 {
			return Version{v.Major + 1, 0, 0}
		}
		return Version{v.Major, 0, 0}
	case v.Major == 10:
		minor := v.Minor
		if v.Patch != 0 {
			minor++
		}
		if minor >= 16 { // 10.16 is macOS 11 seen by old SDKs
			return Version{11, 0, 0}
		}
		return Version{10, minor, 0}
	}
	return Version{10, 0, 0}
}

// Satisfies checks that a configured platform tag (or compressed tag set,
// every member of which must hold) covers every need. The error names
// each binary, what it needs (e.g. GLIBC_2.34 via pthread_create) and
// what the tag claims; it also reports policy problems (see
// [CheckPolicy]), which no portable tag covers. The tag "any" only covers
// an empty set.
func Satisfies(tag string, needs []Need) error {
	if tag == "any" {
		if len(needs) == 0 {
			return nil
		}
		files := make([]string, len(needs))
		for i, n := range needs {
			files[i] = n.File
		}
		return fmt.Errorf("platform tag \"any\" is for pure-Python wheels, but the wheel has native binaries: %s", strings.Join(files, ", "))
	}
	tags := strings.Split(tag, ".")
	plats := make([]Platform, len(tags))
	for i, t := range tags {
		p, err := ParseTag(t)
		if err != nil {
			return err
		}
		plats[i] = p
	}
	errs := []error{CheckPolicy(needs)}
	bundled := bundledSet(needs)
	for i, p := range plats {
		for _, n := range needs {
			errs = append(errs, satisfies(p, tags[i], n, bundled))
		}
	}
	return errors.Join(errs...)
}

// satisfies checks one need against one parsed tag, spelled tag.
func satisfies(p Platform, tag string, n Need, bundled map[string]bool) error {
	if n.OS != p.OS {
		return fmt.Errorf("%s: is a %s binary, but %s is a %s tag", n.File, n.OS, tag, p.OS)
	}
	switch p.OS {
	case Linux:
		if n.Arch != p.Arch {
			return fmt.Errorf("%s: is built for %s, but %s is for %s", n.File, n.Arch, tag, p.Arch)
		}
		switch {
		case p.Libc == Glibc && n.Libc == Musl:
			return fmt.Errorf("%s: links musl, but %s is for glibc systems", n.File, tag)
		case p.Libc == Musl && n.Libc == Glibc:
			return fmt.Errorf("%s: links glibc, but %s is for musl systems", n.File, tag)
		case p.Libc == Glibc:
			if need, why := n.manylinuxFloor(bundled); need.Compare(p.Version) > 0 {
				return fmt.Errorf("%s: needs %s, but %s claims only glibc %s", n.File, why, tag, p.Version)
			}
		case p.Libc == Musl && n.Libc == Musl && p.Version.Compare(muslAssumed()) < 0:
			return fmt.Errorf("%s: is assumed to need musl %s (musl records no symbol versions), but %s claims only musl %s", n.File, muslAssumed(), tag, p.Version)
		}
	case MacOS:
		for _, a := range macArches(p.Arch) {
			if !contains(macArches(n.Arch), a) {
				return fmt.Errorf("%s: is built for %s, but %s needs %s", n.File, n.Arch, tag, a)
			}
		}
		if n.MacOS.IsZero() {
			return fmt.Errorf("%s: records no minimum macOS (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)", n.File)
		}
		if need := macTagVersion(n.MacOS); need.Compare(p.Version) > 0 {
			cmd := n.MacOSCommand
			if cmd == "" {
				cmd = "its load commands"
			}
			return fmt.Errorf("%s: needs macOS %s (minos of %s), which takes macosx_%d_%d, but %s claims only macOS %s", n.File, n.MacOS, cmd, need.Major, need.Minor, tag, p.Version)
		}
	case Windows:
		if n.Arch != p.Arch {
			return fmt.Errorf("%s: is built for %s, but %s is for %s", n.File, n.Arch, tag, p.Arch)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RunsOn reports whether a wheel of the platform tag tag (possibly a
// dotted set; "any" runs everywhere) can run on a machine of Go's goos and
// goarch. Only the operating system and the architecture are compared; the
// libc or macOS version is the installer's business.
func RunsOn(tag, goos, goarch string) bool {
	for _, t := range strings.Split(tag, ".") {
		if t == "any" {
			return true
		}
		p, err := ParseTag(t)
		if err != nil {
			continue
		}
		wantOS, arches := goosNames[goos], goarchNames[goarch]
		if p.OS != wantOS {
			continue
		}
		if hasField(arches, p.Arch) || (p.OS == MacOS && p.Arch == "universal2" && (goarch == "amd64" || goarch == "arm64")) {
			return true
		}
	}
	return false
}

var goosNames = map[string]string{"linux": Linux, "darwin": MacOS, "windows": Windows}

// goarchNames spell Go's architectures as platform tags do (Linux and
// macOS spellings; Windows' amd64/arm64/win32 too).
var goarchNames = map[string]string{
	"amd64": "x86_64 amd64", "386": "i686 win32", "arm64": "aarch64 arm64", "arm": "armv7l",
	"ppc64le": "ppc64le", "ppc64": "ppc64", "s390x": "s390x", "riscv64": "riscv64", "loong64": "loongarch64",
}

// osClassifiers are the trove classifiers of the operating systems, as
// [Classifier] returns them.
var osClassifiers = [...]struct{ os, classifier string }{
	{Linux, "Operating System :: POSIX :: Linux"},
	{MacOS, "Operating System :: MacOS"},
	{Windows, "Operating System :: Microsoft :: Windows"},
}

// Classifier returns the trove classifier of the operating system a
// platform tag (or the first tag of a compressed tag set) is for, e.g.
// "Operating System :: MacOS" for macosx_13_0_arm64; "" for "any".
func Classifier(tag string) (string, error) {
	if tag == "any" {
		return "", nil
	}
	first, _, _ := strings.Cut(tag, ".")
	p, err := ParseTag(first)
	if err != nil {
		return "", err
	}
	for _, c := range osClassifiers {
		if c.os == p.OS {
			return c.classifier, nil
		}
	}
	return "", fmt.Errorf("platform tag %q: no classifier for operating system %q", tag, p.OS)
}

// ContradictsClassifier reports whether the trove classifier cl says a
// wheel with platform tag is for another operating system than the tag's:
// the classifier (or a sub-classifier) of another operating system, or
// "Operating System :: OS Independent" for a platform tag that is not
// "any".
func ContradictsClassifier(tag, cl string) bool {
	own, err := Classifier(tag)
	if err != nil || own == "" {
		return false
	}
	if cl == "Operating System :: OS Independent" {
		return true
	}
	for _, c := range osClassifiers {
		if c.classifier != own && (cl == c.classifier || strings.HasPrefix(cl, c.classifier+" :: ")) {
			return true
		}
	}
	return false
}
