package bundle

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/wheel"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

var (
	// targetRE and pythonRE are the forms release.toml allows for target
	// names and the Pythons of the support boundary.
	targetRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	pythonRE = regexp.MustCompile(`^3\.[0-9]{1,2}$`)
)

// checkBundleFacts checks what a bundle's manifest says about the bundle
// itself, which its locks, install.sh and INSTALL.md are written from: the
// target name, the platform tag and the Pythons of the support boundary.
func checkBundleFacts(b *dist.ManifestBundle) []string {
	var out []string
	if !targetRE.MatchString(b.Target) {
		out = append(out, fmt.Sprintf("the bundle's target %q is not a target name (lowercase letters, digits and . _ -)", b.Target))
	}
	if _, err := scriptPlatform(b.PlatformTag); err != nil {
		out = append(out, fmt.Sprintf("the bundle's platform_tag: %v", err))
	}
	if len(b.Pythons) == 0 {
		out = append(out, "names no support boundary (bundle.pythons)")
	}
	for i, py := range b.Pythons {
		if !pythonRE.MatchString(py) || slices.Contains(b.Pythons[:i], py) {
			out = append(out, fmt.Sprintf("bundle.pythons[%d] %q is not a CPython version (3.X) listed once", i, py))
		}
	}
	return out
}

// target is the deps.Target a bundle's manifest describes.
func target(b *dist.ManifestBundle) deps.Target {
	return deps.Target{Name: b.Target, Platform: b.PlatformTag, Pythons: b.Pythons}
}

