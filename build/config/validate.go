package config

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
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
	errs ErrorList
}

func (v *validator) errorf(key, hint, format string, args ...any) {
	pos, _ := v.pos.lookup(key)
	v.errs = append(v.errs, &Error{File: v.file, Pos: pos, Key: key, Msg: fmt.Sprintf(format, args...), Hint: hint})
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
	}

	steps := map[string]bool{}
	for i, s := range c.Build.Steps {
		v.step(fmt.Sprintf("build.step[%d]", i), s, steps, sources, targets)
	}
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
	if strings.ContainsAny(p.Summary, "\r\n") {
		v.errorf("project.summary", "keep the summary to one line; put the rest in the readme", "summary spans several lines")
	}
	if p.Readme != "" {
		v.path("project.readme", p.Readme)
	}
	for label, u := range p.URLs {
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

func (v *validator) source(key string, s Source, seen map[string]bool) {
	v.ident(key+".name", "source", s.Name, seen)
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
		v.path(key+".local", s.Local)
		v.unused(key, "commit", s.Commit != "", "local")
		v.unused(key, "sha256", s.SHA256 != "", "local")
	case SourceGit:
		if s.Commit == "" {
			v.errorf(key+".git", "pin the full commit id: commit = \"<40 hex digits>\" (git rev-parse HEAD)", "git source %q has no commit", s.Name)
		} else if !hexRE.MatchString(s.Commit) || (len(s.Commit) != 40 && len(s.Commit) != 64) {
			v.errorf(key+".commit", "pin the full commit id (git rev-parse REV); branches and tags can move", "%q is not a full commit id", s.Commit)
		}
		if !isURL(s.Git) {
			v.path(key+".git", s.Git)
		}
		v.unused(key, "sha256", s.SHA256 != "", "git")
	case SourceArchive:
		if !hexRE.MatchString(s.SHA256) || len(s.SHA256) != 64 {
			v.errorf(key+".sha256", "give the archive's digest: sha256 = \"<64 lowercase hex digits>\" (sha256sum FILE)", "archive source %q needs its sha256", s.Name)
		}
		if isURL(s.Archive) {
			if u, err := url.Parse(s.Archive); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
				v.errorf(key+".archive", "use an http(s) URL or a project path", "%q is not a supported URL", s.Archive)
			}
		} else {
			v.path(key+".archive", s.Archive)
		}
		v.unused(key, "commit", s.Commit != "", "archive")
	}
	if s.StripComponents < 0 || (s.StripComponents > 0 && s.Kind() != SourceArchive) {
		v.errorf(key+".strip_components", "strip_components applies to archive sources only and is >= 0", "invalid strip_components %d", s.StripComponents)
	}
}

func (v *validator) unused(key, field string, set bool, kind string) {
	if set {
		v.errorf(key+"."+field, "remove it", "%s does not apply to a %s source", field, kind)
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
	for k := range env {
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
