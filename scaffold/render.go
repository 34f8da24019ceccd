package scaffold

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Host is what the machine and the project's git work tree say, gathered
// by [Inspect]: the parts of release.toml that are not in the project's
// files.
type Host struct {
	// GOOS and GOARCH are the host platform (runtime.GOOS, runtime.GOARCH).
	GOOS, GOARCH string
	// Pythons are the CPython versions ("3.11") found on this machine.
	Pythons []string
	// AuthorName and AuthorEmail are git's user.name and user.email.
	AuthorName, AuthorEmail string
	// Commit is the full id of the work tree's HEAD commit, "" when the
	// project is not in a git work tree with a commit.
	Commit string
	// EnclosingRepo is set when the project folder is inside a git work
	// tree whose top is another folder: a git source is a whole
	// repository, so init cannot pin the project by commit.
	EnclosingRepo bool
	// Tracked are the project-relative files of the HEAD commit.
	Tracked map[string]bool
	// CCSupplier is who distributes this machine's cc, read from the
	// first line of `cc --version` ("Organization: Debian"), "" when it
	// does not say.
	CCSupplier string
	// Glibc is this machine's glibc version ("2.36"), "" when unknown: a
	// library built with the host's compiler needs it.
	Glibc string
}

// EditMe marks each line of a generated file that the user must fill in.
const EditMe = "EDIT ME"

// ccSupplierRE reads the distribution from `cc --version`'s first line:
// "cc (Debian 12.2.0-14+deb12u1) 12.2.0", "gcc (Ubuntu 13.2.0-4ubuntu3) 13.2.0".
var ccSupplierRE = regexp.MustCompile(`^\S+ \((Debian|Ubuntu|Alpine|Homebrew|Red Hat|SUSE Linux|conda-forge)[ )]`)

// CCSupplier is the SBOM supplier a `cc --version` output names, "" when
// it names none init knows.
func CCSupplier(version string) string {
	first, _, _ := strings.Cut(version, "\n")
	if strings.HasPrefix(first, "Apple clang") {
		return "Organization: Apple Inc."
	}
	if m := ccSupplierRE.FindStringSubmatch(first); m != nil {
		return "Organization: " + m[1]
	}
	return ""
}

// personSupplier is an SPDX "Person: NAME (EMAIL)" supplier, "" without a
// name or when the name or email has characters SPDX's form cannot hold.
func personSupplier(name, email string) string {
	if name == "" || strings.ContainsAny(name+email, "()\r\n") {
		return ""
	}
	if email == "" {
		return "Person: " + name
	}
	return "Person: " + name + " (" + email + ")"
}

// glibcRE reads the minor version of a glibc 2 version.
var glibcRE = regexp.MustCompile(`^2\.([0-9]+)$`)

// target is the host's target name, its library suffix and the platform
// its pure-Python bundle installs on.
type target struct{ name, libExt, installPlatform string }

func hostTarget(goos, goarch, glibc string) target {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i686"}[goarch]
	if arch == "" {
		arch = goarch
	}
	switch goos {
	case "darwin":
		if arch == "aarch64" {
			return target{"macos-arm64", ".dylib", "macosx_11_0_arm64"}
		}
		return target{"macos-" + arch, ".dylib", "macosx_10_13_" + arch}
	case "windows":
		return target{"windows-" + arch, ".dll", "win_amd64"}
	default:
		minor := "17"
		if m := glibcRE.FindStringSubmatch(glibc); m != nil {
			minor = m[1]
		}
		return target{goos + "-" + arch, ".so", "manylinux_2_" + minor + "_" + arch}
	}
}

// output is a file a build step writes and where it goes in a wheel.
type output struct {
	step string
	file string
	// lib: a shared library (next to the Python package); otherwise a
	// program (a console script).
	lib bool
}

// step is a rendered [[build.step]].
type step struct {
	// comment are the paragraphs of the comment above it.
	comment []string
	name    string
	run     []string
	env     [][2]string
	outputs []string
}

// plan is what release.toml declares, before rendering.
type plan struct {
	p        *Project
	h        Host
	t        target
	source   string
	steps    []step
	outs     []output
	cc, gocc bool
	// pyWheels hold the Python packages, one wheel each.
	pyWheels []pyWheel
	// native is the wheel of the native outputs, "" when there are none.
	native string
	// libDir is the package folder (in the wheels) the libraries go
	// into: the release's own package's, where its ctypes binding looks.
	libDir string
}

