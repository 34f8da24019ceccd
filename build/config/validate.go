package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/remotecache"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/spdxexpr"
)

// minEpoch is 1980-01-01T00:00:00Z, the earliest time a zip entry can carry.
const minEpoch = 315532800

var (
	identRE  = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hexRE    = regexp.MustCompile(`^[0-9a-f]+$`)
)

// reservedEnv are set by the hermetic executor; a step or target may not
// override them.
var reservedEnv = map[string]bool{
	"PATH": true, "HOME": true, "TMPDIR": true, "TZ": true, "LANG": true, "LC_ALL": true,
	"SOURCE_DATE_EPOCH": true, "GOFLAGS": true, "GOCACHE": true, "GOPATH": true,
	"GOMODCACHE": true, "GOPROXY": true, "GOTOOLCHAIN": true, "GOENV": true, "GOWORK": true,
	"GOTELEMETRY": true,
}

type validator struct {
	file string
	pos  positions
	// origins place the values a pyproject.toml supplied.
	origins map[string]origin
	errs    ErrorList
	// bad are the keys whose values hold refused characters; they are not
	// reported again by the semantic checks.
	bad map[string]bool
}

func (v *validator) errorf(key, hint, format string, args ...any) {
	if v.bad[key] {
		return
	}
	file, pos, at := locate(v.file, v.pos, v.origins, key)
	v.errs = append(v.errs, &Error{File: file, Pos: pos, Key: at, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (v *validator) config(c *Config) {
	v.project(&c.Project)
	if c.Build.SourceDateEpoch != nil && *c.Build.SourceDateEpoch < minEpoch {
		v.errorf("build.source_date_epoch", "use a time after 1980-01-01 (315532800), e.g. the date of the release commit",
			"%d is before 1980-01-01, which zip files cannot represent", *c.Build.SourceDateEpoch)
	}
	for i, name := range c.Build.PassEnv {
		key := fmt.Sprintf("build.pass_env[%d]", i)
		if !envKeyRE.MatchString(name) {
			v.errorf(key, "", "%q is not an environment variable name", name)
		} else if reservedEnv[name] || strings.HasPrefix(name, "MKRELEASE_") {
			v.errorf(key, "mkrelease sets it to a fixed value; remove it from pass_env", "%s cannot be passed through", name)
		}
	}

	targets := map[string]bool{}
	if len(c.Targets) == 0 {
		v.errorf("target", `declare at least one [[target]], e.g. name = "linux-x86_64"`, "no targets")
	}
	for i, t := range c.Targets {
		key := fmt.Sprintf("target[%d]", i)
		v.ident(key+".name", "target", t.Name, targets)
		if err := dist.CheckTargetName(t.Name); err != nil {
			v.errorf(key+".name", "rename the target", "%v", err)
		}
		v.env(key+".env", t.Env)
	}

	sources := map[string]bool{}
	if len(c.Sources) == 0 {
		v.errorf("source", `declare at least one [[source]], e.g. local = "src"`, "no sources")
	}
	for i, s := range c.Sources {
		v.source(fmt.Sprintf("source[%d]", i), s, sources)
	}

	overlays := map[string]bool{}
	for i, o := range c.Overlays {
		key := fmt.Sprintf("overlay[%d]", i)
		v.ident(key+".name", "overlay", o.Name, overlays)
		v.ref(key+".source", "source", o.Source, sources)
		switch {
		case o.Patch != "" && o.Tree != "":
			v.errorf(key+".tree", "split it into two overlays", "an overlay is a patch or a tree, not both")
		case o.Patch == "" && o.Tree == "":
			v.errorf(key, `set patch = "path/to/file.patch" or tree = "path/to/folder"`, "overlay %q has neither patch nor tree", o.Name)
		case o.Patch != "":
			v.path(key+".patch", o.Patch)
		default:
			v.path(key+".tree", o.Tree)
		}
	}

	toolchains := map[string]bool{}
	for i, tc := range c.Toolchains {
		key := fmt.Sprintf("toolchain[%d]", i)
		v.ident(key+".name", "toolchain", tc.Name, toolchains)
		if len(tc.Command) == 0 || tc.Command[0] == "" {
			v.errorf(key+".command", `e.g. command = ["go", "version"]`, "toolchain %q has no command", tc.Name)
		}
		for j, t := range tc.Targets {
			v.ref(fmt.Sprintf("%s.targets[%d]", key, j), "target", t, targets)
		}
		if tc.Path != "" {
			v.path(key+".path", tc.Path)
		}
		v.supplier(key+".supplier", tc.Supplier)
	}

	steps := map[string]bool{}
	for i, s := range c.Build.Steps {
		v.step(fmt.Sprintf("build.step[%d]", i), s, steps, sources, targets)
	}
	for i, t := range c.Targets {
		if t.InstallPlatform != "" && (!tagRE.MatchString(t.InstallPlatform) || t.InstallPlatform == "any") {
			v.errorf(fmt.Sprintf("target[%d].install_platform", i), "a concrete platform tag, e.g. manylinux_2_17_x86_64", "%q is not an install platform", t.InstallPlatform)
		}
		if t.PlatformTag != "" && !tagRE.MatchString(t.PlatformTag) {
			v.errorf(fmt.Sprintf("target[%d].platform_tag", i), "e.g. manylinux_2_17_x86_64, macosx_11_0_arm64, win_amd64; or leave it out to read the tag from the binaries",
				"%q is not a platform tag", t.PlatformTag)
		}
	}

	if d := c.Dependencies; d.Lock != "" || len(d.FindLinks) > 0 || d.Index != "" {
		if d.Lock == "" {
			v.errorf("dependencies.lock", `name the lock with hashes, e.g. lock = "deps/pylock.toml" (PEP 751) or "deps/requirements.txt" (pip --require-hashes)`, "find_links/index without a lock")
		} else {
			v.path("dependencies.lock", d.Lock)
		}
		if len(d.FindLinks) == 0 && d.Index == "" {
			v.errorf("dependencies", "add find_links = [\"wheelhouse\"] or index = \"https://...\"", "a lock without find_links or index: nowhere to find its files")
		}
		for i, fl := range d.FindLinks {
			if !isURL(fl) {
				v.path(fmt.Sprintf("dependencies.find_links[%d]", i), fl)
			}
		}
		if d.Index != "" {
			if u, err := url.Parse(d.Index); err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "file") {
				v.errorf("dependencies.index", "a PEP 503/691 simple index URL: https://..., http://... or file:///...", "%q is not a supported index URL", d.Index)
			}
		}
	}
	if k := c.Signing.Key; k != "" {
		scheme, rest, ok := strings.Cut(k, "://")
		if !ok || rest == "" || !identRE.MatchString(scheme) {
			v.errorf("signing.key", `a key URI: "file://keys/release.key", "env://RELEASE_KEY", or a KMS URI such as "hashivault://NAME"`, "invalid key URI %q", k)
		}
	}
	for i, k := range c.Signing.TrustedKeys {
		v.path(fmt.Sprintf("signing.trusted_keys[%d]", i), k)
	}
	if c.Bundle.Changelog != "" {
		v.path("bundle.changelog", c.Bundle.Changelog)
	}
	seenPy := map[string]bool{}
	for i, py := range c.Bundle.Pythons {
		k := fmt.Sprintf("bundle.pythons[%d]", i)
		if !pythonRE.MatchString(py) {
			v.errorf(k, `CPython versions as "3.11"`, "invalid Python version %q", py)
		} else if seenPy[py] {
			v.errorf(k, "list each version once", "duplicate Python version %q", py)
		}
		seenPy[py] = true
	}

	v.evidence(&c.Evidence)
	v.policy(&c.Policy)
	v.cache(&c.Cache)
	if to := c.Publish.To; to != "" && !strings.HasPrefix(to, "file://") {
		if strings.Contains(to, "://") {
			v.errorf("publish.to", `a folder, or a file:// URL`, "unsupported channel %q", to)
		} else {
			v.path("publish.to", to)
		}
	}

	wheels := map[string]bool{}
	for i := range c.Wheels {
		c.Wheels[i].Name = v.wheelName(fmt.Sprintf("wheel[%d].name", i), c.Wheels[i].Name, wheels)
	}
	for i := range c.Wheels {
		v.wheel(fmt.Sprintf("wheel[%d]", i), &c.Wheels[i], c, wheels, sources, targets)
	}
	v.bundle(c)
	for i, s := range c.Build.Steps {
		v.uses(fmt.Sprintf("build.step[%d]", i), s)
	}
}

// bundle checks what the bundle stages need once wheels are declared: they
// write one bundle per target, which states its supported Pythons and
// carries the release notes of this version.
func (v *validator) bundle(c *Config) {
	if len(c.Wheels) == 0 {
		return
	}
	at := "bundle"
	if _, ok := v.pos["bundle"]; !ok {
		at = "wheel[0]" // no [bundle] table: point at what needs it
	}
	if len(c.Bundle.Pythons) == 0 {
		v.errorfAt("bundle.pythons", at, `set the CPython versions the bundles support under [bundle], e.g. pythons = ["3.11", "3.12", "3.13"]`,
			"missing: the release declares wheels, and every bundle states the Pythons it supports")
	}
	if c.Bundle.Changelog == "" {
		v.errorfAt("bundle.changelog", at, `name the changelog under [bundle], e.g. changelog = "CHANGELOG.md": its section for this version becomes RELEASE_NOTES.md`,
			"missing: the release declares wheels, and every bundle carries the release notes")
	}
	for i, t := range c.Targets {
		if t.PlatformTag != "any" || t.InstallPlatform != "" {
			continue
		}
		for _, w := range c.Wheels {
			if w.AppliesTo(t.Name) {
				v.errorf(fmt.Sprintf("target[%d].platform_tag", i), `set install_platform = "<platform tag>" (e.g. "manylinux_2_17_x86_64"): the platform its bundle installs on`,
					"target %q claims pure-Python wheels (\"any\") but names no install_platform", t.Name)
				break
			}
		}
	}
}

// uses refuses further sources whose $MKRELEASE_SOURCE_ variables would be
// the same: one would hide the other.
func (v *validator) uses(key string, s Step) {
	byVar := map[string]string{}
	for i, u := range s.Uses {
		name := executor.SourceEnv(u)
		if prev, ok := byVar[name]; ok && prev != u {
			v.errorf(fmt.Sprintf("%s.uses[%d]", key, i), "rename one of the sources: the variable keeps letters and digits, in upper case, and turns everything else into _",
				"sources %q and %q would both be $%s", prev, u, name)
		}
		byVar[name] = u
	}
}

// written reports whether the document writes key (a key path such as
// "evidence.lane[0].warmups"), rather than leaving it to its default:
// how a value written as 0 is told from an unset one.
func (v *validator) written(key string) bool {
	_, ok := v.pos[key]
	return ok
}

// errorfAt reports a problem with key, placed at key or, when the document
// does not write it, at the key at.
func (v *validator) errorfAt(key, at, hint, format string, args ...any) {
	if _, ok := v.pos[key]; ok || at == "" {
		v.errorf(key, hint, format, args...)
		return
	}
	pos, _ := v.pos.lookup(at)
	v.errs = append(v.errs, &Error{File: v.file, Pos: pos, Key: key, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

var (
	tagRE       = regexp.MustCompile(`^[a-z0-9_.]+$`)
	hostRE      = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)
	pythonRE    = regexp.MustCompile(`^3\.[0-9]{1,2}$`)
	supplierRE  = regexp.MustCompile(`^(Organization|Person): [^()\r\n]+( \([^()\r\n]*\))?$`)
	objectRefRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*(:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)?$`)
	groupRE     = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	dataSchemes = map[string]bool{"scripts": true, "data": true, "headers": true, "purelib": true, "platlib": true}
)

func (v *validator) wheelName(key, name string, seen map[string]bool) string {
	if name == "" {
		v.errorf(key, `e.g. name = "vexl-compiler"`, "missing wheel name")
		return name
	}
	if err := pyname.Valid(name); err != nil {
		v.errorf(key, "a distribution name is ASCII letters, digits and . _ -, starting and ending with a letter or digit", "invalid wheel name: %v", err)
		return name
	}
	n := pyname.Normalize(name)
	if seen[n] {
		v.errorf(key, "give each wheel its own name", "duplicate wheel %q", n)
	}
	seen[n] = true
	return n
}

func (v *validator) wheel(key string, w *Wheel, c *Config, wheels, sources, targets map[string]bool) {
	switch w.Role {
	case "", RoleCompiler, RolePlugin:
	default:
		v.errorf(key+".role", `role is "compiler" or "plugin"`, "unknown role %q", w.Role)
	}
	if w.Pair != "" {
		w.Pair = pyname.Normalize(w.Pair)
		switch {
		case w.Pair == w.Name:
			v.errorf(key+".pair", "pair names the other wheel of the pair", "wheel %q pairs with itself", w.Name)
		case !wheels[w.Pair]:
			v.errorf(key+".pair", "declare the paired [[wheel]], or fix the spelling", "unknown wheel %q", w.Pair)
		default:
			for _, t := range c.Targets {
				if other, ok := c.Wheel(w.Pair); ok && w.AppliesTo(t.Name) && !other.AppliesTo(t.Name) {
					v.errorf(key+".pair", "build both wheels of the pair for the same targets (their `targets`)",
						"wheel %q is built for target %q, its pair %q is not", w.Name, t.Name, w.Pair)
				}
			}
		}
	}
	if strings.ContainsAny(w.Summary, "\r\n") {
		v.errorf(key+".summary", "keep the summary to one line", "summary spans several lines")
	}
	if w.RequiresPython != "" {
		if _, err := pep440.ParseSpecifiers(w.RequiresPython); err != nil {
			v.errorf(key+".requires_python", `e.g. requires_python = ">=3.8"`, "invalid specifier: %v", err)
		}
	}
	for i, r := range w.Requires {
		if _, err := pep508.ParseRequirement(r); err != nil {
			v.errorf(fmt.Sprintf("%s.requires[%d]", key, i), `PEP 508, e.g. "numpy>=1.21; python_version >= '3.9'"`, "invalid requirement: %v", err)
		}
	}
	extras := map[string]string{}
	for _, x := range sortedKeys(w.Extras) {
		xk := key + ".extras." + x
		if err := pyname.Valid(x); err != nil {
			v.errorf(xk, "an extra's name is ASCII letters, digits and . _ -, starting and ending with a letter or digit", "invalid extra name: %v", err)
		} else if prev, ok := extras[pyname.Normalize(x)]; ok {
			v.errorf(xk, "give each extra one name", "extras %q and %q are the same extra", prev, x)
		}
		extras[pyname.Normalize(x)] = x
		for i, r := range w.Extras[x] {
			if _, err := pep508.ParseRequirement(r); err != nil {
				v.errorf(fmt.Sprintf("%s[%d]", xk, i), `PEP 508, e.g. "click>=8"`, "invalid requirement: %v", err)
			}
		}
	}
	for i, cl := range w.Classifiers {
		if strings.TrimSpace(cl) == "" || strings.ContainsAny(cl, "\r\n") {
			v.errorf(fmt.Sprintf("%s.classifiers[%d]", key, i), "one trove classifier per string", "invalid classifier %q", cl)
		}
	}
	for i, kw := range w.Keywords {
		if strings.TrimSpace(kw) == "" || strings.ContainsAny(kw, ",\r\n") {
			v.errorf(fmt.Sprintf("%s.keywords[%d]", key, i), "one keyword per string, without commas", "invalid keyword %q", kw)
		}
	}
	if len(w.Include) == 0 {
		v.errorf(key+".include", `add [[wheel.include]] tables, e.g. source = "py", from = "pkg", to = "pkg"`, "wheel %q includes nothing", w.Name)
	}
	for i, in := range w.Include {
		v.include(fmt.Sprintf("%s.include[%d]", key, i), in, w, c, sources, true)
	}
	for i, in := range w.Licenses {
		v.include(fmt.Sprintf("%s.licenses[%d]", key, i), in, w, c, sources, false)
	}
	for _, group := range []struct {
		name string
		m    map[string]string
	}{{"scripts", w.Scripts}, {"gui_scripts", w.GUIScripts}} {
		for _, name := range sortedKeys(group.m) {
			ref := group.m[name]
			v.entryPoint(key+"."+group.name+"."+name, name, ref)
		}
	}
	for _, g := range sortedKeys(w.EntryPoints) {
		entries := w.EntryPoints[g]
		gk := key + ".entry_points." + g
		if !groupRE.MatchString(g) {
			v.errorf(gk, "group names are dotted identifiers, e.g. vexl.backends", "invalid entry point group %q", g)
		}
		if g == "console_scripts" || g == "gui_scripts" {
			v.errorf(gk, "use the scripts / gui_scripts tables", "group %q is set through its own table", g)
		}
		for _, name := range sortedKeys(entries) {
			ref := entries[name]
			v.entryPoint(gk+"."+name, name, ref)
		}
	}
	for i, t := range w.Targets {
		v.ref(fmt.Sprintf("%s.targets[%d]", key, i), "target", t, targets)
	}
}

func (v *validator) entryPoint(key, name, ref string) {
	if name == "" || strings.ContainsAny(name, "=[\r\n") || strings.TrimSpace(name) != name {
		v.errorf(key, "entry point names have no '=', no leading '[' and no surrounding spaces", "invalid entry point name %q", name)
	}
	if !objectRefRE.MatchString(ref) {
		v.errorf(key, `write "package.module:object" (the object part may be dotted)`, "invalid object reference %q", ref)
	}
}

func (v *validator) include(key string, in Include, w *Wheel, c *Config, sources map[string]bool, placed bool) {
	switch {
	case in.Source != "" && in.Step != "":
		v.errorf(key, "take it from a source or from a step's outputs, not both", "both source and step")
	case in.Source != "":
		v.ref(key+".source", "source", in.Source, sources)
	case in.Step != "":
		found := false
		for _, s := range c.Build.Steps {
			if s.Name != in.Step {
				continue
			}
			found = true
			switch {
			case len(s.Outputs) == 0:
				v.errorf(key+".step", "name a step that declares outputs", "step %q has no outputs", in.Step)
			case in.From != "" && !s.Declares(in.From):
				v.errorf(key+".from", "name one of its outputs, or a folder holding some: "+strings.Join(s.Outputs, ", "),
					"step %q declares no output %q", in.Step, in.From)
			}
			for _, t := range c.Targets {
				if w.AppliesTo(t.Name) && in.AppliesTo(t.Name) && !s.AppliesTo(t.Name) {
					v.errorf(key+".step", "limit the include or the wheel to the step's targets (targets = [...]), or run the step for that target too",
						"step %q does not run for target %q, which wheel %q is built for", in.Step, t.Name, w.Name)
				}
			}
		}
		if !found {
			v.errorf(key+".step", "declare it as a [[build.step]], or fix the spelling", "unknown step %q", in.Step)
		}
	default:
		v.errorf(key, `set source = "name" or step = "name"`, "neither source nor step")
	}
	if in.From == "" {
		v.errorf(key+".from", "name the file or folder to take", "missing from")
	} else {
		v.path(key+".from", in.From)
	}
	if in.To != "" {
		v.path(key+".to", in.To)
		if t := strings.TrimSuffix(in.To, "/"); t != "." && path.Clean(t) != t {
			v.errorf(key+".to", `write the wheel path plainly: no "./", "//", "/./" or "/.." (a trailing "/" means "into this folder")`,
				"%q is not a clean path (it would be %q)", in.To, path.Clean(t))
		}
		if first, _, _ := strings.Cut(in.To, "/"); strings.HasSuffix(first, ".dist-info") || strings.HasSuffix(first, ".data") {
			v.errorf(key+".to", "mkrelease writes .dist-info and .data itself; use `data` for the .data schemes", "%q is reserved", in.To)
		}
	} else if placed && in.Data == "" {
		v.errorf(key+".to", "say where it goes in the wheel, e.g. to = \"pkg/bin/tool\"", "missing to")
	}
	if in.Data != "" && (!placed || !dataSchemes[in.Data]) {
		v.errorf(key+".data", "data is one of scripts, data, headers, purelib, platlib (for includes only)", "invalid data scheme %q", in.Data)
	}
	for i, t := range in.Targets {
		k := fmt.Sprintf("%s.targets[%d]", key, i)
		v.ref(k, "target", t, targetNames(c))
		if _, ok := c.Target(t); ok && !w.AppliesTo(t) {
			v.errorf(k, "name a target the wheel is built for, or add it to the wheel's targets", "wheel %q is not built for target %q", w.Name, t)
		}
	}
}

// targetNames is the set of the targets' names.
func targetNames(c *Config) map[string]bool {
	out := map[string]bool{}
	for _, t := range c.Targets {
		out[t.Name] = true
	}
	return out
}

func (v *validator) project(p *Project) {
	if p.Name == "" {
		v.errorf("project.name", `e.g. name = "vexl"`, "missing project name")
	} else if err := pyname.Valid(p.Name); err != nil {
		v.errorf("project.name", "a name is ASCII letters, digits and . _ - and starts and ends with a letter or digit (PEP 508)",
			"invalid project name: %v", err)
	} else {
		p.NormalizedName = pyname.Normalize(p.Name)
	}
	if p.Version == "" {
		v.errorf("project.version", `e.g. version = "1.2.0"`, "missing project version")
	} else if ver, err := pep440.Parse(p.Version); err != nil {
		v.errorf("project.version", "versions follow PEP 440, e.g. 1.2.0, 1.2.0rc1, 1.2.0.post1, 1!2.0",
			"invalid version: %v", err)
	} else {
		p.Version = ver.String()
	}
	switch p.MetadataVersion {
	case "":
		p.MetadataVersion = "2.4"
	case "2.4", "2.2":
	default:
		v.errorf("project.metadata_version", `"2.4" (default) or "2.2" for older uploaders`, "unsupported metadata version %q", p.MetadataVersion)
	}
	if p.License != "" {
		if err := spdxexpr.Check(p.License); err != nil {
			v.errorf("project.license", "an SPDX license expression, e.g. \"Apache-2.0\" or \"MIT OR Apache-2.0\"", "%v", err)
		}
	}
	v.supplier("project.supplier", p.Supplier)
	v.people("authors", p.Authors)
	v.people("maintainers", p.Maintainers)
	if strings.ContainsAny(p.Summary, "\r\n") {
		v.errorf("project.summary", "keep the summary to one line; put the rest in the readme", "summary spans several lines")
	}
	if p.Readme != "" {
		v.path("project.readme", p.Readme)
	}
	for _, label := range sortedKeys(p.URLs) {
		u := p.URLs[label]
		key := "project.urls." + label
		pu, err := url.Parse(u)
		if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			v.errorf(key, "write an absolute http(s) URL", "%q is not an http(s) URL", u)
		}
		if len(label) > 32 {
			v.errorf(key, "core metadata limits Project-URL labels to 32 characters", "label %q is too long", label)
		}
	}
}

// people checks the authors or maintainers of [project].
func (v *validator) people(field string, list []Person) {
	for i, a := range list {
		k := fmt.Sprintf("project.%s[%d]", field, i)
		if a.Name == "" && a.Email == "" {
			v.errorf(k, `e.g. { name = "vexl release team", email = "release@vexl.invalid" }`, "a person needs a name or an email")
		}
		if a.Email != "" && (!strings.Contains(a.Email, "@") || strings.ContainsAny(a.Email, " ,<>\r\n")) {
			v.errorf(k+".email", "one address, like name@example.org", "invalid email %q", a.Email)
		}
		if strings.ContainsAny(a.Name, ",<>\r\n") {
			v.errorf(k+".name", "no commas or angle brackets in names", "invalid name %q", a.Name)
		}
	}
}

func (v *validator) source(key string, s Source, seen map[string]bool) {
	v.ident(joinPath(key, "name"), "source", s.Name, seen)
	n := 0
	for _, x := range []string{s.Local, s.Git, s.Archive} {
		if x != "" {
			n++
		}
	}
	if n != 1 {
		v.errorf(key, `set exactly one of local = "dir", git = "URL" (with commit), archive = "path or URL" (with sha256)`,
			"source %q must have exactly one of local, git, archive (found %d)", s.Name, n)
		return
	}
	switch s.Kind() {
	case SourceLocal:
		v.path(joinPath(key, "local"), s.Local)
		v.unused(key, "commit", s.Commit != "", "local")
		v.unused(key, "sha256", s.SHA256 != "", "local")
	case SourceGit:
		if s.Commit == "" {
			v.errorf(joinPath(key, "git"), "pin the full commit id: commit = \"<40 hex digits>\" (git rev-parse HEAD)", "git source %q has no commit", s.Name)
		} else if !hexRE.MatchString(s.Commit) || (len(s.Commit) != 40 && len(s.Commit) != 64) {
			v.errorf(joinPath(key, "commit"), "pin the full commit id (git rev-parse REV); branches and tags can move", "%q is not a full commit id", s.Commit)
		}
		if !isURL(s.Git) {
			v.path(joinPath(key, "git"), s.Git)
		}
		v.unused(key, "sha256", s.SHA256 != "", "git")
	case SourceArchive:
		if !hexRE.MatchString(s.SHA256) || len(s.SHA256) != 64 {
			v.errorf(joinPath(key, "sha256"), "give the archive's digest: sha256 = \"<64 lowercase hex digits>\" (sha256sum FILE)", "archive source %q needs its sha256", s.Name)
		}
		if isURL(s.Archive) {
			if u, err := url.Parse(s.Archive); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
				v.errorf(joinPath(key, "archive"), "use an http(s) URL or a project path", "%q is not a supported URL", s.Archive)
			}
		} else {
			v.path(joinPath(key, "archive"), s.Archive)
		}
		v.unused(key, "commit", s.Commit != "", "archive")
	}
	if s.Kind() != SourceArchive || !isURL(s.Archive) {
		what := string(s.Kind())
		if s.Kind() == SourceArchive {
			what = "local archive"
		}
		v.unused(key, "max_size", s.MaxSize != 0, what)
		v.unused(key, "allow_redirect_hosts", len(s.AllowRedirectHosts) > 0, what)
	}
	if s.MaxSize < 0 {
		v.errorf(joinPath(key, "max_size"), "the largest download accepted, in bytes, e.g. max_size = 536_870_912 (512 MiB)", "invalid max_size %d", s.MaxSize)
	}
	if s.Kind() != SourceArchive {
		v.unused(key, "max_entries", s.MaxEntries != 0, string(s.Kind()))
		v.unused(key, "max_unpacked_size", s.MaxUnpackedSize != 0, string(s.Kind()))
	}
	if s.MaxEntries < 0 {
		v.errorf(joinPath(key, "max_entries"), "the most members the archive may hold, folders included, e.g. max_entries = 2_000_000 (default 1,048,576)", "invalid max_entries %d", s.MaxEntries)
	}
	if s.MaxUnpackedSize < 0 {
		v.errorf(joinPath(key, "max_unpacked_size"), "the most bytes the archive's files may hold in all, e.g. max_unpacked_size = 34_359_738_368 (32 GiB; default 16 GiB)", "invalid max_unpacked_size %d", s.MaxUnpackedSize)
	}
	for i, h := range s.AllowRedirectHosts {
		if !hostRE.MatchString(h) {
			v.errorf(fmt.Sprintf("%s.allow_redirect_hosts[%d]", key, i), `a host name in lower case, without scheme, port or path, e.g. "objects.githubusercontent.com"`, "%q is not a host name", h)
		}
	}
	switch {
	case s.Kind() == SourceLocal:
		v.unused(key, "fetch_timeout", s.FetchTimeout.Duration != 0, "local")
	case s.Kind() == SourceArchive && isURL(s.Archive):
		v.unused(key, "fetch_timeout", s.FetchTimeout.Duration != 0, "downloaded archive")
	case s.Kind() == SourceArchive:
		v.unused(key, "fetch_timeout", s.FetchTimeout.Duration != 0, "local archive")
	}
	if s.StripComponents < 0 || (s.StripComponents > 0 && s.Kind() != SourceArchive) {
		v.errorf(joinPath(key, "strip_components"), "strip_components applies to archive sources only and is >= 0", "invalid strip_components %d", s.StripComponents)
	}
	v.supplier(joinPath(key, "supplier"), s.Supplier)
}

// supplier checks an SBOM supplier (SPDX 2.3 §7.5): optional, and when
// given "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)".
func (v *validator) supplier(key, s string) {
	if s != "" && !supplierRE.MatchString(s) {
		v.errorf(key, `write "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)" (SPDX supplier; the email part is optional)`, "invalid supplier %q", s)
	}
}

func (v *validator) unused(key, field string, set bool, kind string) {
	if set {
		hint := "remove it"
		switch field {
		case "max_size", "allow_redirect_hosts":
			hint = "it applies to archives downloaded from an http(s) URL only; remove it"
		case "max_entries", "max_unpacked_size":
			hint = "it bounds extracting an archive source only; remove it"
		case "fetch_timeout":
			hint = "it bounds fetching a git source only; remove it"
		}
		v.errorf(key+"."+field, hint, "%s does not apply to a %s source", field, kind)
	}
}

func (v *validator) step(key string, s Step, seen, sources, targets map[string]bool) {
	v.ident(key+".name", "step", s.Name, seen)
	v.ref(key+".source", "source", s.Source, sources)
	if len(s.Run) == 0 || s.Run[0] == "" {
		v.errorf(key+".run", `e.g. run = ["go", "build", "-o", "${MKRELEASE_OUT}/tool", "./cmd/tool"]`, "step %q has nothing to run", s.Name)
	}
	if s.Dir != "" {
		v.path(key+".dir", s.Dir)
	}
	for i, u := range s.Uses {
		k := fmt.Sprintf("%s.uses[%d]", key, i)
		v.ref(k, "source", u, sources)
		if u == s.Source {
			v.errorf(k, "the step's own source is its working folder; list only further sources", "step %q uses its own source %q", s.Name, u)
		}
	}
	outs := map[string]bool{}
	for i, o := range s.Outputs {
		k := fmt.Sprintf("%s.outputs[%d]", key, i)
		v.path(k, o)
		if outs[path.Clean(o)] {
			v.errorf(k, "list each output once", "duplicate output %q", o)
		}
		outs[path.Clean(o)] = true
	}
	for i, t := range s.Targets {
		v.ref(fmt.Sprintf("%s.targets[%d]", key, i), "target", t, targets)
	}
	v.env(key+".env", s.Env)
}

func (v *validator) env(key string, env map[string]string) {
	for _, k := range sortedKeys(env) {
		switch {
		case !envKeyRE.MatchString(k):
			v.errorf(key+"."+k, "", "%q is not an environment variable name", k)
		case reservedEnv[k] || strings.HasPrefix(k, "MKRELEASE_"):
			v.errorf(key+"."+k, "mkrelease sets it for every step to keep builds hermetic; remove it", "%s cannot be overridden", k)
		}
	}
}

func (v *validator) ident(key, what, name string, seen map[string]bool) {
	switch {
	case name == "":
		v.errorf(key, "", "missing %s name", what)
	case !identRE.MatchString(name):
		v.errorf(key, "use lowercase letters, digits and . _ -, starting with a letter or digit", "invalid %s name %q", what, name)
	case seen[name]:
		v.errorf(key, "give each "+what+" its own name", "duplicate %s name %q", what, name)
	}
	seen[name] = true
}

func (v *validator) ref(key, what, name string, known map[string]bool) {
	if name == "" {
		v.errorf(key, "", "missing %s", what)
	} else if !known[name] {
		v.errorf(key, "declare it first, or fix the spelling", "unknown %s %q", what, name)
	}
}

// path checks a project-relative path: slash-separated, relative, clean
// enough, and not leaving the project folder.
func (v *validator) path(key, p string) {
	const hint = "paths are relative to the folder of release.toml, use /, and stay inside it"
	switch {
	case p == "":
		v.errorf(key, hint, "empty path")
	case strings.Contains(p, "\\"):
		v.errorf(key, hint, "%q uses a backslash", p)
	case path.IsAbs(p) || (len(p) > 1 && p[1] == ':'):
		v.errorf(key, hint, "%q is absolute", p)
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		v.errorf(key, hint, "%q leaves the project folder", p)
	}
}

func isURL(s string) bool {
	return strings.Contains(s, "://")
}

// sortedKeys lists a map's keys in order, so that errors come out in a
// stable order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (v *validator) evidence(e *Evidence) {
	if e.Verifier != "" {
		v.path("evidence.verifier", e.Verifier)
	}
	for i, k := range e.RecordEnv {
		if !envKeyRE.MatchString(k) {
			v.errorf(fmt.Sprintf("evidence.record_env[%d]", i), "", "%q is not an environment variable name", k)
		}
	}
	names := map[string]bool{}
	for i := range e.Lanes {
		l := &e.Lanes[i]
		key := fmt.Sprintf("evidence.lane[%d]", i)
		v.ident(key+".name", "lane", l.Name, names)
		v.env(key+".env", l.Env)
		switch l.Kind {
		case LaneCases:
			if len(l.Run) == 0 || l.Run[0] == "" {
				v.errorf(key+".run", `e.g. run = ["${PYTHON}", "${VERIFIER}/semantic.py"]`, "cases lane %q has nothing to run", l.Name)
			}
			if len(l.Workloads) > 0 || len(l.Candidate) > 0 || len(l.Reference) > 0 {
				v.errorf(key, "candidate, reference and workloads belong to crossover lanes", "cases lane %q has crossover settings", l.Name)
			}
			if l.LaneTimeout.Duration != 0 {
				v.errorf(key+".lane_timeout", "a cases lane's timeout bounds the whole lane: write timeout = \"...\" instead", "cases lane %q has lane_timeout, which bounds a crossover lane", l.Name)
			}
			if l.MaxHostLoad != nil {
				v.errorf(key+".max_host_load", "a cases lane is not timed, and the host's load is not watched while it runs: remove max_host_load", "cases lane %q has max_host_load, which bounds the host's load while a crossover lane runs", l.Name)
			}
		case LaneCrossover:
			if len(l.Candidate) == 0 || len(l.Reference) == 0 {
				v.errorf(key, `set candidate = [...] and reference = [...] (${WORKLOAD} is the workload's name)`, "crossover lane %q needs a candidate and a reference command", l.Name)
			}
			if len(l.Run) > 0 {
				v.errorf(key+".run", "a crossover lane runs candidate and reference workers; remove run", "crossover lane %q has run", l.Name)
			}
			if l.LaneTimeout.Duration == 0 {
				l.LaneTimeout.Duration = DefaultLaneTimeout
			}
			if m := l.MaxHostLoad; m != nil && (math.IsNaN(*m) || math.IsInf(*m, 0) || *m < 0) {
				v.errorf(key+".max_host_load", fmt.Sprintf("the most runnable tasks per CPU beyond the lane's own before the lane stops, e.g. max_host_load = 3; 0 turns the watch off; leave it out for the default, %g", DefaultMaxHostLoad),
					"invalid max_host_load %v", *m)
			}
			// A default only where the key is not written: steps = 0 is
			// refused below, and warmups = 0 means no warm-up (the
			// slowest step is dropped all the same).
			if l.Steps == 0 && !v.written(key+".steps") {
				l.Steps = 16
			}
			if l.Warmups == 0 && !v.written(key+".warmups") {
				l.Warmups = 3
			}
			switch {
			case l.Warmups < 0:
				v.errorf(key+".warmups", "the leading steps of each worker dropped before its timings are judged: 0 or more (default 3)", "warmups %d is negative", l.Warmups)
			case l.Steps < l.Warmups+3:
				v.errorf(key+".steps", "steps must leave at least 3 timed steps after the warm-ups (one is dropped as the slowest)", "steps %d with %d warm-ups", l.Steps, l.Warmups)
			}
			if len(l.Workloads) == 0 {
				v.errorf(key+".workload", `add [[evidence.lane.workload]] tables: name = "axpy", phase = "elementwise"`, "crossover lane %q has no workloads", l.Name)
			}
			wl := map[string]bool{}
			for j, w := range l.Workloads {
				wk := fmt.Sprintf("%s.workload[%d]", key, j)
				v.ident(wk+".name", "workload", w.Name, wl)
				if !identRE.MatchString(w.Phase) {
					v.errorf(wk+".phase", "every workload belongs to a phase, e.g. phase = \"elementwise\"", "invalid phase %q", w.Phase)
				}
			}
			v.env(key+".candidate_env", l.CandidateEnv)
			v.env(key+".reference_env", l.ReferenceEnv)
		default:
			v.errorf(key+".kind", `kind is "cases" or "crossover"`, "unknown lane kind %q", l.Kind)
		}
		if l.Timeout.Duration == 0 {
			l.Timeout.Duration = 10 * time.Minute
		}
		if l.CaseTimeout.Duration == 0 {
			l.CaseTimeout.Duration = 2 * time.Minute
		}
	}
}

func (v *validator) cache(c *Cache) {
	if c.Remote != "" {
		if err := remotecache.CheckURL(c.Remote); err != nil {
			v.errorf("cache.remote", `a Bazel HTTP remote cache, e.g. remote = "https://cache.example.org/mkrelease"; credentials come from remote_token_env or a netrc file`, "%v", err)
		}
	}
	if c.RemoteTokenEnv != "" && !envKeyRE.MatchString(c.RemoteTokenEnv) {
		v.errorf("cache.remote_token_env", `the name of an environment variable holding the token, e.g. remote_token_env = "MKRELEASE_CACHE_TOKEN"`, "%q is not an environment variable name", c.RemoteTokenEnv)
	}
	for i, k := range c.TrustedWriters {
		v.path(fmt.Sprintf("cache.trusted_writers[%d]", i), k)
	}
	switch c.RemoteMode {
	case "", RemoteModeTrust, RemoteModeVerify:
	default:
		v.errorf("cache.remote_mode", `"trust" (serve the records a trusted writer signed, the default) or "verify" (serve none: run every action and compare the records with what it made)`, "invalid remote_mode %q", c.RemoteMode)
	}
	if c.RemoteMaxSize < 0 {
		v.errorf("cache.remote_max_size", "the most bytes one action's outputs may bring from the remote cache, e.g. remote_max_size = 536_870_912 (512 MiB); leave it out for the default, 2 GiB", "invalid remote_max_size %d", c.RemoteMaxSize)
	}
}

func (v *validator) policy(p *Policy) {
	for i, f := range p.Files {
		key := fmt.Sprintf("policy.files[%d]", i)
		if !strings.HasSuffix(f, ".rego") {
			v.errorf(key, "policy files are Rego v1 modules ending in .rego", "%q is not a .rego file", f)
			continue
		}
		v.path(key, f)
	}
	for _, t := range []struct {
		key      string
		val      *float64
		min, max float64
	}{
		{"policy.min_throughput_geomean", p.MinThroughputGeomean, 0, math.MaxFloat64},
		{"policy.min_overall", p.MinOverall, 0, math.MaxFloat64},
		{"policy.min_phase", p.MinPhase, 0, math.MaxFloat64},
		{"policy.min_workload", p.MinWorkload, 0, math.MaxFloat64},
		{"policy.max_robust_cv", p.MaxRobustCV, 0, 1},
	} {
		if t.val != nil && (math.IsNaN(*t.val) || *t.val < t.min || *t.val > t.max) {
			v.errorf(t.key, fmt.Sprintf("a number from %g to %g", t.min, t.max), "invalid threshold %v", *t.val)
		}
	}
}