// checkContents checks that the wheels of a bundle are exactly the ones
// its manifest names, with the recorded sizes and digests: the release's
// wheels (targets[].wheels of the bundle's target) in wheels/, the closure
// (bundle.dependencies, and the same in targets[].dependencies) in
// dependencies/. Each problem names the file.
func checkContents(m *dist.Manifest, wheels []bundleWheel) []problem {
	var out []problem
	add := func(file, format string, args ...any) {
		out = append(out, problem{file: file, msg: fmt.Sprintf(format, args...)})
	}
	diff := func(file, want, got, format string, args ...any) {
		out = append(out, problem{file: file, msg: fmt.Sprintf(format, args...), want: want, got: got})
	}
	var t *dist.ManifestTarget
	var names []string
	for i := range m.Targets {
		names = append(names, m.Targets[i].Name)
		if m.Targets[i].Name == m.Bundle.Target {
			t = &m.Targets[i]
		}
	}
	if len(m.Targets) != 1 || t == nil {
		add(dist.ManifestFile, "lists targets [%s]; a bundle's manifest lists its own target %s alone", strings.Join(names, ", "), m.Bundle.Target)
		return out
	}
	named := map[string]dist.ManifestArtifact{} // path in the bundle → entry
	name := func(rel string, a dist.ManifestArtifact) {
		if _, dup := named[rel]; dup {
			add(rel, "named twice in manifest.json")
		}
		named[rel] = a
	}
	for _, a := range t.Wheels {
		if strings.ContainsAny(a.Path, `/\`) || !strings.HasSuffix(a.Path, wheel.Ext) {
			add(dist.ManifestFile, "names the release wheel %q, which is not a wheel file name", a.Path)
			continue
		}
		name(deps.OwnDir+"/"+a.Path, a)
	}
	closure := map[string]dist.ManifestArtifact{}
	for _, a := range m.Bundle.Dependencies {
		base, ok := strings.CutPrefix(a.Path, deps.DependencyDir+"/")
		if !ok || strings.ContainsAny(base, `/\`) || !strings.HasSuffix(base, wheel.Ext) {
			add(dist.ManifestFile, "names the dependency %q, which is not dependencies/NAME.whl", a.Path)
			continue
		}
		name(a.Path, a)
		closure[base] = a
	}
	for _, a := range t.Dependencies {
		if b, ok := closure[a.Path]; !ok || b.SHA256 != a.SHA256 || b.Size != a.Size || b.Name != a.Name {
			add(dist.ManifestFile, "targets[%s].dependencies names %s (sha256 %s), which bundle.dependencies does not list alike", t.Name, a.Path, a.SHA256)
		}
	}
	if len(t.Dependencies) != len(closure) {
		add(dist.ManifestFile, "targets[%s].dependencies lists %d wheels, bundle.dependencies %d: both list the closure", t.Name, len(t.Dependencies), len(closure))
	}
	have := map[string]bool{}
	for _, w := range wheels {
		have[w.rel] = true
		a, ok := named[w.rel]
		switch {
		case !ok:
			add(w.rel, "not named in manifest.json: a bundle holds only the wheels its manifest names")
		case a.SHA256 != w.sha256:
			diff(w.rel, a.SHA256, w.sha256, "manifest.json records sha256 %s, the file has %s", a.SHA256, w.sha256)
		case a.Size != w.size:
			diff(w.rel, strconv.FormatInt(a.Size, 10), strconv.FormatInt(w.size, 10), "manifest.json records %d bytes, the file has %d", a.Size, w.size)
		case w.own() && a.Name != w.name:
			diff(w.rel, a.Name, w.name, "manifest.json names it %s, its file name %s", a.Name, w.name)
		case !w.own() && a.Name != w.name+"=="+w.version:
			diff(w.rel, a.Name, w.name+"=="+w.version, "manifest.json names it %s, its file name %s==%s", a.Name, w.name, w.version)
		}
	}
	var missing []string
	for rel := range named {
		if !have[rel] {
			missing = append(missing, rel)
		}
	}
	slices.Sort(missing)
	for _, rel := range missing {
		add(rel, "named in manifest.json but missing from the bundle")
	}
	return out
}

// bundleDocs are the facts install.sh and INSTALL.md were written from,
// as the checked bundle states them: the manifest, the root folder, the
// pins of requirements.txt and the digests SHA256SUMS lists.
func bundleDocs(m *dist.Manifest, root string, pins []pin, wheels []bundleWheel, sums checksum.Sums) Docs {
	d := Docs{Name: m.Project.Name, Version: m.Project.Version, Target: m.Bundle.Target, PlatformTag: m.Bundle.PlatformTag,
		Root: root, File: dist.ArchiveOf(root), Pythons: m.Bundle.Pythons}
	for _, s := range sums {
		if s.Name != "install.sh" && s.Name != dist.ChecksumsFile {
			d.Files = append(d.Files, s)
		}
	}
	c := closureOf(target(m.Bundle), pins, wheels)
	for _, p := range c.Own {
		d.Own = append(d.Own, p.Name+"=="+p.Version)
	}
	for _, p := range c.Packages {
		d.Deps = append(d.Deps, p.Name+"=="+p.Version)
	}
	return d
}

// checkInstaller compares install.sh and INSTALL.md with what mkrelease
// writes for the bundle described by d.
func checkInstaller(d Docs, script, doc []byte) []problem {
	var out []problem
	for _, f := range []struct {
		name   string
		render func(Docs) ([]byte, error)
		got    []byte
	}{{"install.sh", InstallScript, script}, {"INSTALL.md", InstallDoc, doc}} {
		want, err := f.render(d)
		if err != nil {
			out = append(out, problem{file: f.name, msg: fmt.Sprintf("cannot be regenerated from manifest.json: %v", err)})
			continue
		}
		if n, w, g, differ := firstDifference(want, f.got); differ {
			out = append(out, problem{file: f.name, line: n, msg: fmt.Sprintf("differs from what mkrelease writes for this bundle: want %q, got %q", w, g), want: w, got: g})
		}
	}
	return out
}

// platformFacts are what install.sh compares with uname.
type platformFacts struct {
	// OS is the operating system's name in messages; OSCase the case
	// pattern matching `uname -s` there.
	OS, OSCase string
	// Arch is the architecture in messages; ArchCase the pattern matching
	// `uname -m`.
	Arch, ArchCase string
	// VenvPython is the interpreter inside a virtualenv there.
	VenvPython string
	// GOOS is the operating system as Go names it, for the rules that find
	// its interpreters (pyfind.LayoutFor).
	GOOS string
}

// unameArch spells the architectures of platform tags as `uname -m`
// prints them (Linux, macOS, MSYS/Cygwin).
var unameArch = map[string][]string{
	"x86_64": {"x86_64", "amd64"}, "amd64": {"x86_64", "amd64"},
	"aarch64": {"aarch64", "arm64"}, "arm64": {"arm64", "aarch64"},
	"universal2": {"x86_64", "arm64"},
	"i686":       {"i386", "i486", "i586", "i686", "x86"}, "win32": {"i386", "i486", "i586", "i686", "x86"},
	"armv7l": {"armv7l", "armv8l"}, "ppc64le": {"ppc64le"}, "ppc64": {"ppc64"}, "s390x": {"s390x"},
	"riscv64": {"riscv64"}, "loongarch64": {"loongarch64"},
}

// scriptPlatform describes, for install.sh, the machines a platform tag
// (possibly a dotted set, all of one operating system) installs on.
func scriptPlatform(tag string) (platformFacts, error) {
	var f platformFacts
	var arches []string
	for _, t := range strings.Split(tag, ".") {
		p, err := platform.ParseTag(t)
		if err != nil {
			return f, err
		}
		var osName, osCase, vpy, goos string
		switch p.OS {
		case platform.Linux:
			osName, osCase, vpy, goos = "Linux", "Linux", "bin/python", "linux"
		case platform.MacOS:
			osName, osCase, vpy, goos = "macOS", "Darwin", "bin/python", "darwin"
		case platform.Windows:
			osName, osCase, vpy, goos = "Windows", "MINGW*|MSYS*|CYGWIN*|Windows_NT", "Scripts/python.exe", "windows"
		default:
			return f, fmt.Errorf("platform tag %q: install.sh cannot check operating system %q", tag, p.OS)
		}
		if f.OS != "" && f.OS != osName {
			return f, fmt.Errorf("platform tag %q names more than one operating system", tag)
		}
		f.OS, f.OSCase, f.VenvPython, f.GOOS = osName, osCase, vpy, goos
		u, ok := unameArch[p.Arch]
		if !ok {
			return f, fmt.Errorf("platform tag %q: install.sh cannot check architecture %q", tag, p.Arch)
		}
		for _, a := range u {
			if !slices.Contains(arches, a) {
				arches = append(arches, a)
			}
		}
		if !strings.Contains(" "+f.Arch+" ", " "+p.Arch+" ") {
			f.Arch = strings.TrimSpace(f.Arch + " " + p.Arch)
		}
	}
	f.ArchCase = strings.Join(arches, "|")
	return f, nil
}
