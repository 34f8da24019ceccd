package config

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/suggest"
	"github.com/pelletier/go-toml/v2"
)

// pyProject is the [project] table of a pyproject.toml (PEP 621, with the
// PEP 639 license fields) as `from` reads it. Values are as written; the
// validator checks and normalises them once they are merged into the
// release (see [validator.from]).
type pyProject struct {
	// File is the project-relative, slash-separated path of the file;
	// Shown is the path messages name it by (beside release.toml as the
	// user named it).
	File   string
	Shown  string
	SHA256 string
	pos    positions
	// set holds the keys of [project] written in the file; dynamic those
	// listed in `dynamic`.
	set     map[string]bool
	dynamic map[string]int // field → its index in dynamic

	Name, Version, Description string
	// License is the SPDX expression; LicenseLegacy is set for the table
	// form ({ file = ... } or { text = ... }) of PEP 621 before PEP 639.
	License       string
	LicenseLegacy bool
	LicenseFiles  []string
	// Readme is the project-relative path of the readme file, or ReadmeText
	// its text; ReadmeType is the content type a table form gave.
	Readme, ReadmeText, ReadmeType string
	RequiresPython                 string
	Dependencies                   []string
	Extras                         map[string][]string
	Authors, Maintainers           []Person
	Keywords, Classifiers          []string
	URLs                           map[string]string
	Scripts, GUIScripts            map[string]string
	EntryPoints                    map[string]map[string]string
}

// pyFields are the keys PEP 621 (and PEP 639, PEP 794) define in [project].
var pyFields = []string{
	"authors", "classifiers", "dependencies", "description", "dynamic", "entry-points", "gui-scripts",
	"import-names", "import-namespaces", "keywords", "license", "license-files", "maintainers", "name",
	"optional-dependencies", "readme", "requires-python", "scripts", "urls", "version",
}

// pyReadmeTypes are the content types core metadata allows for a
// description.
var pyReadmeTypes = map[string]bool{"text/plain": true, "text/x-rst": true, "text/markdown": true}

