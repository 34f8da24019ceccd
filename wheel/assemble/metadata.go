package assemble

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// Metadata builds the core metadata of wheel w for platform tag: the fields
// real backend plugins publish, in a fixed order. licenses are the
// License-File paths (relative to .dist-info/licenses/). Metadata-Version
// is the project's (2.4, with License-Expression and License-File; or 2.2,
// with License). The classifiers are the wheel's and, for a platform wheel,
// the classifier of the tag's operating system (see [platform.Classifier]);
// a declared classifier naming another operating system is refused.
func Metadata(c *config.Config, w config.Wheel, tag string, licenses []string) (*wheel.Metadata, error) {
	p := c.Project
	m := &wheel.Metadata{}
	m.Add("Metadata-Version", p.MetadataVersion)
	m.Add("Name", w.Name)
	m.Add("Version", p.Version)
	summary := w.Summary
	if summary == "" {
		summary = p.Summary
	}
	if summary != "" {
		m.Add("Summary", summary)
	}
	addPeople(m, "Author", p.Authors)
	addPeople(m, "Maintainer", p.Maintainers)
	if p.License != "" {
		if p.MetadataVersion == "2.2" {
			m.Add("License", p.License)
		} else {
			m.Add("License-Expression", p.License)
		}
	}
	if p.MetadataVersion != "2.2" {
		for _, l := range licenses {
			m.Add("License-File", l)
		}
	}
	if len(w.Keywords) > 0 {
		m.Add("Keywords", strings.Join(w.Keywords, ","))
	}
	classifiers := append([]string(nil), w.Classifiers...)
	for _, cl := range classifiers {
		if platform.ContradictsClassifier(tag, cl) {
			return nil, fmt.Errorf("classifier %q says another operating system than the platform tag %s: remove it from the wheel's classifiers (mkrelease adds the classifier of the platform each wheel is built for)", cl, tag)
		}
	}
	own, err := platform.Classifier(tag)
	if err != nil {
		return nil, err
	}
	if own != "" && !slices.Contains(classifiers, own) {
		classifiers = append(classifiers, own)
	}
	sort.Strings(classifiers)
	for _, cl := range classifiers {
		m.Add("Classifier", cl)
	}
	if w.RequiresPython != "" {
		m.Add("Requires-Python", w.RequiresPython)
	}
	if w.Pair != "" {
		m.Add("Requires-Dist", w.Pair+"=="+p.Version)
	}
	for _, r := range w.Requires {
		req, err := pep508.ParseRequirement(r)
		if err != nil {
			return nil, fmt.Errorf("requires %q: %w", r, err)
		}
		m.Add("Requires-Dist", req.String())
	}
	if err := addExtras(m, w.Extras); err != nil {
		return nil, err
	}
	labels := make([]string, 0, len(p.URLs))
	for l := range p.URLs {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		m.Add("Project-URL", l+", "+p.URLs[l])
	}
	body := p.ReadmeText
	if p.Readme != "" {
		data, err := projectfile.ReadFile(c.Dir, p.Readme, projectfile.MaxText)
		if err != nil {
			return nil, fmt.Errorf("readme: %w", err)
		}
		body = string(data)
	}
	if p.Readme != "" || p.ReadmeText != "" {
		ct := p.ReadmeType
		if ct == "" {
			ct = contentType(p.Readme)
		}
		m.Add("Description-Content-Type", ct)
		m.Description = strings.ReplaceAll(body, "\r\n", "\n")
	}
	return m, nil
}

// addExtras writes each extra, in the order of their normalised names, as
// Provides-Extra and its requirements as Requires-Dist with the marker
// extra == "NAME" (and-ed with their own).
func addExtras(m *wheel.Metadata, extras map[string][]string) error {
	names := make(map[string]string, len(extras))
	for x := range extras {
		names[pyname.Normalize(x)] = x
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		m.Add("Provides-Extra", n)
		for _, r := range extras[names[n]] {
			req, err := pep508.ParseRequirement(r)
			if err != nil {
				return fmt.Errorf("extra %s: requires %q: %w", n, r, err)
			}
			marker := `extra == "` + n + `"`
			if req.Marker != nil {
				marker = "(" + req.Marker.String() + ") and " + marker
			}
			if req.Marker, err = pep508.ParseMarker(marker); err != nil {
				return fmt.Errorf("extra %s: requires %q: %w", n, r, err)
			}
			m.Add("Requires-Dist", req.String())
		}
	}
	return nil
}

// addPeople writes the people of role (Author or Maintainer) as core
// metadata does: those with an email as "NAME <EMAIL>" (or the bare email)
// in ROLE-email, those with a name only in ROLE, comma-separated.
func addPeople(m *wheel.Metadata, role string, people []config.Person) {
	var names, emails []string
	for _, a := range people {
		switch {
		case a.Email != "" && a.Name != "":
			emails = append(emails, a.Name+" <"+a.Email+">")
		case a.Email != "":
			emails = append(emails, a.Email)
		default:
			names = append(names, a.Name)
		}
	}
	if len(names) > 0 {
		m.Add(role, strings.Join(names, ", "))
	}
	if len(emails) > 0 {
		m.Add(role+"-email", strings.Join(emails, ", "))
	}
}

func contentType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		return "text/markdown; charset=UTF-8"
	case ".rst":
		return "text/x-rst; charset=UTF-8"
	}
	return "text/plain; charset=UTF-8"
}
