package bundle

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/pep508"
)

// fixture is a small bundle's wheels and the closure they were written
// from: the release's wheel, a dependency with two wheels and a marker,
// and one without.
type fixture struct {
	target deps.Target
	wheels []bundleWheel
	cl     *deps.Closure
}

func digest(c byte) string { return strings.Repeat(string(c), 64) }

func newFixture(t testing.TB) fixture {
	t.Helper()
	mk, err := pep508.ParseMarker(`python_version == "3.11" or python_version == "3.12"`)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{target: deps.Target{Name: "linux-x86_64", Platform: "manylinux_2_17_x86_64", Pythons: []string{"3.11", "3.12", "3.13"}}}
	add := func(dir, name string, sha string, size int64) deps.File {
		w, err := newBundleWheel(dir+"/"+name, sha, size)
		if err != nil {
			t.Fatal(err)
		}
		f.wheels = append(f.wheels, w)
		return deps.File{Name: name, SHA256: sha, Size: size}
	}
	f.cl = &deps.Closure{Target: f.target,
		Own: []deps.Resolved{{Name: "demo-app", Version: "2.0", Own: true, RequiresPython: ">=3.8", Requires: []string{"example", "tomli"},
			Files: []deps.File{add(deps.OwnDir, "demo_app-2.0-py3-none-any.whl", digest('a'), 1046)}}},
		Packages: []deps.Resolved{
			{Name: "example", Version: "21.12", Index: "https://pypi.example/simple/",
				Files: []deps.File{add(deps.DependencyDir, "example-21.12-py3-none-any.whl", digest('b'), 1455)}},
			{Name: "tomli", Version: "2.0.1", Marker: mk, Files: []deps.File{
				add(deps.DependencyDir, "tomli-2.0.1-cp311-cp311-manylinux_2_17_x86_64.whl", digest('c'), 2000),
				add(deps.DependencyDir, "tomli-2.0.1-cp312-cp312-manylinux_2_17_x86_64.whl", digest('d'), 2001),
			}},
		},
	}
	return f
}

func (f fixture) requirements() string { return string(deps.RequirementsTxt(f.cl)) }
func (f fixture) pylock() string       { return string(deps.PylockToml(f.cl, nil)) }

func TestRequirementsTxtGeneratedPasses(t *testing.T) {
	f := newFixture(t)
	pins, ps := checkRequirementsTxt([]byte(f.requirements()), &f.target, f.wheels)
	if len(ps) != 0 {
		t.Fatalf("the generated requirements.txt is refused: %v\n%s", ps, f.requirements())
	}
	if len(pins) != 3 || pins[2].name != "tomli" || len(pins[2].hashes) != 2 || pins[2].marker == nil {
		t.Errorf("pins = %+v", pins)
	}
	if ps := checkPylockToml([]byte(f.pylock()), &f.target, pins, f.wheels); len(ps) != 0 {
		t.Fatalf("the generated pylock.toml is refused: %v\n%s", ps, f.pylock())
	}
}

