package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// FileDigest is a project file the configuration was read from, besides
// release.toml: a pyproject.toml that `from` names.
type FileDigest struct {
	// Path is project-relative and slash-separated.
	Path string
	// SHA256 is the hex digest of the bytes as loaded.
	SHA256 string
}

// origin says where a value merged into the release was written: a key of
// another file (a pyproject.toml), located by its own positions.
type origin struct {
	file string
	key  string
	pos  positions
}

// locate places key (a key path of release.toml) where its value was
// written: in release.toml, or, for a value a pyproject.toml supplied, at
// the pyproject's key. It returns the file, the position and the key path
// as written in that file.
func locate(file string, pos positions, origins map[string]origin, key string) (string, Position, string) {
	for k := key; k != ""; {
		if o, ok := origins[k]; ok {
			at := o.key + key[len(k):]
			p, _ := o.pos.lookup(at)
			return o.file, p, at
		}
		i := strings.LastIndexAny(k, ".[")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	p, _ := pos.lookup(key)
	return file, p, key
}

// The fields of a pyproject.toml's [project] that describe the
// distribution itself, and go to a [[wheel]].
var pyWheelFields = []string{"classifiers", "dependencies", "entry-points", "gui-scripts", "keywords", "license-files", "optional-dependencies", "requires-python", "scripts"}

// from reads the pyproject.toml files that [project] from and [[wheel]]
// from name (relative to the folder of release.toml, dir, and read beneath
// it: a symbolic link leading out is refused, see package projectfile) and
// merges their PEP 621 metadata into c:
//
//   - [project] from gives the release's name, version, summary
//     (description), license, readme, urls, authors and maintainers, and
//     the distribution fields (requires-python, dependencies,
//     optional-dependencies, classifiers, keywords, scripts, gui-scripts,
//     entry-points) of the [[wheel]] of the
//     same name that has no from of its own;
//   - [[wheel]] from gives that wheel's name, summary and distribution
//     fields; the release-wide fields it sets must agree with [project].
//
// A value written in release.toml and in the pyproject.toml must be the
// same (names and versions compared normalised): a difference is an error
// naming both files. A field the pyproject lists in dynamic that mkrelease
// would read from it must be written in release.toml instead.
func (v *validator) from(c *Config, dir string) {
	files := map[string]*pyProject{}
	load := func(key, rel string) *pyProject {
		if rel == "" || v.bad[key] {
			return nil
		}
		n := len(v.errs)
		v.path(key, rel)
		if len(v.errs) > n {
			return nil
		}
		rel = path.Clean(rel)
		if pp, ok := files[rel]; ok {
			return pp
		}
		files[rel] = nil
		data, err := projectfile.ReadFile(dir, rel, projectfile.MaxText)
		var link *projectfile.LinkError
		switch {
		case errors.As(err, &link):
			v.errorf(key, link.Remedy(), "%s", link.Problem())
			return nil
		case errors.Is(err, os.ErrNotExist):
			v.errorf(key, "name the pyproject.toml (PEP 621) to read the metadata from, relative to the folder of release.toml", "%s: no such file", rel)
			return nil
		case err != nil:
			v.errorf(key, "name a readable pyproject.toml", "%v", err)
			return nil
		}
		pp, errs := parsePyProject(rel, filepath.Join(filepath.Dir(v.file), filepath.FromSlash(rel)), data)
		v.errs = append(v.errs, errs...)
		if pp != nil {
			files[rel] = pp
			c.MetadataFiles = append(c.MetadataFiles, FileDigest{Path: rel, SHA256: pp.SHA256})
		}
		return pp
	}

	if pp := load("project.from", c.Project.From); pp != nil {
		m := pyMerge{v: v, c: c, pp: pp}
		m.project()
		matched := false
		for i := range c.Wheels {
			w := &c.Wheels[i]
			if pp.Name != "" && pyname.Equal(w.Name, pp.Name) && w.From == "" {
				m.wheel(fmt.Sprintf("wheel[%d]", i), w, true)
				matched = true
			}
		}
		if !matched {
			var set []string
			for _, f := range pyWheelFields {
				if pp.set[f] {
					set = append(set, f)
				}
			}
			if len(set) > 0 {
				v.errorf("project.from", fmt.Sprintf("name a [[wheel]] %q, or set from = %q on the [[wheel]] it describes", pyname.Normalize(pp.Name), pp.File),
					"%s sets %s for the distribution %q, but no [[wheel]] without from of its own is named so", pp.Shown, strings.Join(set, ", "), pp.Name)
			}
		}
	}
	for i := range c.Wheels {
		w := &c.Wheels[i]
		key := fmt.Sprintf("wheel[%d]", i)
		pp := load(key+".from", w.From)
		if pp == nil {
			continue
		}
		m := pyMerge{v: v, c: c, pp: pp}
		mergeValue(m, key+".name", "name", &w.Name, pp.Name, pyname.Equal)
		m.wheel(key, w, false)
		m.releaseWide()
	}
}

// pyMerge merges one pyproject.toml into the release.
type pyMerge struct {
	v  *validator
	c  *Config
	pp *pyProject
}

// mergeValue merges the pyproject's field (a key of its [project]) into
// *dst, the value at key of release.toml: an unset *dst takes it, an equal
// one keeps its own, a different one is a conflict.
func mergeValue[T any](m pyMerge, key, field string, dst *T, val T, same func(a, b T) bool) {
	if _, dyn := m.pp.dynamic[field]; dyn && isZero(*dst) {
		m.dynamic(key, field)
		return
	}
	if !m.pp.set[field] {
		return
	}
	switch {
	case isZero(*dst):
		*dst = val
		m.v.origins[key] = origin{file: m.pp.Shown, key: "project." + field, pos: m.pp.pos}
	case !same(*dst, val):
		m.conflict(key, field, *dst, val)
	}
}

// isZero reports whether a release.toml value is unset.
func isZero[T any](v T) bool {
	switch x := any(v).(type) {
	case string:
		return x == ""
	case []string:
		return len(x) == 0
	case []Person:
		return len(x) == 0
	case map[string]string:
		return len(x) == 0
	case map[string]map[string]string:
		return len(x) == 0
	case map[string][]string:
		return len(x) == 0
	}
	return false
}

// dynamic reports a field mkrelease would read that the pyproject lists in
// dynamic, at its entry there.
func (m pyMerge) dynamic(key, field string) {
	at := fmt.Sprintf("project.dynamic[%d]", m.pp.dynamic[field])
	pos, _ := m.pp.pos.lookup(at)
	m.v.errs = append(m.v.errs, &Error{File: m.pp.Shown, Pos: pos, Key: at,
		Msg:  fmt.Sprintf("%s is dynamic: mkrelease runs no build backend, so it cannot read it from %s", field, m.pp.Shown),
		Hint: fmt.Sprintf("set %s in %s, or write %s statically in %s's [project] and remove it from dynamic", key, m.v.file, field, m.pp.Shown)})
}

// conflict reports a value written differently in release.toml (or an
// earlier pyproject.toml) and in this pyproject.toml.
func (m pyMerge) conflict(key, field string, have, val any) {
	file, pos, at := locate(m.v.file, m.v.pos, m.v.origins, key)
	ppPos, _ := m.pp.pos.lookup("project." + field)
	m.v.errs = append(m.v.errs, &Error{File: file, Pos: pos, Key: at,
		Msg:  fmt.Sprintf("%s here, but %s:%d:%d sets project.%s = %s", show(have), m.pp.Shown, ppPos.Line, ppPos.Column, field, show(val)),
		Hint: fmt.Sprintf("write it in one file only (leave %s out of %s to take %s's), or make both the same", at, file, m.pp.Shown)})
}

// show writes a value for a message, as TOML would.
func show(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = fmt.Sprintf("%q", s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case []Person:
		q := make([]string, len(x))
		for i, p := range x {
			q[i] = fmt.Sprintf("{ name = %q, email = %q }", p.Name, p.Email)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		var q []string
		for _, k := range sortedKeys(x) {
			q = append(q, fmt.Sprintf("%q = %q", k, x[k]))
		}
		return "{ " + strings.Join(q, ", ") + " }"
	case map[string]map[string]string:
		var q []string
		for _, k := range sortedKeys(x) {
			q = append(q, fmt.Sprintf("%q = %s", k, show(x[k])))
		}
		return "{ " + strings.Join(q, ", ") + " }"
	case map[string][]string:
		var q []string
		for _, k := range sortedKeys(x) {
			q = append(q, fmt.Sprintf("%q = %s", k, show(x[k])))
		}
		return "{ " + strings.Join(q, ", ") + " }"
	}
	return fmt.Sprint(v)
}

func equal(a, b string) bool { return a == b }

// sameVersion compares PEP 440 versions normalised (as written when one
// does not parse: the validator reports it).
func sameVersion(a, b string) bool {
	va, errA := pep440.Parse(a)
	vb, errB := pep440.Parse(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return va.String() == vb.String()
}

// sameSpecifiers compares PEP 440 specifier sets as normalised.
func sameSpecifiers(a, b string) bool {
	sa, errA := pep440.ParseSpecifiers(a)
	sb, errB := pep440.ParseSpecifiers(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return sa.String() == sb.String()
}

// sameRequirements compares lists of PEP 508 requirements as normalised
// (names too).
func sameRequirements(a, b []string) bool {
	return slices.EqualFunc(a, b, func(x, y string) bool {
		rx, errX := pep508.ParseRequirement(x)
		ry, errY := pep508.ParseRequirement(y)
		if errX != nil || errY != nil {
			return x == y
		}
		rx.Name, ry.Name = rx.NormalizedName(), ry.NormalizedName()
		return rx.String() == ry.String()
	})
}

// sameExtras compares extras by normalised name, their requirements as
// sameRequirements does.
func sameExtras(a, b map[string][]string) bool {
	norm := func(m map[string][]string) map[string][]string {
		out := make(map[string][]string, len(m))
		for k, v := range m {
			out[pyname.Normalize(k)] = v
		}
		return out
	}
	return maps.EqualFunc(norm(a), norm(b), sameRequirements)
}

func sameEntryPoints(a, b map[string]map[string]string) bool {
	return maps.EqualFunc(a, b, func(x, y map[string]string) bool { return maps.Equal(x, y) })
}

// project merges the release-wide fields of [project] from.
func (m pyMerge) project() {
	p := &m.c.Project
	mergeValue(m, "project.name", "name", &p.Name, m.pp.Name, pyname.Equal)
	mergeValue(m, "project.version", "version", &p.Version, m.pp.Version, sameVersion)
	mergeValue(m, "project.summary", "description", &p.Summary, m.pp.Description, equal)
	m.license(&p.License, "project.license")
	m.readme(p)
	mergeValue(m, "project.urls", "urls", &p.URLs, m.pp.URLs, maps.Equal)
	mergeValue(m, "project.authors", "authors", &p.Authors, m.pp.Authors, slices.Equal)
	mergeValue(m, "project.maintainers", "maintainers", &p.Maintainers, m.pp.Maintainers, slices.Equal)
}

// releaseWide checks the release-wide fields a [[wheel]] from's file sets
// against [project]: core metadata takes them from [project] for every
// wheel, so the file may not say otherwise, nor say what [project] does not.
func (m pyMerge) releaseWide() {
	p := m.c.Project
	check := func(key, field string, have, val any, zero bool, same bool) {
		switch {
		case !m.pp.set[field]:
		case zero:
			m.v.errs = append(m.v.errs, &Error{File: m.pp.Shown, Pos: m.pp.posOf(field), Key: "project." + field,
				Msg:  fmt.Sprintf("%s gives %s for every wheel of the release; [project] does not set it", m.v.file, field),
				Hint: fmt.Sprintf("set %s in %s (or [project] from = %q), or remove it from %s", key, m.v.file, m.pp.File, m.pp.Shown)})
		case !same:
			m.conflict(key, field, have, val)
		}
	}
	check("project.version", "version", p.Version, m.pp.Version, p.Version == "", sameVersion(p.Version, m.pp.Version))
	if m.pp.LicenseLegacy {
		m.license(&p.License, "project.license")
	} else {
		check("project.license", "license", p.License, m.pp.License, p.License == "", p.License == m.pp.License)
	}
	check("project.readme", "readme", p.Readme, m.pp.Readme, p.Readme == "" && p.ReadmeText == "", p.Readme == m.pp.Readme && p.ReadmeText == m.pp.ReadmeText)
	check("project.urls", "urls", p.URLs, m.pp.URLs, len(p.URLs) == 0, maps.Equal(p.URLs, m.pp.URLs))
	check("project.authors", "authors", p.Authors, m.pp.Authors, len(p.Authors) == 0, slices.Equal(p.Authors, m.pp.Authors))
	check("project.maintainers", "maintainers", p.Maintainers, m.pp.Maintainers, len(p.Maintainers) == 0, slices.Equal(p.Maintainers, m.pp.Maintainers))
}

func (pp *pyProject) posOf(field string) Position {
	p, _ := pp.pos.lookup("project." + field)
	return p
}

// license merges the license: an SPDX expression as any field; the table
// form before PEP 639 only where release.toml gives the expression.
func (m pyMerge) license(dst *string, key string) {
	if !m.pp.LicenseLegacy {
		mergeValue(m, key, "license", dst, m.pp.License, equal)
		return
	}
	if *dst == "" {
		m.v.errs = append(m.v.errs, &Error{File: m.pp.Shown, Pos: m.pp.posOf("license"), Key: "project.license",
			Msg:  "a license table (file or text, before PEP 639) is no SPDX license expression, which core metadata 2.4 requires",
			Hint: fmt.Sprintf(`write license = "MIT" (the SPDX expression, PEP 639) and license-files = ["LICENSE"] in %s, or set license in %s [project] (it then takes precedence over the table)`, m.pp.Shown, m.v.file)})
	}
}

// readme merges the readme: a file (its path made project-relative) or an
// inline text, with the content type a table gives.
func (m pyMerge) readme(p *Project) {
	if _, dyn := m.pp.dynamic["readme"]; dyn && p.Readme == "" {
		m.dynamic("project.readme", "readme")
		return
	}
	if !m.pp.set["readme"] {
		return
	}
	switch {
	case p.Readme == "":
		p.Readme, p.ReadmeText, p.ReadmeType = m.pp.Readme, m.pp.ReadmeText, m.pp.ReadmeType
		m.v.origins["project.readme"] = origin{file: m.pp.Shown, key: "project.readme", pos: m.pp.pos}
	case p.Readme != m.pp.Readme:
		val := m.pp.Readme
		if val == "" {
			val = "(inline text)"
		}
		m.conflict("project.readme", "readme", p.Readme, val)
	default:
		p.ReadmeType = m.pp.ReadmeType
	}
}

// wheel merges the distribution fields into the [[wheel]] at key. For
// [project] from (inherited), the description is the release's summary,
// which the wheel inherits: a summary of the wheel's own must agree with it.
func (m pyMerge) wheel(key string, w *Wheel, inherited bool) {
	pp := m.pp
	switch {
	case !inherited:
		mergeValue(m, key+".summary", "description", &w.Summary, pp.Description, equal)
	case w.Summary != "" && pp.set["description"] && w.Summary != pp.Description:
		m.conflict(key+".summary", "description", w.Summary, pp.Description)
	}
	mergeValue(m, key+".requires_python", "requires-python", &w.RequiresPython, pp.RequiresPython, sameSpecifiers)
	mergeValue(m, key+".requires", "dependencies", &w.Requires, pp.Dependencies, sameRequirements)
	mergeValue(m, key+".extras", "optional-dependencies", &w.Extras, pp.Extras, sameExtras)
	mergeValue(m, key+".classifiers", "classifiers", &w.Classifiers, pp.Classifiers, slices.Equal)
	mergeValue(m, key+".keywords", "keywords", &w.Keywords, pp.Keywords, slices.Equal)
	mergeValue(m, key+".scripts", "scripts", &w.Scripts, pp.Scripts, maps.Equal)
	mergeValue(m, key+".gui_scripts", "gui-scripts", &w.GUIScripts, pp.GUIScripts, maps.Equal)
	mergeValue(m, key+".entry_points", "entry-points", &w.EntryPoints, pp.EntryPoints, sameEntryPoints)
	if len(pp.LicenseFiles) > 0 && len(w.Licenses) == 0 {
		m.v.errs = append(m.v.errs, &Error{File: pp.Shown, Pos: pp.posOf("license-files"), Key: "project.license-files",
			Msg:  fmt.Sprintf("wheel %q declares no [[wheel.licenses]]: mkrelease takes the license files it ships from there, not from license-files", w.Name),
			Hint: `add [[wheel.licenses]] with source = "..." and from = "LICENSE" (a file of a source's prepared tree) for each license file`})
	}
}
