package deps

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bundle folders of the two kinds of wheels.
const (
	// OwnDir holds the release's own wheels in a bundle.
	OwnDir = "wheels"
	// DependencyDir holds the closure in a bundle.
	DependencyDir = "dependencies"
)

// allPackages returns the own wheels and the closure, sorted by name and
// version.
func allPackages(c *Closure) []Resolved {
	all := append(slices.Clone(c.Own), c.Packages...)
	slices.SortStableFunc(all, compareResolved)
	return all
}

// RequirementsTxt renders every wheel of the bundle (the release's own
// wheels and the closure) in pip's hash-checking format, so that
//
//	pip install --no-index --find-links wheels --find-links dependencies --require-hashes -r requirements.txt
//
// installs the whole release offline: one "name==version" line per
// package, sorted by name and version, with its marker (see
// [Resolved.Marker]) and a --hash=sha256: option for each of its wheels,
// sorted. The output depends only on c.
func RequirementsTxt(c *Closure) []byte {
	var b strings.Builder
	b.WriteString("# Every wheel of this bundle, pinned by sha256 (pip hash-checking mode).\n")
	fmt.Fprintf(&b, "# Target %s (%s), CPython %s.\n", c.Target.label(), c.Target.Platform, strings.Join(c.Target.Pythons, ", "))
	fmt.Fprintf(&b, "# Install offline:\n#   pip install --no-index --find-links %s --find-links %s --require-hashes -r requirements.txt\n", OwnDir, DependencyDir)
	for _, p := range allPackages(c) {
		b.WriteString(p.Name + "==" + p.Version)
		if p.Marker != nil {
			b.WriteString(" ; " + p.Marker.String())
		}
		var hashes []string
		for _, f := range p.Files {
			hashes = append(hashes, f.SHA256)
		}
		slices.Sort(hashes)
		for _, h := range slices.Compact(hashes) {
			b.WriteString(" \\\n    --hash=sha256:" + h)
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// PylockToml renders every wheel of the bundle as a PEP 751 lock file
// (lock-version "1.0", created-by "mkrelease"): requires-python and
// environments for the target, then one [[packages]] table per package,
// sorted by name and version, with its marker, requires-python, index
// (when the input lock gave one), dependencies (informational) and wheels
// as {name, path, size, hashes}. dir gives the folder of a package's
// wheels relative to the lock file; nil means OwnDir for the release's own
// wheels and DependencyDir for the closure. The output depends only on c
// and dir.
func PylockToml(c *Closure, dir func(Resolved) string) []byte {
	if dir == nil {
		dir = func(r Resolved) string {
			if r.Own {
				return OwnDir
			}
			return DependencyDir
		}
	}
	all := allPackages(c)
	count := map[string]int{}
	version := map[string]string{}
	for _, p := range all {
		count[p.Name]++
		version[p.Name] = p.Version
	}
	var b strings.Builder
	b.WriteString("lock-version = \"1.0\"\n")
	if envs, err := environmentMarkers(c.Target); err == nil && len(envs) > 0 {
		b.WriteString("environments = [")
		for i, e := range envs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(tomlString(e))
		}
		b.WriteString("]\n")
	}
	if rp := requiresPython(c.Target.Pythons); rp != "" {
		b.WriteString("requires-python = " + tomlString(rp) + "\n")
	}
	b.WriteString("extras = []\ndependency-groups = []\ndefault-groups = []\n")
	b.WriteString("created-by = \"mkrelease\"\n")
	for _, p := range all {
		b.WriteString("\n[[packages]]\n")
		b.WriteString("name = " + tomlString(p.Name) + "\n")
		b.WriteString("version = " + tomlString(p.Version) + "\n")
		if p.Marker != nil {
			b.WriteString("marker = " + tomlString(p.Marker.String()) + "\n")
		}
		if p.RequiresPython != "" {
			b.WriteString("requires-python = " + tomlString(p.RequiresPython) + "\n")
		}
		if p.Index != "" {
			b.WriteString("index = " + tomlString(p.Index) + "\n")
		}
		if len(p.Requires) > 0 {
			b.WriteString("dependencies = [")
			for i, r := range p.Requires {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("{name = " + tomlString(r))
				if count[r] == 1 {
					b.WriteString(", version = " + tomlString(version[r]))
				}
				b.WriteString("}")
			}
			b.WriteString("]\n")
		}
		files := slices.Clone(p.Files)
		slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
		b.WriteString("wheels = [\n")
		d := strings.TrimSuffix(dir(p), "/")
		for _, f := range files {
			rel := f.Name
			if d != "" {
				rel = d + "/" + f.Name
			}
			fmt.Fprintf(&b, "  {name = %s, path = %s, size = %d, hashes = {sha256 = %s}},\n",
				tomlString(f.Name), tomlString(rel), f.Size, tomlString(f.SHA256))
		}
		b.WriteString("]\n")
	}
	b.WriteString("\n[tool.mkrelease]\n")
	b.WriteString("target = " + tomlString(c.Target.label()) + "\n")
	b.WriteString("platform = " + tomlString(c.Target.Platform) + "\n")
	b.WriteString("pythons = [")
	for i, py := range c.Target.Pythons {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tomlString(py))
	}
	b.WriteString("]\n")
	return []byte(b.String())
}

// requiresPython describes a set of CPython feature releases as a
// specifier: ">=3.L,<3.H+1", with "!=3.X.*" for releases missing in
// between; "" for none.
func requiresPython(pythons []string) string {
	var minors []int
	for _, py := range pythons {
		if _, m, err := parsePython(py); err == nil {
			minors = append(minors, m)
		}
	}
	if len(minors) == 0 {
		return ""
	}
	slices.Sort(minors)
	minors = slices.Compact(minors)
	lo, hi := minors[0], minors[len(minors)-1]
	parts := []string{fmt.Sprintf(">=3.%d", lo)}
	for m := lo + 1; m < hi; m++ {
		if !slices.Contains(minors, m) {
			parts = append(parts, fmt.Sprintf("!=3.%d.*", m))
		}
	}
	parts = append(parts, fmt.Sprintf("<3.%d", hi+1))
	return strings.Join(parts, ",")
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\u` + fmt.Sprintf("%04X", r))
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
