package sbom_test

import (
	"fmt"
	"strings"

	"github.com/mkrelease/mkrelease/sbom"
)

func Example() {
	digest := strings.Repeat("ab", 32)
	r := sbom.Release{
		Name:     "vexl",
		Version:  "0.3.0",
		License:  "Apache-2.0",
		Supplier: "Organization: vexl release team (release@vexl.invalid)",
		Created:  1793491200, // SOURCE_DATE_EPOCH
		Tool:     "mkrelease-0.1.0-dev",
		Targets: []sbom.Target{{
			Name: "linux-x86_64",
			Wheels: []sbom.Package{
				{Name: "vexl-compiler", Version: "0.3.0", FileName: "vexl_compiler-0.3.0-py3-none-manylinux_2_34_x86_64.whl", SHA256: digest},
				{Name: "vexl-plugin", Version: "0.3.0", FileName: "vexl_plugin-0.3.0-py3-none-manylinux_2_34_x86_64.whl", SHA256: digest,
					DependsOn: []string{"vexl-compiler"}},
			},
		}},
	}
	data, err := sbom.Generate(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := sbom.CheckNamespace(data); err != nil {
		fmt.Println(err)
		return
	}
	s, err := sbom.Parse(data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Created)
	for _, rel := range s.Relationships {
		fmt.Println(rel.From, rel.Type, rel.To)
	}
	// Output:
	// 2026-11-01T00:00:00Z
	// SPDXRef-DOCUMENT DESCRIBES SPDXRef-Package-release-vexl-0.3.0
	// SPDXRef-Package-release-vexl-0.3.0 CONTAINS SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0
	// SPDXRef-Package-release-vexl-0.3.0 CONTAINS SPDXRef-Package-wheel-linux-x86-64-vexl-plugin-0.3.0
	// SPDXRef-Package-wheel-linux-x86-64-vexl-plugin-0.3.0 DEPENDS_ON SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0
}