// pyWheel is a [[wheel]] holding one Python package.
type pyWheel struct {
	// name is the distribution name; pkg the package folder.
	name, pkg string
	// main marks the release's own distribution: named as the release,
	// the one pyproject.toml describes.
	main bool
	// pair is the wheel it requires at exactly this version, "" when none:
	// the native wheel when the libraries go into its package, else the
	// wheel of a package it imports, pairPkg.
	pair, pairPkg string
	// more are the wheels of further packages it imports, which pair
	// cannot name too.
	more []string
}

func newPlan(p *Project, h Host) *plan {
	pl := &plan{p: p, h: h, t: hostTarget(h.GOOS, h.GOARCH, h.Glibc), source: p.Name}
	if g := p.Go; g != nil {
		for _, d := range g.CShared {
			lib := "lib" + goBase(g.Path, d) + pl.t.libExt
			hdr := strings.TrimSuffix(lib, pl.t.libExt) + ".h"
			pl.steps = append(pl.steps, step{
				comment: []string{"The c-shared library of ./" + d + " (it exports C functions). -s -w and -buildid= keep paths and the build's folders out of the binary."},
				name:    stepName("lib", goBase(g.Path, d)),
				run: []string{"go", "build", "-buildmode=c-shared", "-ldflags=-s -w -buildid=",
					"-o", "${MKRELEASE_OUT}/" + lib, goPkg(d)},
				env:     [][2]string{{"CGO_ENABLED", "1"}},
				outputs: []string{lib, hdr},
			})
			pl.outs = append(pl.outs, output{step: stepName("lib", goBase(g.Path, d)), file: lib, lib: true})
			pl.gocc = true
		}
		for _, d := range g.Mains {
			bin := goBase(g.Path, d)
			if pl.t.libExt == ".dll" {
				bin += ".exe"
			}
			pl.steps = append(pl.steps, step{
				comment: []string{"The program ./" + d + ", without cgo: one static binary."},
				name:    stepName("", goBase(g.Path, d)),
				run: []string{"go", "build", "-ldflags=-s -w -buildid=",
					"-o", "${MKRELEASE_OUT}/" + bin, goPkg(d)},
				env:     [][2]string{{"CGO_ENABLED", "0"}},
				outputs: []string{bin},
			})
			pl.outs = append(pl.outs, output{step: stepName("", goBase(g.Path, d)), file: bin})
		}
	}
	switch {
	case p.Make != nil:
		lib, guessed := p.Make.Library, false
		if lib == "" {
			lib, guessed = "lib"+strings.ReplaceAll(p.Name, "-", "_")+pl.t.libExt, true
		}
		s := step{
			comment: []string{"make builds " + lib + " from the " + p.Make.File + " in the source's copy, and the step copies it into its output folder. The step exports CC (the target's) and CFLAGS: the CFLAGS of its env, if any, with mkrelease's path-mapping flags appended."},
			name:    "lib",
			run:     []string{"sh", "-c", "make " + lib + " && cp " + lib + " ${MKRELEASE_OUT}/"},
			outputs: []string{lib},
		}
		if p.Make.CFlags != "" {
			s.comment[0] += " An exported CFLAGS takes the place of the " + p.Make.File + "'s default `CFLAGS ?= " + p.Make.CFlags + "`, so env gives that default here."
			s.env = [][2]string{{"CFLAGS", p.Make.CFlags}}
		}
		if guessed {
			s.comment = append(s.comment, EditMe+": "+p.Make.File+" names no lib*.so: write the library it builds here, in `run` and `outputs`.")
		}
		pl.steps = append(pl.steps, s)
		pl.outs = append(pl.outs, output{step: "lib", file: lib, lib: true})
		pl.cc = true
	case p.CMake != nil:
		lib, guessed := p.CMake.Library, false
		if lib == "" {
			lib, guessed = "lib"+strings.ReplaceAll(p.Name, "-", "_")+pl.t.libExt, true
		}
		s := step{
			comment: []string{"CMake configures and builds in the step's own scratch folder, then the step copies " + lib + " into its output folder."},
			name:    "lib",
			run: []string{"sh", "-c", "cmake -S . -B ${TMPDIR}/build -DCMAKE_BUILD_TYPE=Release && cmake --build ${TMPDIR}/build && cp ${TMPDIR}/build/" +
				lib + " ${MKRELEASE_OUT}/"},
			outputs: []string{lib},
		}
		if guessed {
			s.comment = append(s.comment, EditMe+": CMakeLists.txt has no add_library(NAME SHARED ...): write the library it builds here, in `run` and `outputs`.")
		}
		pl.steps = append(pl.steps, s)
		pl.outs = append(pl.outs, output{step: "lib", file: lib, lib: true})
		pl.cc = true
	}
	pl.planWheels()
	return pl
}