// TestRequirementsTxtHostile runs the check over hostile variants of a
// generated requirements.txt: each is refused, naming the line and why.
func TestRequirementsTxtHostile(t *testing.T) {
	f := newFixture(t)
	good := f.requirements()
	evil := "evil==1.0 \\\n    --hash=sha256:" + digest('e') + "\n"
	hashA := "    --hash=sha256:" + digest('a')
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("fixture lacks %q", old)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	appendText := func(extra string) func(string) string { return func(s string) string { return s + extra } }
	cases := []struct {
		name   string
		change func(string) string
		want   []string // substrings of the problems, in this order
	}{
		{"70 KB comment line hiding --find-links", appendText("# " + strings.Repeat("x", 70000) + "\n--find-links /tmp/outside\n" + evil),
			[]string{"line 12: 70002 bytes long, over the limit of 4096", "line 13: an option line (--find-links): pip would look for wheels in that folder or URL, outside the bundle"}},
		{"--find-links", appendText("--find-links /tmp/outside\n"), []string{"line 12: an option line (--find-links)"}},
		{"--find-links=", appendText("--find-links=/tmp/outside\n"), []string{"line 12: an option line (--find-links)"}},
		{"-f", appendText("-f /tmp/outside\n"), []string{"line 12: an option line (-f): pip would look for wheels"}},
		{"indented option", appendText("   --find-links /tmp/outside\n"), []string{"line 12: an option line (--find-links)"}},
		{"--index-url", appendText("--index-url https://evil.example/simple\n"), []string{"line 12: an option line (--index-url): pip would install from that package index"}},
		{"-i", appendText("-i https://evil.example/simple\n"), []string{"line 12: an option line (-i)"}},
		{"--extra-index-url", appendText("--extra-index-url https://evil.example/simple\n"), []string{"line 12: an option line (--extra-index-url)"}},
		{"-r", appendText("-r /tmp/more.txt\n"), []string{"line 12: an option line (-r): pip would read another requirements file"}},
		{"--requirement", appendText("--requirement=/tmp/more.txt\n"), []string{"line 12: an option line (--requirement)"}},
		{"-c", appendText("-c /tmp/constraints.txt\n"), []string{"line 12: an option line (-c): pip would read a constraints file"}},
		{"--constraint", appendText("--constraint /tmp/constraints.txt\n"), []string{"line 12: an option line (--constraint)"}},
		{"-e", appendText("-e git+https://evil.example/x.git#egg=x\n"), []string{"line 12: an option line (-e): pip would install a source tree or a VCS URL"}},
		{"--editable", appendText("--editable /tmp/src\n"), []string{"line 12: an option line (--editable)"}},
		{"--trusted-host", appendText("--trusted-host evil.example\n"), []string{"line 12: an option line (--trusted-host): pip would trust that host"}},
		{"--no-index", appendText("--no-index\n"), []string{"line 12: an option line (--no-index)"}},
		{"--pre", appendText("--pre\n"), []string{"line 12: an option line (--pre)"}},
		{"--no-binary", appendText("--no-binary :all:\n"), []string{"line 12: an option line (--no-binary): pip would build from source distributions"}},
		{"an unknown option", appendText("--frobnicate\n"), []string{"line 12: an option line (--frobnicate): pip would take it as an option of the install"}},
		{"a --hash line on its own", appendText(hashA + "\n"), []string{"line 12: an option line (--hash)"}},
		{"a comment", appendText("# nothing to see\n"), []string{"line 12: a comment mkrelease does not write"}},
		{"a blank line", replace("demo-app==2.0", "\ndemo-app==2.0"), []string{"line 5: a blank line"}},
		{"the header changed", replace("# Install offline:", "# Install online:"), []string{`line 3: the header comment differs from the one mkrelease writes for this bundle ("# Install offline:")`}},
		{"an encoding declaration", replace("# Target linux-x86_64", "# -*- coding: utf-7 -*- linux-x86_64"), []string{"line 2: the comment declares an encoding"}},
		{"a carriage return", func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }, []string{"line 1: a carriage return at column 73"}},
		{"a form feed", appendText("# \f--find-links /tmp/outside\n"), []string{"line 12: byte 0x0c, which pip reads as a line break at column 3"}},
		{"a vertical tab", appendText("#\v--find-links /tmp/outside\n"), []string{"line 12: byte 0x0b, which pip reads as a line break"}},
		{"a file separator", appendText("#\x1c--find-links /tmp/outside\n"), []string{"line 12: byte 0x1c, which pip reads as a line break"}},
		{"a Unicode line separator", appendText("# \u2028--find-links /tmp/outside\n"), []string{"line 12: byte 0xe2 at column 3"}},
		{"a byte order mark", func(s string) string { return "\ufeff" + s }, []string{"line 1: byte 0xef at column 1"}},
		{"a tab", replace("demo-app==2.0 \\", "demo-app==2.0\t\\"), []string{"line 5: a tab at column 14"}},
		{"a NUL byte", appendText("#\x00\n"), []string{"line 12: byte 0x00 at column 2"}},
		{"no final newline", func(s string) string { return strings.TrimSuffix(s, "\n") }, []string{"line 11: no newline at the end"}},
		{"a trailing backslash at the end", func(s string) string { return strings.TrimSuffix(s, "\n") + " \\\n" }, []string{"line 11: ends in a backslash with no line after it"}},
		{"a continuation joining an option", replace(hashA, hashA+" \\\n--find-links /tmp/outside"), []string{`line 7: line 6 ends in a backslash, so pip joins this line to it`}},
		{"a continuation joining a pin", replace(hashA, hashA+" \\\n"+strings.TrimSuffix(evil, "\n")), []string{"line 7: line 6 ends in a backslash"}},
		{"a comment ending in a backslash", appendText("# note \\\n--find-links /tmp/outside\n"), []string{"line 12: a comment mkrelease does not write", "line 13: an option line (--find-links)"}},
		{"an upper-case hash", replace(hashA, strings.ToUpper(hashA)), []string{"line 6: line 5 ends in a backslash, so pip joins this line to it"}},
		{"a short hash", replace(hashA, hashA[:len(hashA)-1]), []string{"line 6: line 5 ends in a backslash"}},
		{"a URL requirement", appendText("evil @ file:///tmp/evil-1.0-py3-none-any.whl\n"), []string{"line 12: a URL or direct reference: pip would fetch it from outside the bundle"}},
		{"a bare URL", appendText("https://evil.example/evil-1.0-py3-none-any.whl\n"), []string{"line 12: a URL or direct reference"}},
		{"extras", replace("example==21.12 \\", "example[all]==21.12 \\"), []string{"line 7: extras: mkrelease pins every package of the closure itself"}},
		{"a range instead of a pin", replace("example==21.12 \\", "example>=21 \\"), []string{"line 7: not an exact pin"}},
		{"a pin with its hash inline", replace("example==21.12 \\\n    --hash", "example==21.12 --hash"), []string{"line 7: a pin without its hashes on the lines after it"}},
		{"an inline comment", replace("example==21.12 \\", "example==21.12 # --find-links /tmp/outside \\"), []string{"line 7: an inline comment"}},
		{"an environment variable", replace("example==21.12 \\", "example==${EVIL_VERSION} \\"), []string{"line 7: a ${VARIABLE}: pip fills it in from the environment"}},
		{"a marker hiding options", replace(`python_version == "3.12"`, `python_version == "3.12 --find-links=/tmp/outside"`), []string{`the marker holds " -": pip would read the rest of the line as options`}},
		{"a marker hiding a comment", replace(`python_version == "3.12"`, `python_version == "3.12 #"`), []string{`line 9: the marker holds "#"`}},
		{"a marker with a hash sign", replace(`python_version == "3.12"`, `python_version == "3.12#x"`), []string{`the marker holds "#"`}},
		{"a marker with a variable", replace(`python_version == "3.12"`, `python_version == "${PY}"`), []string{`line 9: the marker holds "${": pip would fill it in from the environment`}},
		{"a marker not in canonical form", replace(`python_version == "3.12"`, `python_version=="3.12"`), []string{`line 9: the marker is not in the canonical form mkrelease writes ("python_version == \"3.11\" or python_version == \"3.12\"")`}},
		{"a marker that does not parse", replace(`python_version == "3.12"`, `python_version == `), []string{"line 9: the marker does not parse"}},
		{"a name not normalised", replace("example==21.12 \\", "Example==21.12 \\"), []string{"line 7: not a pin in the form mkrelease writes"}},
		{"a name with dots", replace("example==21.12 \\", "ex.ample==21.12 \\"), []string{"line 7: not a pin in the form mkrelease writes"}},
		{"a version not normalised", replace("example==21.12 \\", "example==21.12.0a \\"), []string{`line 7: version "21.12.0a" is not a normalised PEP 440 version`}},
		{"a hash of no wheel", replace(digest('b'), digest('e')), []string{"line 8: pins sha256:" + digest('e') + ", which no wheel of the bundle has: pip would look for it elsewhere"}},
		{"a hash of another package", replace(digest('b'), digest('a')), []string{"line 8: pins sha256:" + digest('a') + " a second time (first on line 6)"}},
		{"the hashes of two packages swapped", func(s string) string {
			s = strings.Replace(s, digest('a'), "SWAP", 1)
			s = strings.Replace(s, digest('b'), digest('a'), 1)
			return strings.Replace(s, "SWAP", digest('b'), 1)
		}, []string{"line 6: sha256:" + digest('b') + " is dependencies/example-21.12-py3-none-any.whl, a wheel of example==21.12, not of demo-app==2.0"}},
		{"a package pinned twice", appendText("example==21.12 \\\n" + hashA + "\n"), []string{"line 12: pins example==21.12 a second time (first on line 7)", "line 13: pins sha256:" + digest('a') + " a second time"}},
		{"a wheel not pinned", replace("example==21.12 \\\n    --hash=sha256:"+digest('b')+"\n", ""), []string{"dependencies/example-21.12-py3-none-any.whl: not pinned in requirements.txt"}},
		{"an extra pin", appendText(evil), []string{"line 13: pins sha256:" + digest('e') + ", which no wheel of the bundle has"}},
		{"the pins reordered", func(s string) string {
			ex := "example==21.12 \\\n    --hash=sha256:" + digest('b') + "\n"
			return strings.Replace(strings.Replace(s, ex, "", 1), "demo-app==2.0", strings.TrimSuffix(ex, "\n")+"\ndemo-app==2.0", 1)
		}, []string{`line 5: differs from what mkrelease writes for this bundle's wheels: want "demo-app==2.0 \\\n", got "example==21.12 \\\n"`}},
		{"the hashes of a package reordered", func(s string) string {
			s = strings.Replace(s, digest('c'), "SWAP", 1)
			s = strings.Replace(s, digest('d'), digest('c'), 1)
			return strings.Replace(s, "SWAP", digest('d'), 1)
		}, []string{"line 10: differs from what mkrelease writes"}},
		{"empty", func(string) string { return "" }, []string{"empty: mkrelease writes every wheel of the bundle into it"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.change(good)
			_, ps := checkRequirementsTxt([]byte(bad), &f.target, f.wheels)
			if len(ps) == 0 {
				t.Fatalf("accepted:\n%s", bad)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.file+": "+p.text())
			}
			all := strings.Join(got, "\n")
			at := 0
			for _, w := range tc.want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("problems do not name %q (after offset %d):\n%s", w, at, all)
				}
				at += i + len(w)
			}
		})
	}
}

