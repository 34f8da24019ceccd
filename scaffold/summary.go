package scaffold

import (
	"fmt"
	"strings"
)

// Summary is what init prints before the files it writes: what it
// detected in project p, where the release's metadata and license come
// from, and the wheels release.toml declares, one line each.
func Summary(p *Project, h Host) []string {
	lines := []string{"detected: " + describe(p)}
	if p.Pyproject != nil {
		lines = append(lines, `  metadata: pyproject.toml's [project], which release.toml reads (from = "pyproject.toml")`)
	}
	switch {
	case p.License != "":
		lines = append(lines, "  license: "+p.License+", from "+p.LicenseFrom)
	case p.LicenseHint != "":
		lines = append(lines, "  license: not written, "+p.LicenseHint+": write it in release.toml")
	default:
		lines = append(lines, "  license: none found: write it in release.toml")
	}
	pl := newPlan(p, h)
	for _, pw := range pl.pyWheels {
		l := "  wheel " + pw.name + ": the package " + pkgBase(pw.pkg)
		if pw.pair != "" {
			l += "; requires " + pw.pair + " at this version"
		}
		lines = append(lines, l)
	}
	if pl.native != "" {
		var files []string
		for _, o := range pl.outs {
			files = append(files, o.file)
		}
		lines = append(lines, "  wheel "+pl.native+": "+strings.Join(files, ", "))
	}
	for i, l := range lines {
		lines[i] = oneLine(l)
	}
	return lines
}

// describe says in words what init detected.
func describe(p *Project) string {
	var parts []string
	if g := p.Go; g != nil {
		parts = append(parts, fmt.Sprintf("Go module %s (%d program%s, %d c-shared librar%s)", g.Path,
			len(g.Mains), plural(len(g.Mains)), len(g.CShared), map[bool]string{true: "y", false: "ies"}[len(g.CShared) == 1]))
	}
	for _, n := range []*Native{p.Make, p.CMake} {
		if n == nil {
			continue
		}
		lib := n.Library
		if lib == "" {
			lib = "no library named"
		}
		parts = append(parts, n.File+" ("+lib+")")
	}
	if p.Cargo {
		parts = append(parts, "Cargo.toml (no step written: see the EDIT ME in release.toml)")
	}
	if len(p.Packages) > 0 {
		parts = append(parts, "Python package"+plural(len(p.Packages))+" "+strings.Join(p.Packages, ", "))
	}
	if p.Pyproject != nil {
		parts = append(parts, "pyproject.toml")
	}
	if len(parts) == 0 {
		return "nothing to build (see the EDIT ME in release.toml)"
	}
	return p.Name + " " + p.Version + ": " + strings.Join(parts, "; ")
}