// planWheels names the wheels: one per Python package, and one for the
// native outputs. The release's own package (named as the release, else
// the only one, else the first one when pyproject.toml describes the
// release) gets the release's name; every other package the name of its
// folder. The native wheel is the release's name plus "-native" beside
// Python packages, else the release's name. The wheel of the package the
// libraries go into pairs with the native wheel; another pairs with the
// wheel of the first package it imports.
func (pl *plan) planWheels() {
	p := pl.p
	main := -1
	for i, pkg := range p.Packages {
		if normalizeName(pkgBase(pkg)) == p.Name {
			main = i
			break
		}
	}
	if main < 0 && len(p.Packages) > 0 && (p.Pyproject != nil || len(p.Packages) == 1) {
		main = 0
	}
	used := map[string]bool{}
	if len(pl.outs) > 0 {
		pl.native = p.Name
		if len(p.Packages) > 0 {
			pl.native = p.Name + "-native"
		}
		used[pl.native] = true
	}
	if main >= 0 {
		used[p.Name] = true
	}
	byPkg := map[string]string{}
	for i, pkg := range p.Packages {
		w := pyWheel{pkg: pkg, main: i == main}
		if w.main {
			w.name = p.Name
		} else {
			w.name = normalizeName(pkgBase(pkg))
			for n := 2; used[w.name]; n++ {
				w.name = fmt.Sprintf("%s-%d", normalizeName(pkgBase(pkg)), n)
			}
			used[w.name] = true
		}
		byPkg[pkg] = w.name
		pl.pyWheels = append(pl.pyWheels, w)
	}
	lib := main
	if lib < 0 && len(p.Packages) > 0 {
		lib = 0
	}
	pl.libDir = strings.ReplaceAll(p.Name, "-", "_")
	if lib >= 0 {
		pl.libDir = pkgBase(p.Packages[lib])
	}
	for i := range pl.pyWheels {
		w := &pl.pyWheels[i]
		if pl.native != "" && i == lib {
			w.pair = pl.native
		}
		for _, other := range p.Imports[w.pkg] {
			if w.pair == "" {
				w.pair, w.pairPkg = byPkg[other], other
			} else {
				w.more = append(w.more, byPkg[other])
			}
		}
	}
}

// goBase names a Go package's program or library: its folder's last
// element, or the module's for the root package.
func goBase(module, dir string) string {
	if dir == "." {
		elems := strings.Split(module, "/")
		last := elems[len(elems)-1]
		if versionSuffixRE.MatchString(last) && len(elems) > 1 {
			last = elems[len(elems)-2]
		}
		return last
	}
	return path.Base(dir)
}

// goPkg is the package argument of go build for folder dir.
func goPkg(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir
}

// stepName makes a step name (lower-case letters, digits, . _ -).
func stepName(prefix, base string) string {
	return normalizeName(prefix + base)
}

// pkgBase is the import name of a package folder ("src/foo" → "foo").
func pkgBase(dir string) string { return path.Base(dir) }

// commentWidth is the width release.toml's comments are wrapped at.
const commentWidth = 76