func TestRequirementsTxtWithoutManifest(t *testing.T) {
	f := newFixture(t)
	// Without a target the header is not compared, everything else is.
	if _, ps := checkRequirementsTxt([]byte(f.requirements()), nil, f.wheels); len(ps) != 0 {
		t.Errorf("refused: %v", ps)
	}
	if _, ps := checkRequirementsTxt([]byte(f.requirements()+"--find-links /x\n"), nil, f.wheels); len(ps) != 1 {
		t.Errorf("an option line without a manifest: %v", ps)
	}
}

// TestRequirementsTxtProblemsCapped checks that a file with thousands of
// bad lines gives a bounded list.
func TestRequirementsTxtProblemsCapped(t *testing.T) {
	f := newFixture(t)
	_, ps := checkRequirementsTxt([]byte(f.requirements()+strings.Repeat("--pre\n", 5000)), &f.target, f.wheels)
	if len(ps) != maxProblems+1 || !strings.Contains(ps[maxProblems].msg, "more problems follow") {
		t.Errorf("%d problems, want %d and a last line saying more follow", len(ps), maxProblems+1)
	}
}

func TestPylockTomlHostile(t *testing.T) {
	f := newFixture(t)
	pins, ps := checkRequirementsTxt([]byte(f.requirements()), &f.target, f.wheels)
	if len(ps) != 0 {
		t.Fatal(ps)
	}
	good := f.pylock()
	exWheel := `{name = "example-21.12-py3-none-any.whl", path = "dependencies/example-21.12-py3-none-any.whl", size = 1455, hashes = {sha256 = "` + digest('b') + `"}}`
	replace := func(old, new string) func(string) string {
		return func(s string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("fixture lacks %q:\n%s", old, s)
			}
			return strings.Replace(s, old, new, 1)
		}
	}
	cases := []struct {
		name   string
		change func(string) string
		want   string
	}{
		{"a url on a wheel", replace(`size = 1455,`, `size = 1455, url = "https://evil.example/example-21.12-py3-none-any.whl",`), `line 23: key "url" is not one mkrelease writes`},
		{"an sdist", replace("[[packages]]\nname = \"example\"\nversion = \"21.12\"\n", "[[packages]]\nname = \"example\"\nversion = \"21.12\"\nsdist = {url = \"https://evil.example/example-21.12.tar.gz\"}\n"), `line 21: key "sdist" is not one mkrelease writes`},
		{"a vcs source", replace("[[packages]]\nname = \"example\"\nversion = \"21.12\"\n", "[[packages]]\nname = \"example\"\nversion = \"21.12\"\nvcs = {type = \"git\", url = \"https://evil.example/x.git\"}\n"), `line 21: key "vcs" is not one mkrelease writes`},
		{"a path outside the bundle", replace(`path = "dependencies/example-21.12-py3-none-any.whl"`, `path = "/tmp/outside/example-21.12-py3-none-any.whl"`), `line 23: wheel "example-21.12-py3-none-any.whl" has path "/tmp/outside/example-21.12-py3-none-any.whl": mkrelease writes wheels/NAME or dependencies/NAME`},
		{"a path climbing out", replace(`path = "dependencies/example-21.12-py3-none-any.whl"`, `path = "dependencies/../../example-21.12-py3-none-any.whl"`), "has path"},
		{"a wheel missing", replace(exWheel+",\n", ""), "package example==21.12 lists no wheel"},
		{"a wheel of no bundle file", replace(`"dependencies/example-21.12-py3-none-any.whl"`, `"dependencies/example-21.13-py3-none-any.whl"`), "has path"},
		{"another hash", replace(`sha256 = "`+digest('b')+`"`, `sha256 = "`+digest('e')+`"`), "wheel dependencies/example-21.12-py3-none-any.whl: hashes map[sha256:" + digest('e') + "], want exactly {sha256 = \"" + digest('b') + "\"}"},
		{"a second hash", replace(`sha256 = "`+digest('b')+`"`, `sha256 = "`+digest('b')+`", md5 = "x"`), "want exactly {sha256"},
		{"another size", replace("size = 1455", "size = 1456"), "size 1456, the file has 1455 bytes"},
		{"a package not pinned", func(s string) string {
			return s + "\n[[packages]]\nname = \"evil\"\nversion = \"1.0\"\nwheels = [\n]\n"
		}, "package evil==1.0 is not pinned in requirements.txt"},
		{"a marker different from requirements.txt", replace(`marker = "python_version == \"3.11\" or python_version == \"3.12\""`, `marker = "python_version == \"3.11\""`), `package tomli==2.0.1 has marker "python_version == \"3.11\"", requirements.txt has`},
		{"a dependency the lock does not list", replace(`{name = "tomli", version = "2.0.1"}`, `{name = "evil"}`), "package demo-app==2.0 depends on evil, which the lock does not list"},
		{"an index that is no URL", replace(`index = "https://pypi.example/simple/"`, `index = "/tmp/outside"`), `index "/tmp/outside" is not an http(s) or file URL`},
		{"a comment", func(s string) string { return "# hello\n" + s }, `line 1: differs from what mkrelease writes for this bundle's wheels: want "lock-version = \"1.0\"\n", got "# hello\n"`},
		{"a long line", func(s string) string { return s + "# " + strings.Repeat("x", 5000) + "\n" }, "5002 bytes long, over the limit of 4096"},
		{"a Unicode line separator", func(s string) string { return s + "# \u2028\n" }, "byte 0xe2"},
		{"not TOML", func(s string) string { return s + "[[packages\n" }, "not valid TOML"},
		{"a key in another case", replace(`size = 1455,`, `Size = 1455,`), `line 23: key packages[1].wheels[0].Size spells "size" in another case`},
		{"another lock version", replace(`lock-version = "1.0"`, `lock-version = "1.1"`), `line 1: differs from what mkrelease writes`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.change(good)
			ps := checkPylockToml([]byte(bad), &f.target, pins, f.wheels)
			var got []string
			for _, p := range ps {
				got = append(got, p.file+": "+p.text())
			}
			if all := strings.Join(got, "\n"); !strings.Contains(all, tc.want) {
				t.Fatalf("problems do not name %q:\n%s\n---\n%s", tc.want, all, bad)
			}
		})
	}
}

