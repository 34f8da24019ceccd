package channel

import (
	"archive/zip"
	"context"
	"crypto"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testkey"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
)

// testProject is the project every test publishes.
const testProject = "vexl"

// testWheel describes one wheel of a test release.
type testWheel struct {
	name           string // as in METADATA's Name
	requiresPython string
	requires       []string
}

// testWheels are the pair of a release: a compiler and a plugin pinned to
// it, the plugin with a name that normalises ("Vexl_Plugin" is
// "vexl-plugin") and a Requires-Python that needs HTML escaping.
func testWheels(version string) []testWheel {
	return []testWheel{
		{name: "vexl", requiresPython: ">=3.8"},
		{name: "Vexl_Plugin", requiresPython: ">=3.8,<4", requires: []string{"vexl==" + version}},
	}
}

// makeWheel writes a real, installable pure-Python wheel into dir with
// the wheel package's writer and returns its path.
func makeWheel(t testing.TB, dir, version string, w testWheel) string {
	t.Helper()
	fn, err := wheel.NewFilename(w.name, version, "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	md := &wheel.Metadata{}
	md.Add("Metadata-Version", "2.1")
	md.Add("Name", w.name)
	md.Add("Version", version)
	md.Add("Summary", "test wheel "+w.name+" for the channel tests")
	if w.requiresPython != "" {
		md.Add("Requires-Python", w.requiresPython)
	}
	for _, r := range w.requires {
		md.Add("Requires-Dist", r)
	}
	meta, err := md.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	pkg := fn.Distribution
	res, err := wheel.Write(context.Background(), &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: pkg + "/__init__.py", Data: []byte(fmt.Sprintf("VERSION = %q\n", version)), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: meta, Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644},
		},
		Epoch: 1793491200,
	}, dir)
	if err != nil {
		t.Fatal(err)
	}
	return res.Path
}

// makeRelease writes every asset of a release of testProject at version
// into a new folder: the wheels, a bundle, SBOM, provenance, VSA, a
// sidecar for each, and SHA256SUMS. salt changes the bundle's bytes.
func makeRelease(t testing.TB, version, salt string) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dist-"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var reproducible []string
	for _, w := range testWheels(version) {
		reproducible = append(reproducible, makeWheel(t, dir, version, w))
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	reproducible = append(reproducible,
		write(testProject+"-"+version+"-linux-x86_64.tar.gz", "bundle "+version+salt+"\n"),
		write(testProject+"-"+version+".spdx.json", `{"spdxVersion": "SPDX-2.3", "name": "`+version+`"}`+"\n"))
	signed := []string{
		write(testProject+"-"+version+".intoto.jsonl", `{"payloadType": "application/vnd.in-toto+json"}`+"\n"),
		write(testProject+"-"+version+".vsa.intoto.jsonl", `{"predicateType": "https://slsa.dev/verification_summary/v1"}`+"\n"),
	}
	var sums checksum.Sums
	var assets []string
	for _, p := range append(slices.Clone(reproducible), signed...) {
		sha, _, err := checksum.File(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := dist.WriteSidecar(p, sha); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(reproducible, p) {
			sums = append(sums, checksum.Sum{Name: filepath.Base(p), SHA256: sha})
		}
		assets = append(assets, p, dist.SidecarPath(p))
	}
	if err := checksum.WriteSums(filepath.Join(dir, "SHA256SUMS"), sums); err != nil {
		t.Fatal(err)
	}
	return append(assets, filepath.Join(dir, "SHA256SUMS"))
}

// testSigner signs every test channel's state.
func testSigner() provenance.Signer { return testkey.Signer("channel") }

// verifyOptions trust testSigner.
func verifyOptions() VerifyOptions {
	return VerifyOptions{TrustedKeys: []crypto.PublicKey{testSigner().Public()}}
}

// release returns the Release of makeRelease's assets, signed by
// testSigner.
func release(t testing.TB, version, salt string) Release {
	return Release{Project: testProject, Version: version, Assets: makeRelease(t, version, salt), Signer: testSigner()}
}

// mustPublish publishes r into dest and fails the test on error.
func mustPublish(t testing.TB, dest string, r Release) *Result {
	t.Helper()
	res, err := Publish(context.Background(), dest, r)
	if err != nil {
		t.Fatalf("Publish(%s %s) = %v", r.Project, r.Version, err)
	}
	return res
}

// mustVerify verifies dest and fails the test on any finding.
func mustVerify(t testing.TB, dest string) *Report {
	t.Helper()
	rep, err := Verify(context.Background(), dest, verifyOptions())
	if err != nil {
		t.Fatalf("Verify(%s) = %v", dest, err)
	}
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	return rep
}

// versions returns the versions the channel at dest shows.
func versions(t testing.TB, dest string) []string {
	t.Helper()
	c, err := Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, v := range c.State().Versions {
		out = append(out, v.Version)
	}
	return out
}

// zipMember reads a member of a zip archive, independently of the code
// under test.
func zipMember(t testing.TB, archive, name string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			data, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("%s has no member %s", archive, name)
	return nil
}

// listDir returns the names in dir, sorted ("" entries for none).
func listDir(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// wheelsOf returns the wheel paths among assets.
func wheelsOf(assets []string) []string {
	var out []string
	for _, a := range assets {
		if strings.HasSuffix(a, ".whl") {
			out = append(out, a)
		}
	}
	return out
}