// para writes text as one paragraph of comment lines, wrapped at
// commentWidth (a longer word stands on a line of its own). Line breaks in
// text are spaces.
func para(w func(string, ...any), text string) {
	line := "#"
	for _, word := range strings.Fields(text) {
		if line != "#" && len(line)+1+len(word) > commentWidth {
			w("%s", line)
			line = "#"
		}
		line += " " + word
	}
	if line != "#" {
		w("%s", line)
	}
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// oneLine keeps a rendered line of release.toml one line of TOML: a
// control character in it (a newline in a folder name a comment quotes,
// say) is written as its \uXXXX escape, which is text in a comment, the
// character itself in a basic string, and never ends the line. Values
// in strings are escaped already ([tomlString]); comments quote names found
// in the project as they are.
func oneLine(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			fmt.Fprintf(&b, `\u%04X`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isControl reports the characters TOML allows in neither a comment nor a
// basic string as they are (a tab it allows; it is escaped too, harmless).
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

func tomlArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlInline(kv [][2]string) string {
	parts := make([]string, len(kv))
	for i, e := range kv {
		parts[i] = e[0] + " = " + tomlString(e[1])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// ReleaseTOML renders the commented release.toml of project p on host h.
func ReleaseTOML(p *Project, h Host) string {
	pl := newPlan(p, h)
	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(oneLine(fmt.Sprintf(format, args...)) + "\n") }
	w("# release.toml: how mkrelease releases %s. Written by `mkrelease init`;", p.Name)
	w("# the comments say what each part is for. `mkrelease check` validates this")
	w("# file, `mkrelease lock` pins what it names into release.lock (commit both).")
	w("")
	pl.project(w)
	w("")

	w("# The project itself, as committed in git: only committed files are built,")
	w("# never the work tree's edits or its ignored files (dist/, .mkrelease/).")
	w("# The release's timestamps are this commit's time. To release a later")
	w("# commit, set commit to `git rev-parse HEAD` and run `mkrelease lock`.")
	w("[[source]]")
	w("name = %s", tomlString(pl.source))
	w("git = \".\"")
	if sup := personSupplier(h.AuthorName, h.AuthorEmail); sup != "" {
		w("# Who supplies the source, for the SBOM: the author, from git config.")
		w("supplier = %s", tomlString(sup))
	}
	if h.Commit != "" {
		w("commit = %s", tomlString(h.Commit))
	} else if h.EnclosingRepo {
		w("# %s: this folder is part of a larger git repository, and a git source", EditMe)
		w("# is a whole repository. Either keep the project in a repository of its")
		w("# own and put its `git rev-parse HEAD` here, or replace git and commit")
		w("# with local = \"FOLDER\", a folder holding the build's inputs only (not")
		w("# release.toml, release.lock or dist/).")
		w("commit = \"%s\"", EditMe)
	} else {
		w("# %s: this folder is not a git repository with a commit yet. Run", EditMe)
		w("#   git init && git add -A && git commit -m \"%s %s\"", p.Name, p.Version)
		w("# then put the output of `git rev-parse HEAD` here.")
		w("commit = \"%s\"", EditMe)
	}
	w("")

	t := pl.t
	w("# The platform built for: this machine's. Add a [[target]] per platform")
	w("# (its env sets GOOS/GOARCH or CC for that platform).")
	w("[[target]]")
	w("name = %s", tomlString(t.name))
	var env [][2]string
	if p.Go != nil {
		env = append(env, [2]string{"GOOS", h.GOOS}, [2]string{"GOARCH", h.GOARCH})
	}
	if pl.cc || pl.gocc {
		env = append(env, [2]string{"CC", "cc"})
	}
	if len(env) > 0 {
		w("env = %s", tomlInline(env))
	}
	if len(pl.outs) == 0 && len(p.Packages) > 0 {
		kind := "The wheels are"
		if len(p.Packages) == 1 {
			kind = "The wheel is"
		}
		para(w, kind+" pure Python, tagged \"any\". install_platform is the platform the bundle installs on (its dependencies are chosen for it): this machine's.")
		w("platform_tag = \"any\"")
		w("install_platform = %s", tomlString(t.installPlatform))
	}
	w("")

	pl.toolchains(w)

	if len(pl.steps) == 0 && len(p.Packages) == 0 {
		wheel := "a [[wheel]] that includes it"
		if p.Pyproject != nil {
			wheel = "a [[wheel]] named " + tomlString(p.Name) + " (the distribution pyproject.toml describes) that includes it"
		}
		para(w, EditMe+": nothing to build was found (no go.mod with a main package, no Makefile or CMakeLists.txt, "+
			"no Python package). Write the command that builds your project into ${MKRELEASE_OUT}, list what it "+
			"writes in outputs, and add "+wheel+".")
		w("[[build.step]]")
		w("name = \"build\"")
		w("source = %s", tomlString(pl.source))
		w("run = [\"sh\", \"-c\", \"echo 'EDIT ME: release.toml [[build.step]] run' >&2; exit 1\"]")
		w("")
	}
	if len(pl.steps) > 0 {
		w("# Build steps run once per target in a hermetic copy of the source")
		w("# (no network; a fixed environment), and write exactly their outputs")
		w("# into ${MKRELEASE_OUT}.")
	}
	if p.Go != nil && p.Go.NeedsVendor && len(pl.steps) > 0 {
		w("# %s: go.mod requires modules and steps cannot download them", EditMe)
		w("# (GOPROXY=off): run `go mod vendor` and commit vendor/.")
	}
	for _, s := range pl.steps {
		for _, c := range s.comment {
			para(w, c)
		}
		w("[[build.step]]")
		w("name = %s", tomlString(s.name))
		w("source = %s", tomlString(pl.source))
		w("run = %s", tomlArray(s.run))
		if len(s.env) > 0 {
			w("env = %s", tomlInline(s.env))
		}
		w("outputs = %s", tomlArray(s.outputs))
		w("")
	}

	if p.Cargo {
		para(w, EditMe+": Cargo.toml is here, and init writes no build step for Rust. If the Python packages "+
			"need the library it builds, add a [[build.step]] that runs `cargo build --release --offline` "+
			"(steps have no network: commit the crates `cargo vendor` writes) and copies the library into "+
			"${MKRELEASE_OUT}, and include it in a wheel.")
		w("")
	}
	pl.wheels(w)

	if len(pl.outs) > 0 || len(p.Packages) > 0 {
		w("# The offline install bundle: the release notes are this version's section")
		w("# of the changelog, and pythons are the CPython versions it supports")
		w("# (those found on this machine when init ran).")
		w("[bundle]")
		w("changelog = %s", tomlString(changelogPath(p)))
		pys := h.Pythons
		if len(pys) == 0 {
			w("# %s: no CPython was found on this machine; name the versions you support.", EditMe)
			pys = []string{"3.12"}
		}
		w("pythons = %s", tomlArray(pys))
		w("")
	}

	w("# The provenance is signed with a local development key that build")
	w("# creates in .mkrelease/ (git-ignored): it proves nothing to anyone else.")
	w("# A real release sets key = \"file://...\" (mkrelease keygen) and gives")
	w("# auditors the .pub.")
	w("[signing]")
	w("trusted_keys = [\".mkrelease/dev.pub\"]")
	w("")

	w("# The verifier: `mkrelease evidence run` installs each target's bundle")
	w("# offline into a fresh virtualenv and runs these lanes there")
	w("# (verifier/README.md says what to put in them).")
	w("[evidence]")
	w("verifier = \"verifier\"")
	w("")
	w("# Cases: verifier/cases.py writes one JSON line per case.")
	w("[[evidence.lane]]")
	w("name = \"smoke\"")
	w("kind = \"cases\"")
	w("run = [\"${PYTHON}\", \"${VERIFIER}/cases.py\"]")
	w("")
	w("# Throughput: fresh workers in the order candidate, reference, reference,")
	w("# candidate, each timing `steps` steps of the workload. The skeleton")
	w("# compares the release with itself; point reference at a baseline (the")
	w("# previous release, a slower fallback) through reference_env.")
	w("[[evidence.lane]]")
	w("name = \"throughput\"")
	w("kind = \"crossover\"")
	w("candidate = [\"${PYTHON}\", \"${VERIFIER}/worker.py\", \"--workload\", \"${WORKLOAD}\"]")
	w("reference = [\"${PYTHON}\", \"${VERIFIER}/worker.py\", \"--workload\", \"${WORKLOAD}\"]")
	w("steps = 8")
	w("warmups = 2")
	w("")
	w("[[evidence.lane.workload]]")
	w("name = \"checksum\"")
	w("phase = \"smoke\"")
	w("")

	w("# `mkrelease publish` refuses unless every artifact verifies and the")
	w("# evidence passes the default policies. The skeleton's crossover lane")
	w("# compares the release with itself (r is about 1), which the defaults")
	w("# (the release must be faster than its reference) refuse: these floors")
	w("# accept it. Delete them once reference is a real baseline.")
	w("[policy]")
	w("min_throughput_geomean = 0.0")
	w("min_overall = 0.8")
	w("min_phase = 0.8")
	w("min_workload = 0.7")
	w("")
	w("# The release channel: a folder any static server can serve (git-ignored).")
	w("[publish]")
	w("to = \"published\"")
	return b.String()
}

func changelogPath(p *Project) string {
	if p.Changelog != "" {
		return p.Changelog
	}
	return "CHANGELOG.md"
}

func (pl *plan) toolchains(w func(string, ...any)) {
	p := pl.p
	if p.Go == nil && !pl.cc && !pl.gocc {
		return
	}
	w("# Toolchains whose identity release.lock pins (the first line of each")
	w("# command's output); build refuses another. supplier is who distributes")
	w("# the tool, for the SBOM (NOASSERTION without it).")
	if p.Go != nil {
		w("[[toolchain]]")
		w("name = \"go\"")
		w("command = [\"go\", \"version\"]")
		w("# From go.dev; say so if yours comes from elsewhere (a distribution).")
		w("supplier = \"Organization: Google LLC\"")
		w("")
	}
	if pl.cc || pl.gocc {
		w("[[toolchain]]")
		w("name = \"cc\"")
		w("command = [\"${CC}\", \"--version\"]")
		w("per_target = true")
		if h := pl.h; h.CCSupplier != "" {
			w("# The supplier `cc --version` names; another machine's compiler may differ.")
			w("supplier = %s", tomlString(h.CCSupplier))
		} else {
			w("# supplier = \"Organization: ...\"  (the distribution your compiler comes from)")
		}
		w("")
	}
	if pl.cc && p.Make != nil {
		w("[[toolchain]]")
		w("name = \"make\"")
		w("command = [\"make\", \"--version\"]")
		if pl.h.CCSupplier != "" {
			w("# Assumed from the same distribution as cc.")
			w("supplier = %s", tomlString(pl.h.CCSupplier))
		}
		w("")
	} else if pl.cc && p.CMake != nil {
		w("[[toolchain]]")
		w("name = \"cmake\"")
		w("command = [\"cmake\", \"--version\"]")
		if pl.h.CCSupplier != "" {
			w("# Assumed from the same distribution as cc.")
			w("supplier = %s", tomlString(pl.h.CCSupplier))
		}
		w("")
	}
}

// pyWheelFields are the distribution fields of pyproject.toml's [project]
// that go to the wheel named as the release, with their release.toml keys.
var pyWheelFields = [][2]string{
	{"requires-python", "requires_python"}, {"dependencies", "requires"}, {"optional-dependencies", "extras"},
	{"classifiers", "classifiers"}, {"keywords", "keywords"}, {"scripts", "scripts"},
	{"gui-scripts", "gui_scripts"}, {"entry-points", "entry_points"},
}

// project renders [project]. With a pyproject.toml it reads the metadata
// from there (from) and writes only what the file does not give: a
// version, summary, license, readme or authors it lacks or lists as
// dynamic, each with a comment saying why it is written here.
func (pl *plan) project(w func(string, ...any)) {
	p, h, pp := pl.p, pl.h, pl.p.Pyproject
	if pp != nil {
		para(w, "The release's metadata is pyproject.toml's [project] table, read each time mkrelease runs: "+
			"its name, version, description (the summary), license, readme, urls, authors and maintainers, "+
			"and, for the wheel named as the release ("+tomlString(p.Name)+"), its requires-python, dependencies, "+
			"scripts, entry points, classifiers and keywords. Change them there: a value written here as well "+
			"must be the same, or mkrelease refuses. mkrelease reads the pyproject.toml beside this file, "+
			"not the one of the commit [[source]] names.")
		w("[project]")
		w("from = \"pyproject.toml\"")
	} else {
		w("[project]")
		w("name = %s", tomlString(p.Name))
	}

	switch {
	case pp == nil:
		para(w, "Raise the version for each release, with a section for it in "+changelogPath(p)+".")
		w("version = %s", tomlString(p.Version))
	case pp.Dynamic["version"]:
		para(w, EditMe+": pyproject.toml lists version as dynamic: its build backend computes it, and "+
			"mkrelease runs none. Write this release's version here, and as the heading of its section in "+
			changelogPath(p)+".")
		w("version = %s", tomlString(p.Version))
	case !pp.Set["version"]:
		para(w, "pyproject.toml gives no version: the release's is written here. Or add it to "+
			"pyproject.toml's [project] and delete this line.")
		w("version = %s", tomlString(p.Version))
	}

	switch {
	case pp.gives("description"):
	case pp != nil && pp.Dynamic["description"]:
		para(w, EditMe+": pyproject.toml lists description as dynamic, which mkrelease cannot compute: "+
			"write one line saying what "+p.Name+" does (the wheels' Summary) here.")
		w("# summary = \"...\"")
	case pp != nil:
		para(w, "pyproject.toml has no description: one line saying what "+p.Name+" does (the wheels' "+
			"Summary) goes here, or into pyproject.toml's description.")
		w("# summary = \"...\"")
	default:
		para(w, "One line saying what "+p.Name+" does (the wheels' Summary).")
		w("# summary = \"...\"")
	}

	pl.license(w)

	switch {
	case pp.gives("readme"):
	case p.Readme != "":
		switch {
		case pp == nil:
			para(w, "The wheels' long description.")
		case pp.Dynamic["readme"]:
			para(w, "pyproject.toml lists readme as dynamic: "+p.Readme+" is the wheels' long description.")
		default:
			para(w, "pyproject.toml names no readme: "+p.Readme+" is the wheels' long description.")
		}
		w("readme = %s", tomlString(p.Readme))
	case pp != nil && pp.Dynamic["readme"]:
		para(w, EditMe+": pyproject.toml lists readme as dynamic, which mkrelease cannot compute: "+
			"name the file of the wheels' long description here.")
		w("# readme = \"README.md\"")
	}

	switch {
	case pp.gives("authors"):
	case h.AuthorName != "" || h.AuthorEmail != "":
		const from = "git config's user.name and user.email (the wheels' Author, and the release's supplier in the SBOM)"
		switch {
		case pp == nil:
			para(w, "From "+from+".")
		case pp.Dynamic["authors"]:
			para(w, "pyproject.toml lists authors as dynamic: these are "+from+".")
		default:
			para(w, "pyproject.toml names no authors: these are "+from+".")
		}
		var kv [][2]string
		if h.AuthorName != "" {
			kv = append(kv, [2]string{"name", h.AuthorName})
		}
		if h.AuthorEmail != "" {
			kv = append(kv, [2]string{"email", h.AuthorEmail})
		}
		w("authors = [%s]", tomlInline(kv))
	default:
		if pp != nil && pp.Dynamic["authors"] {
			para(w, EditMe+": pyproject.toml lists authors as dynamic, which mkrelease cannot compute: write them here.")
		}
		para(w, "Who makes the release (the wheels' Author and the SBOM's supplier).")
		w("# authors = [{ name = \"...\", email = \"...\" }]")
	}
	if pp != nil {
		for _, f := range [][2]string{{"urls", `urls = { Homepage = "https://..." }`}, {"maintainers", `maintainers = [{ name = "...", email = "..." }]`}} {
			if pp.Dynamic[f[0]] {
				para(w, EditMe+": pyproject.toml lists "+f[0]+" as dynamic, which mkrelease cannot compute: write them here.")
				w("# %s", f[1])
			}
		}
	}
}

// license renders [project] license: nothing when pyproject.toml gives
// it, else the expression init found, or a commented line saying what to
// write.
func (pl *plan) license(w func(string, ...any)) {
	p, pp := pl.p, pl.p.Pyproject
	var why string // why release.toml writes it although there is a pyproject.toml
	switch {
	case pp.gives("license"):
		return
	case pp == nil:
	case pp.Dynamic["license"]:
		why = "pyproject.toml lists license as dynamic, which mkrelease cannot compute"
	case pp.LicenseTable:
		why = "pyproject.toml's license is a table (the form before PEP 639), not an SPDX expression"
	default:
		why = "pyproject.toml has no license"
	}
	const what = "an SPDX expression (the wheels' License-Expression)"
	switch {
	case p.License != "" && why != "":
		para(w, why+": this is the license read from "+p.LicenseFrom+", "+what+".")
		w("license = %s", tomlString(p.License))
		return
	case p.License != "":
		para(w, "The release's license, "+what+", read from "+p.LicenseFrom+".")
		w("license = %s", tomlString(p.License))
		return
	}
	var text string
	switch {
	case pp != nil && (pp.Dynamic["license"] || pp.LicenseTable): // the loader refuses it without one here
		text = EditMe + ": " + why + ": write the license here, " + what + ", e.g. \"MIT\" or \"Apache-2.0\"."
	case why != "":
		text = why + ": write the license here, " + what + ", e.g. \"MIT\" or \"Apache-2.0\"; or in pyproject.toml."
	default:
		text = "The release's license, " + what + ", e.g. \"MIT\" or \"Apache-2.0\"."
	}
	if p.LicenseHint != "" {
		text += " init wrote none, as " + p.LicenseHint + "."
	}
	para(w, text)
	w("# license = \"...\"")
}

// wheels renders the [[wheel]] tables: one per Python package, and one for
// the native outputs, which the wheel of the package the libraries go into
// requires at exactly this version (a pair).
func (pl *plan) wheels(w func(string, ...any)) {
	p := pl.p
	if len(pl.outs) == 0 && len(p.Packages) == 0 {
		return
	}
	ships := ""
	if len(p.LicenseFiles) > 0 {
		ships = " Each ships the license file" + plural(len(p.LicenseFiles)) + " " + strings.Join(p.LicenseFiles, ", ") + "."
	}
	switch {
	case len(pl.pyWheels) > 0 && pl.native != "":
		para(w, "The wheels: one per Python package, and "+tomlString(pl.native)+" for the native code."+ships)
	case len(pl.pyWheels) > 1:
		para(w, "The wheels: one per Python package, each pure Python."+ships)
	}
	describes := "It is the distribution pyproject.toml describes: its requires-python, dependencies, scripts and the rest come from there."
	for _, pw := range pl.pyWheels {
		text := tomlString(pw.name) + " holds the Python package " + pkgBase(pw.pkg) + " (the folder " + pw.pkg + "/)."
		switch {
		case pw.main && p.Pyproject != nil:
			text += " " + describes
		case p.Pyproject != nil:
			text += " pyproject.toml describes " + tomlString(p.Name) + " only: write this wheel's own requires_python, requires (its dependencies) or scripts here if it needs them."
		}
		switch {
		case pw.pair == "":
		case pw.pair == pl.native:
			text += " It requires " + tomlString(pw.pair) + " at exactly this version (pair), so pip installs the two together."
		default:
			text += " Its package imports " + pkgBase(pw.pairPkg) + ", so it requires " + tomlString(pw.pair) + " at exactly this version (pair)."
		}
		if len(pw.more) > 0 {
			text += " It also imports the packages of " + quoteList(pw.more) + ", and pair names one wheel only: list " +
				map[bool]string{true: "it", false: "them"}[len(pw.more) == 1] + " in requires, as \"NAME==VERSION\"."
		}
		para(w, text)
		if pw.main && p.Pyproject != nil {
			pl.dynamicWheelFields(w)
		}
		w("[[wheel]]")
		w("name = %s", tomlString(pw.name))
		if pw.pair != "" {
			w("pair = %s", tomlString(pw.pair))
		}
		w("")
		w("[[wheel.include]]")
		w("source = %s", tomlString(pl.source))
		w("from = %s", tomlString(pw.pkg))
		w("to = %s", tomlString(pkgBase(pw.pkg)))
		w("")
		pl.licenses(w)
	}
	if pl.native == "" {
		return
	}
	var libs, progs bool
	for _, o := range pl.outs {
		libs, progs = libs || o.lib, progs || !o.lib
	}
	text := tomlString(pl.native) + " holds the native code."
	if len(pl.pyWheels) == 0 {
		text = "The wheel, " + text
		if p.Pyproject != nil {
			text += " " + describes
		}
	}
	if libs && len(pl.pyWheels) > 0 {
		text += " Libraries go into " + pl.libDir + "/, next to the __init__.py of " + pl.libDir +
			", where a ctypes binding finds them (os.path.dirname(__file__)); change `to` if yours looks elsewhere."
	} else if libs {
		text += " Libraries go into " + pl.libDir + "/."
	}
	if progs {
		text += " Programs go on PATH (data = \"scripts\")."
	}
	para(w, text)
	if len(pl.pyWheels) == 0 && p.Pyproject != nil {
		pl.dynamicWheelFields(w)
	}
	w("[[wheel]]")
	w("name = %s", tomlString(pl.native))
	w("")
	for _, o := range pl.outs {
		w("[[wheel.include]]")
		w("step = %s", tomlString(o.step))
		w("from = %s", tomlString(o.file))
		if o.lib {
			w("to = %s", tomlString(pl.libDir+"/"+o.file))
		} else {
			w("data = \"scripts\"")
		}
		w("")
	}
	pl.licenses(w)
}

// dynamicWheelFields renders, in the wheel named as the release, what to
// write for the distribution fields pyproject.toml lists as dynamic.
func (pl *plan) dynamicWheelFields(w func(string, ...any)) {
	var fields, keys []string
	for _, f := range pyWheelFields {
		if pl.p.Pyproject.Dynamic[f[0]] {
			fields, keys = append(fields, f[0]), append(keys, f[1])
		}
	}
	if len(fields) == 0 {
		return
	}
	para(w, EditMe+": pyproject.toml lists "+joinAnd(fields)+" as dynamic, which mkrelease cannot compute: write "+joinAnd(keys)+" here.")
}

// quoteList writes names as TOML strings joined by commas and "and".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = tomlString(n)
	}
	return joinAnd(q)
}

// joinAnd joins words with commas and a last "and".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// licenses renders a wheel's [[wheel.licenses]]: every license file found.
func (pl *plan) licenses(w func(string, ...any)) {
	for _, f := range pl.p.LicenseFiles {
		w("[[wheel.licenses]]")
		w("source = %s", tomlString(pl.source))
		w("from = %s", tomlString(f))
		w("")
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