func TestCheckContents(t *testing.T) {
	f := newFixture(t)
	manifest := func() *dist.Manifest {
		m := &dist.Manifest{Bundle: &dist.ManifestBundle{Target: "linux-x86_64", PlatformTag: "manylinux_2_17_x86_64", Pythons: f.target.Pythons}}
		tg := dist.ManifestTarget{Name: "linux-x86_64", Wheels: []dist.ManifestArtifact{{Path: "demo_app-2.0-py3-none-any.whl", Name: "demo-app", Size: 1046, SHA256: digest('a')}}}
		for _, w := range f.wheels[1:] {
			a := dist.ManifestArtifact{Path: w.rel, Name: w.name + "==" + w.version, Size: w.size, SHA256: w.sha256}
			m.Bundle.Dependencies = append(m.Bundle.Dependencies, a)
			a.Path = w.base()
			tg.Dependencies = append(tg.Dependencies, a)
		}
		m.Targets = []dist.ManifestTarget{tg}
		return m
	}
	if ps := checkContents(manifest(), f.wheels); len(ps) != 0 {
		t.Fatalf("the manifest of the fixture is refused: %v", ps)
	}
	extra, _ := newBundleWheel("dependencies/evil-1.0-py3-none-any.whl", digest('e'), 10)
	cases := []struct {
		name   string
		m      func(*dist.Manifest)
		wheels []bundleWheel
		want   string
	}{
		{"an extra wheel", nil, append(append([]bundleWheel(nil), f.wheels...), extra), "dependencies/evil-1.0-py3-none-any.whl: not named in manifest.json: a bundle holds only the wheels its manifest names"},
		{"a named wheel missing", nil, f.wheels[:3], "dependencies/tomli-2.0.1-cp312-cp312-manylinux_2_17_x86_64.whl: named in manifest.json but missing from the bundle"},
		{"the release wheel missing", nil, f.wheels[1:], "wheels/demo_app-2.0-py3-none-any.whl: named in manifest.json but missing from the bundle"},
		{"another digest", func(m *dist.Manifest) { m.Bundle.Dependencies[0].SHA256 = digest('e') }, f.wheels, "dependencies/example-21.12-py3-none-any.whl: manifest.json records sha256 " + digest('e') + ", the file has " + digest('b')},
		{"another size", func(m *dist.Manifest) { m.Targets[0].Wheels[0].Size = 1 }, f.wheels, "wheels/demo_app-2.0-py3-none-any.whl: manifest.json records 1 bytes, the file has 1046"},
		{"another name", func(m *dist.Manifest) { m.Bundle.Dependencies[0].Name = "example==21.13" }, f.wheels, "manifest.json names it example==21.13, its file name example==21.12"},
		{"a dependency outside dependencies/", func(m *dist.Manifest) { m.Bundle.Dependencies[0].Path = "../example-21.12-py3-none-any.whl" }, f.wheels, `names the dependency "../example-21.12-py3-none-any.whl", which is not dependencies/NAME.whl`},
		{"a release wheel in a folder", func(m *dist.Manifest) { m.Targets[0].Wheels[0].Path = "x/demo_app-2.0-py3-none-any.whl" }, f.wheels, "which is not a wheel file name"},
		{"the two closure lists disagreeing", func(m *dist.Manifest) { m.Targets[0].Dependencies = m.Targets[0].Dependencies[:1] }, f.wheels, "targets[linux-x86_64].dependencies lists 1 wheels, bundle.dependencies 3"},
		{"another target", func(m *dist.Manifest) { m.Targets[0].Name = "linux-aarch64" }, f.wheels, "lists targets [linux-aarch64]; a bundle's manifest lists its own target linux-x86_64 alone"},
		{"two targets", func(m *dist.Manifest) { m.Targets = append(m.Targets, m.Targets[0]) }, f.wheels, "lists targets [linux-x86_64, linux-x86_64]"},
		{"a wheel named twice", func(m *dist.Manifest) {
			m.Bundle.Dependencies = append(m.Bundle.Dependencies, m.Bundle.Dependencies[0])
		}, f.wheels, "dependencies/example-21.12-py3-none-any.whl: named twice in manifest.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := manifest()
			if tc.m != nil {
				tc.m(m)
			}
			var got []string
			for _, p := range checkContents(m, tc.wheels) {
				got = append(got, p.file+": "+p.text())
			}
			if all := strings.Join(got, "\n"); !strings.Contains(all, tc.want) {
				t.Fatalf("problems do not name %q:\n%s", tc.want, all)
			}
		})
	}
}

