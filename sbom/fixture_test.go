package sbom

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/mkrelease/mkrelease/internal/pin"
)

// Digests of made-up contents, computed here so the tests own their
// expected values.
func sum256(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
func sum1(s string) string   { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]) }
func h1(s string) string {
	h := sha256.Sum256([]byte(s))
	return "h1:" + base64.StdEncoding.EncodeToString(h[:])
}

// epoch is 2026-11-01T00:00:00Z, the embedded default's SOURCE_DATE_EPOCH.
const epoch = 1793491200

// realistic is a release like the embedded default's, with every kind of
// element: two targets, the compiler/plugin pair, dependencies with and
// without license and supplier, git, archive and local sources (with and
// without supplier), overlays (patch and tree), toolchains for every target
// and per target (with and without supplier), bundles.
func realistic() Release {
	r := Release{
		Name:     "vexl",
		Version:  "0.3.0",
		License:  "Apache-2.0",
		Supplier: "Organization: vexl release team (release@vexl.invalid)",
		Created:  epoch,
		Tool:     "mkrelease-0.1.0-dev",
		Sources: []Source{
			{Source: pin.Source{Name: "vexl", Kind: SourceLocal, Location: "backend/src", Tree: h1("vexl tree")}},
			{Source: pin.Source{Name: "vexl-python", Kind: SourceGit, Location: "https://github.com/vexl-dev/vexl-python.git",
				Commit: sum1("vexl-python commit"), Tree: h1("vexl-python tree")},
				Supplier: "Organization: vexl developers (dev@vexl.invalid)"},
			{Source: pin.Source{Name: "runtime-headers", Kind: SourceArchive, Location: "https://downloads.example.org/headers-1.2.tar.gz",
				SHA256: sum256("headers archive"), Tree: h1("headers tree")},
				Supplier: "Person: Ada Header"},
		},
		Overlays: []Overlay{
			{Name: "fused-fast-path", Source: "vexl", Path: "backend/overlays/0001-fused-fast-path.patch",
				SHA256: sum256("patch 1"), SHA1: sum1("patch 1"), Result: h1("vexl after 1")},
			{Name: "stamp-release-version", Source: "vexl", Path: "backend/overlays/0002-stamp-release-version.patch",
				SHA256: sum256("patch 2"), SHA1: sum1("patch 2"), Result: h1("vexl after 2")},
			{Name: "extra-headers", Source: "runtime-headers", Path: "backend/overlays/headers", Tree: h1("overlay tree")},
		},
		Toolchains: []Toolchain{
			{Name: "go", Version: "go version go1.26.8 linux/amd64", Supplier: "Organization: Google LLC"},
			{Name: "cc", Target: "linux-x86_64", Version: "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"},
			{Name: "cc", Target: "linux-aarch64", Version: "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0"},
		},
	}
	for _, tc := range []struct{ target, tag string }{
		{"linux-x86_64", "manylinux_2_34_x86_64"},
		{"linux-aarch64", "manylinux_2_34_aarch64"},
	} {
		whl := func(dist, version, tag string) string { return dist + "-" + version + "-py3-none-" + tag + ".whl" }
		t := Target{
			Name: tc.target,
			Wheels: []Package{
				{Name: "vexl-compiler", Version: "0.3.0", FileName: whl("vexl_compiler", "0.3.0", tc.tag),
					SHA256: sum256("compiler " + tc.target), DependsOn: []string{"numpy"}},
				{Name: "vexl-plugin", Version: "0.3.0", FileName: whl("vexl_plugin", "0.3.0", tc.tag),
					SHA256: sum256("plugin " + tc.target), DependsOn: []string{"vexl_compiler", "packaging"}},
			},
			Dependencies: []Package{
				{Name: "numpy", Version: "2.1.3", FileName: "numpy-2.1.3-cp312-cp312-" + tc.tag + ".whl",
					SHA256: sum256("numpy " + tc.target), License: "BSD-3-Clause",
					Supplier:         "Person: Travis E. Oliphant et al.",
					DownloadLocation: "https://files.pythonhosted.org/packages/numpy-2.1.3-cp312-cp312-" + tc.tag + ".whl"},
				{Name: "packaging", Version: "24.2", FileName: "packaging-24.2-py3-none-any.whl",
					SHA256: sum256("packaging")},
				// Nothing records requiring it: the release depends on it.
				{Name: "Typing_Extensions", Version: "4.12.2", FileName: "typing_extensions-4.12.2-py3-none-any.whl",
					SHA256: sum256("typing-extensions"), License: "PSF-2.0", DownloadLocation: "NOASSERTION"},
			},
			Bundle: &File{Name: "vexl-0.3.0-" + tc.target + ".tar.gz",
				SHA256: sum256("bundle " + tc.target), SHA1: sum1("bundle " + tc.target)},
		}
		r.Targets = append(r.Targets, t)
	}
	return r
}

// oneTarget is the document of target name inside its bundle, from the
// release r: that target alone (without its bundle, which cannot describe
// itself), everything else as in r.
func oneTarget(r Release, name string) Release {
	r.Target = name
	var keep []Target
	for _, t := range r.Targets {
		if t.Name == name {
			t.Bundle = nil
			keep = append(keep, t)
		}
	}
	r.Targets = keep
	return r
}