// parsePyProject reads the [project] table of the pyproject.toml bytes
// data. file is its project-relative path (relative paths in it resolve
// against its folder), shown the path messages name it by. Every problem
// of the file is returned at once; other tables ([build-system], [tool.*])
// are not read.
func parsePyProject(file, shown string, data []byte) (*pyProject, ErrorList) {
	pp := &pyProject{File: file, Shown: shown, SHA256: checksum.Bytes(data), set: map[string]bool{}, dynamic: map[string]int{}}
	var doc map[string]any
	dec := toml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeErrors(shown, err).(ErrorList)
	}
	pp.pos = indexPositions(data)
	r := pyReader{pp: pp}
	raw, ok := doc["project"]
	if !ok {
		r.errorf("project", `add a [project] table (PEP 621) with at least name = "..." , or name another file in from`, "no [project] table")
		return nil, r.errs
	}
	proj, ok := raw.(map[string]any)
	if !ok {
		r.typeError("project", raw, "a table")
		return nil, r.errs
	}
	keys := make([]string, 0, len(proj))
	for k := range proj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(pyFields, k) {
			hint := "PEP 621 keys of [project]: " + strings.Join(pyFields, ", ")
			if s := suggest.Closest(k, pyFields); s != "" {
				hint = fmt.Sprintf("did you mean %q? ", s) + hint
			}
			r.errorf("project."+k, hint, "unknown key")
			continue
		}
		pp.set[k] = true
	}
	for i, d := range r.strings("dynamic", proj["dynamic"]) {
		key := fmt.Sprintf("project.dynamic[%d]", i)
		switch {
		case !slices.Contains(pyFields, d) || d == "dynamic":
			r.errorf(key, "dynamic lists [project] keys such as \"version\"", "unknown field %q", d)
		case d == "name":
			r.errorf(key, "write the name statically: name = \"...\"", "name cannot be dynamic (PEP 621)")
		case pp.set[d]:
			r.errorf(key, "either write "+d+" in [project] or list it in dynamic, not both", "%s is listed as dynamic and also set", d)
		}
		if _, dup := pp.dynamic[d]; !dup {
			pp.dynamic[d] = i
		}
	}
	if !pp.set["name"] {
		r.errorf("project.name", `PEP 621 requires it: name = "..."`, "missing name")
	}
	pp.Name = r.str("name", proj["name"])
	pp.Version = r.str("version", proj["version"])
	pp.Description = r.str("description", proj["description"])
	pp.RequiresPython = r.str("requires-python", proj["requires-python"])
	pp.Dependencies = r.strings("dependencies", proj["dependencies"])
	pp.Keywords = r.strings("keywords", proj["keywords"])
	pp.Classifiers = r.strings("classifiers", proj["classifiers"])
	pp.LicenseFiles = r.strings("license-files", proj["license-files"])
	pp.Authors = r.people("authors", proj["authors"])
	pp.Maintainers = r.people("maintainers", proj["maintainers"])
	pp.URLs = r.table("urls", proj["urls"])
	pp.Scripts = r.table("scripts", proj["scripts"])
	pp.GUIScripts = r.table("gui-scripts", proj["gui-scripts"])
	if raw, ok := proj["entry-points"]; ok {
		groups, ok := raw.(map[string]any)
		if !ok {
			r.typeError("project.entry-points", raw, "a table of tables of strings")
		} else {
			pp.EntryPoints = map[string]map[string]string{}
			for g, entries := range groups {
				pp.EntryPoints[g] = r.table("entry-points."+g, entries)
			}
		}
	}
	r.license(proj["license"])
	r.readme(proj["readme"])
	if raw, ok := proj["optional-dependencies"]; ok {
		groups, ok := raw.(map[string]any)
		if !ok {
			r.typeError("project.optional-dependencies", raw, "a table of arrays of requirements")
		} else {
			pp.Extras = map[string][]string{}
			for x, reqs := range groups {
				pp.Extras[x] = r.strings("optional-dependencies."+x, reqs)
			}
		}
	}
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	return pp, nil
}

// pyReader reads typed values out of a decoded [project] table, recording
// a located error for each value of the wrong type.
type pyReader struct {
	pp   *pyProject
	errs ErrorList
}

func (r *pyReader) errorf(key, hint, format string, args ...any) {
	pos, _ := r.pp.pos.lookup(key)
	r.errs = append(r.errs, &Error{File: r.pp.Shown, Pos: pos, Key: key, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (r *pyReader) typeError(key string, v any, want string) {
	r.errorf(key, "this key takes "+want, "wrong type: found %s", tomlKind(v))
}

// tomlKind names the TOML type of a decoded value.
func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

func (r *pyReader) str(key string, v any) string {
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.typeError("project."+key, v, "a string")
	}
	return s
}

func (r *pyReader) strings(key string, v any) []string {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.typeError("project."+key, v, "an array of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			r.typeError(fmt.Sprintf("project.%s[%d]", key, i), e, "a string")
		}
		out = append(out, s)
	}
	return out
}

func (r *pyReader) table(key string, v any) map[string]string {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.typeError("project."+key, v, "a table of strings")
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			r.typeError("project."+key+"."+k, e, "a string")
		}
		out[k] = s
	}
	return out
}

func (r *pyReader) people(key string, v any) []Person {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.typeError("project."+key, v, `an array of tables such as { name = "...", email = "..." }`)
		return nil
	}
	out := make([]Person, 0, len(list))
	for i, e := range list {
		k := fmt.Sprintf("project.%s[%d]", key, i)
		m, ok := e.(map[string]any)
		if !ok {
			r.typeError(k, e, `a table such as { name = "...", email = "..." }`)
			continue
		}
		var p Person
		for _, f := range sortedKeys(m) {
			s, ok := m[f].(string)
			switch {
			case f != "name" && f != "email":
				r.errorf(k+"."+f, "a person has name and email only", "unknown key")
			case !ok:
				r.typeError(k+"."+f, m[f], "a string")
			case f == "name":
				p.Name = s
			default:
				p.Email = s
			}
		}
		out = append(out, p)
	}
	return out
}

