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
}

func newPlan(p *Project, h Host) *plan {
	pl := &plan{p: p, h: h, t: hostTarget(h.GOOS, h.GOARCH, h.Glibc), source: p.Name}
	if g := p.Go; g != nil {
		for _, d := range g.CShared {
			lib := "lib" + goBase(g.Path, d) + pl.t.libExt
			hdr := strings.TrimSuffix(lib, pl.t.libExt) + ".h"
			pl.steps = append(pl.steps, step{
				comment: []string{
					"The c-shared library of ./" + d + " (it exports C functions). -s -w and",
					"-buildid= keep paths and the build's folders out of the binary.",
				},
				name: stepName("lib", goBase(g.Path, d)),
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
			comment: []string{
				"make builds " + lib + " from the " + p.Make.File + " in the source's copy;",
				"the step copies it into its output folder. mkrelease appends only",
				"path-mapping flags to CFLAGS, and sets CC from the target.",
			},
			name:    "lib",
			run:     []string{"sh", "-c", "make " + lib + " && cp " + lib + " ${MKRELEASE_OUT}/"},
			outputs: []string{lib},
		}
		if p.Make.CFlags != "" {
			s.comment = append(s.comment, "The step exports CFLAGS, which replaces "+p.Make.File+"'s own",
				"`CFLAGS ?= "+p.Make.CFlags+"`: env gives that default here.")
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
			comment: []string{
				"CMake configures and builds in the step's own scratch folder, then",
				"the step copies " + lib + " into its output folder.",
			},
			name: "lib",
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
	return pl
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
	w("# every table says what it is for. `mkrelease check` validates this file,")
	w("# `mkrelease lock` pins what it names into release.lock (commit both).")
	w("")
	w("[project]")
	if p.Pyproject {
		w("# Name and version come from pyproject.toml: keep the two files in step.")
	}
	w("name = %s", tomlString(p.Name))
	w("version = %s", tomlString(p.Version))
	if p.Summary != "" {
		w("summary = %s", tomlString(p.Summary))
	} else {
		w("# One line saying what %s does (the wheels' Summary).", p.Name)
		w("# summary = \"...\"")
	}
	w("# An SPDX license expression, e.g. \"MIT\" or \"Apache-2.0\" (License-Expression).")
	w("# license = \"...\"")
	if p.Readme != "" {
		w("readme = %s", tomlString(p.Readme))
	}
	if h.AuthorName != "" || h.AuthorEmail != "" {
		w("# From git config user.name and user.email.")
		var kv [][2]string
		if h.AuthorName != "" {
			kv = append(kv, [2]string{"name", h.AuthorName})
		}
		if h.AuthorEmail != "" {
			kv = append(kv, [2]string{"email", h.AuthorEmail})
		}
		w("authors = [%s]", tomlInline(kv))
	} else {
		w("# Who makes the release (the wheels' Author and the SBOM's supplier).")
		w("# authors = [{ name = \"...\", email = \"...\" }]")
	}
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
		w("# Pure-Python wheels: tagged \"any\". The platform the bundle installs")
		w("# on (its dependencies are chosen for it): this machine's C library.")
		w("platform_tag = \"any\"")
		w("install_platform = %s", tomlString(t.installPlatform))
	}
	w("")

	pl.toolchains(w)

	if len(pl.steps) == 0 && len(p.Packages) == 0 {
		w("# %s: nothing to build was found (no go.mod with a main package, no", EditMe)
		w("# Makefile or CMakeLists.txt, no Python package). Write the command that")
		w("# builds your project into ${MKRELEASE_OUT}, list what it writes in")
		w("# outputs, and add a [[wheel]] that includes it.")
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
			w("# %s", c)
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

// wheels renders the [[wheel]] tables: the Python packages and the native
// outputs in one pair (the packages' wheel requires the native wheel at
// exactly this version), or one wheel when there is only one kind.
func (pl *plan) wheels(w func(string, ...any)) {
	p := pl.p
	if len(pl.outs) == 0 && len(p.Packages) == 0 {
		return
	}
	native := p.Name
	// libDir is where libraries go: next to the (first) package's
	// __init__.py, where a ctypes binding looks for them.
	libDir := strings.ReplaceAll(p.Name, "-", "_")
	if len(p.Packages) > 0 {
		libDir = pkgBase(p.Packages[0])
	}
	if len(p.Packages) > 0 {
		native = p.Name + "-native"
		w("# The wheels: %s holds the Python package%s, and requires", p.Name, plural(len(p.Packages)))
		if len(pl.outs) > 0 {
			w("# %s (the native code) at exactly this version: a pair.", native)
		}
		w("[[wheel]]")
		w("name = %s", tomlString(p.Name))
		if len(pl.outs) > 0 {
			w("pair = %s", tomlString(native))
		}
		if p.RequiresPython != "" {
			w("requires_python = %s", tomlString(p.RequiresPython))
		}
		w("")
		for _, pkg := range p.Packages {
			w("[[wheel.include]]")
			w("source = %s", tomlString(pl.source))
			w("from = %s", tomlString(pkg))
			w("to = %s", tomlString(pkgBase(pkg)))
			w("")
		}
		pl.licenses(w)
	}
	if len(pl.outs) == 0 {
		return
	}
	if len(p.Packages) > 0 {
		w("# The native wheel. Libraries go into %s/, next to its __init__.py,", libDir)
		w("# where a ctypes binding finds them (os.path.dirname(__file__)); change")
		w("# `to` if yours looks elsewhere. Programs go on PATH (data = \"scripts\").")
	} else {
		w("# The wheel. Libraries go into %s/; programs go on PATH", libDir)
		w("# (data = \"scripts\").")
	}
	w("[[wheel]]")
	w("name = %s", tomlString(native))
	if p.RequiresPython != "" {
		w("requires_python = %s", tomlString(p.RequiresPython))
	}
	w("")
	for _, o := range pl.outs {
		w("[[wheel.include]]")
		w("step = %s", tomlString(o.step))
		w("from = %s", tomlString(o.file))
		if o.lib {
			w("to = %s", tomlString(libDir+"/"+o.file))
		} else {
			w("data = \"scripts\"")
		}
		w("")
	}
	pl.licenses(w)
}

func (pl *plan) licenses(w func(string, ...any)) {
	if pl.p.License == "" {
		return
	}
	w("[[wheel.licenses]]")
	w("source = %s", tomlString(pl.source))
	w("from = %s", tomlString(pl.p.License))
	w("")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
