package bundle

import (
	"fmt"
	"path"
	"strings"

	"github.com/mkrelease/mkrelease/bundle/deps"
)

// licenseFile renders the license record of one component: what it
// declares (License-Expression, License, license classifiers) and the text
// of every license file its wheel carries. A component with none of these
// is listed as such, never dropped.
func licenseFile(p deps.Resolved, role string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s)\n", p.Name, p.Version, role)
	b.WriteString(strings.Repeat("=", b.Len()-1) + "\n\n")
	declared := false
	if e := p.License.Expression; e != "" {
		fmt.Fprintf(&b, "License-Expression: %s\n", e)
		declared = true
	}
	if t := strings.TrimSpace(p.License.Text); t != "" {
		if strings.Contains(t, "\n") {
			fmt.Fprintf(&b, "License (free text):\n%s\n", indent(t))
		} else {
			fmt.Fprintf(&b, "License: %s\n", t)
		}
		declared = true
	}
	for _, c := range p.License.Classifiers {
		fmt.Fprintf(&b, "Classifier: %s\n", c)
		declared = true
	}
	if sbomID := declaredLicense(p.License); sbomID != "" {
		fmt.Fprintf(&b, "Declared in the SBOM as: %s\n", sbomID)
	}
	if !declared {
		b.WriteString("License: NO LICENSE INFORMATION FOUND in this wheel's metadata\n")
	}
	if len(p.LicenseFiles) == 0 {
		b.WriteString("License files: none in the wheel\n")
	}
	for _, f := range p.LicenseFiles {
		fmt.Fprintf(&b, "\n--- %s ---\n", f.Path)
		if f.Data == nil {
			b.WriteString("(too large to include; see the file in the wheel)\n")
			continue
		}
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// licenseEntries returns licenses/NAME-VERSION.txt for every component and
// licenses/THIRD_PARTY_LICENSES.txt joining the dependencies' records.
func licenseEntries(cl *deps.Closure) map[string][]byte {
	out := map[string][]byte{}
	var third strings.Builder
	third.WriteString("Third-party components of this bundle and their licenses.\n")
	third.WriteString("Each component also has its own file in this folder.\n")
	if len(cl.Packages) == 0 {
		third.WriteString("\nThis bundle has no third-party components.\n")
	}
	for _, p := range cl.Own {
		out[path.Join("licenses", p.Name+"-"+p.Version+".txt")] = licenseFile(p, "part of this release")
	}
	for _, p := range cl.Packages {
		rec := licenseFile(p, "third-party dependency")
		out[path.Join("licenses", p.Name+"-"+p.Version+".txt")] = rec
		third.WriteString("\n\n")
		third.Write(rec)
	}
	out["licenses/THIRD_PARTY_LICENSES.txt"] = []byte(third.String())
	return out
}