func TestCheckBundleFacts(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    dist.ManifestBundle
		want string // "" for none
	}{
		{"good", dist.ManifestBundle{Target: "linux-x86_64", PlatformTag: "manylinux_2_17_x86_64", Pythons: []string{"3.11", "3.12"}}, ""},
		{"a compressed tag set", dist.ManifestBundle{Target: "t", PlatformTag: "manylinux_2_17_x86_64.manylinux2014_x86_64", Pythons: []string{"3.11"}}, ""},
		{"a target with a newline", dist.ManifestBundle{Target: "x\n--find-links /tmp", PlatformTag: "manylinux_2_17_x86_64", Pythons: []string{"3.11"}}, "is not a target name"},
		{"a target naming an encoding", dist.ManifestBundle{Target: "coding:utf_7", PlatformTag: "manylinux_2_17_x86_64", Pythons: []string{"3.11"}}, "is not a target name"},
		{"an unknown platform", dist.ManifestBundle{Target: "t", PlatformTag: "linux_x86_64", Pythons: []string{"3.11"}}, "platform_tag"},
		{"two operating systems", dist.ManifestBundle{Target: "t", PlatformTag: "manylinux_2_17_x86_64.win_amd64", Pythons: []string{"3.11"}}, "more than one operating system"},
		{"no boundary", dist.ManifestBundle{Target: "t", PlatformTag: "manylinux_2_17_x86_64"}, "names no support boundary"},
		{"a bad Python", dist.ManifestBundle{Target: "t", PlatformTag: "manylinux_2_17_x86_64", Pythons: []string{"3.11)]; import os"}}, "is not a CPython version"},
		{"a Python twice", dist.ManifestBundle{Target: "t", PlatformTag: "manylinux_2_17_x86_64", Pythons: []string{"3.11", "3.11"}}, "listed once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := strings.Join(checkBundleFacts(&tc.b), "\n")
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("checkBundleFacts = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScriptPlatform(t *testing.T) {
	for _, tc := range []struct {
		tag, os, osCase, arch, archCase, vpy, goos string
	}{
		{"manylinux_2_17_x86_64", "Linux", "Linux", "x86_64", "x86_64|amd64", "bin/python", "linux"},
		{"manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64", "Linux", "Linux", "x86_64", "x86_64|amd64", "bin/python", "linux"},
		{"manylinux_2_17_aarch64", "Linux", "Linux", "aarch64", "aarch64|arm64", "bin/python", "linux"},
		{"macosx_13_0_arm64", "macOS", "Darwin", "arm64", "arm64|aarch64", "bin/python", "darwin"},
		{"macosx_11_0_universal2", "macOS", "Darwin", "universal2", "x86_64|arm64", "bin/python", "darwin"},
		{"win_amd64", "Windows", "MINGW*|MSYS*|CYGWIN*|Windows_NT", "amd64", "x86_64|amd64", "Scripts/python.exe", "windows"},
	} {
		p, err := scriptPlatform(tc.tag)
		if err != nil {
			t.Errorf("%s: %v", tc.tag, err)
			continue
		}
		if want := (platformFacts{tc.os, tc.osCase, tc.arch, tc.archCase, tc.vpy, tc.goos}); p != want {
			t.Errorf("%s: %+v, want %+v", tc.tag, p, want)
		}
	}
	for _, tag := range []string{"any", "linux_x86_64", "", "manylinux_2_17_x86_64.macosx_13_0_arm64"} {
		if _, err := scriptPlatform(tag); err == nil {
			t.Errorf("%q accepted", tag)
		}
	}
}

// FuzzRequirementsTxt feeds the requirements.txt check arbitrary text. It
// must not panic, and whatever it accepts must be exactly the generated
// text, with no line pip could take as an option but the hash lines.
func FuzzRequirementsTxt(f *testing.F) {
	fx := newFixture(f)
	good := fx.requirements()
	f.Add([]byte(good))
	f.Add([]byte(good + "--find-links /tmp/x\n"))
	f.Add([]byte(good + "# " + strings.Repeat("x", 5000) + "\n"))
	f.Add([]byte(strings.Replace(good, "example==21.12 \\", "example[x]==21.12 ; os_name == \"a -b\" \\", 1)))
	f.Add([]byte("x==1 \\\n    --hash=sha256:" + digest('a') + " \\\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pins, ps := checkRequirementsTxt(data, &fx.target, fx.wheels)
		if len(ps) > maxProblems+1 {
			t.Fatalf("%d problems", len(ps))
		}
		if len(ps) > 0 {
			return
		}
		if string(data) != good {
			t.Fatalf("accepted text that is not the generated one:\n%q", data)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "-") && !hashRE.MatchString(l) {
				t.Fatalf("accepted an option line %q", l)
			}
		}
		if len(pins) != 3 {
			t.Fatalf("pins = %v", pins)
		}
	})
}

// FuzzPylockToml feeds the pylock.toml check arbitrary text: no panic, and
// only the generated text is accepted.
func FuzzPylockToml(f *testing.F) {
	fx := newFixture(f)
	pins, _ := checkRequirementsTxt([]byte(fx.requirements()), &fx.target, fx.wheels)
	good := fx.pylock()
	f.Add([]byte(good))
	f.Add([]byte(strings.Replace(good, "size = 1455,", `size = 1455, url = "https://x/y.whl",`, 1)))
	f.Add([]byte(good + "[[packages]]\nname = \"a\"\n"))
	f.Add([]byte("packages = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ps := checkPylockToml(data, &fx.target, pins, fx.wheels)
		if len(ps) == 0 && string(data) != good {
			t.Fatalf("accepted text that is not the generated one:\n%q", data)
		}
	})
}

func ExampleCleanEnv() {
	env := CleanEnv([]string{"PATH=/usr/bin", "PIP_FIND_LINKS=/tmp/evil", "PYTHONPATH=/tmp/evil", "VIRTUAL_ENV=/opt/v", "HOME=/root", "pip_index_url=http://x"})
	fmt.Println(env)
	// Output: [PATH=/usr/bin HOME=/root]
}