// license reads `license`: an SPDX expression (PEP 639), or the table of
// PEP 621 before it, which is kept only as LicenseLegacy (see
// [validator.from]).
func (r *pyReader) license(v any) {
	switch l := v.(type) {
	case nil:
	case string:
		r.pp.License = l
	case map[string]any:
		r.pp.LicenseLegacy = true
		_, file := l["file"]
		_, text := l["text"]
		if file == text || len(l) != 1 {
			r.errorf("project.license", `the legacy table has exactly one of file or text; better, write an SPDX expression: license = "MIT"`, "invalid license table")
		}
	default:
		r.typeError("project.license", v, `an SPDX expression such as "MIT"`)
	}
}

// readme reads `readme`: a path (its content type from the extension, .md
// or .rst as PEP 621 says, and .txt) or a table with file or text and
// content-type.
func (r *pyReader) readme(v any) {
	const key = "project.readme"
	var file string
	switch rd := v.(type) {
	case nil:
		return
	case string:
		file = rd
		switch strings.ToLower(path.Ext(rd)) {
		case ".md", ".markdown", ".rst", ".txt":
		default:
			r.errorf(key, fmt.Sprintf(`write readme = { file = %q, content-type = "text/plain" } (or text/markdown, text/x-rst)`, rd),
				"cannot tell the content type of %q from its extension", rd)
		}
	case map[string]any:
		for _, k := range sortedKeys(rd) {
			s, ok := rd[k].(string)
			switch {
			case k != "file" && k != "text" && k != "content-type":
				r.errorf(key+"."+k, "the readme table has file or text, and content-type", "unknown key")
			case !ok:
				r.typeError(key+"."+k, rd[k], "a string")
			case k == "file":
				file = s
			case k == "text":
				r.pp.ReadmeText = s
			default:
				r.pp.ReadmeType = s
			}
		}
		_, hasFile := rd["file"]
		_, hasText := rd["text"]
		if hasFile == hasText {
			r.errorf(key, `set exactly one of file = "README.md" or text = "..."`, "the readme table needs one of file or text")
		}
		base, _, _ := strings.Cut(r.pp.ReadmeType, ";")
		if !pyReadmeTypes[strings.ToLower(strings.TrimSpace(base))] {
			r.errorf(key+".content-type", `content-type = "text/markdown", "text/x-rst" or "text/plain" (core metadata allows these)`, "unsupported readme content type %q", r.pp.ReadmeType)
		}
		if at, what, ok := CheckText(r.pp.ReadmeText, TextDocument); !ok {
			r.errorf(key+".text", TextDocument.Hint(), "holds %s at character %d", what, at+1)
		}
	default:
		r.typeError(key, v, `a path, or a table { file = "...", content-type = "..." }`)
		return
	}
	if file != "" {
		p, err := r.pp.projectPath(file)
		if err != "" {
			r.errorf(key, "paths in pyproject.toml are relative to its folder, use /, and stay inside the folder of release.toml", "%s", err)
		}
		r.pp.Readme = p
	}
}

// projectPath turns a path relative to the pyproject.toml's folder into one
// relative to the project (the folder of release.toml); it refuses one that
// is absolute or leaves the project.
func (pp *pyProject) projectPath(p string) (string, string) {
	switch {
	case p == "":
		return "", "empty path"
	case strings.Contains(p, "\\"):
		return "", fmt.Sprintf("%q uses a backslash", p)
	case path.IsAbs(p) || (len(p) > 1 && p[1] == ':'):
		return "", fmt.Sprintf("%q is absolute", p)
	}
	joined := path.Join(path.Dir(pp.File), p)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return "", fmt.Sprintf("%q leaves the project folder", p)
	}
	return joined, ""
}
