package deps

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"

	"github.com/mkrelease/mkrelease/wheel"
)

// referencePython has pip, whose vendored packaging.tags is the reference
// for the tag order.
const referencePython = "/root/.pyenv/versions/3.11.7/bin/python3.11"

func needPython(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(referencePython); err != nil {
		t.Fatalf("%s is needed (pyenv install 3.11.7): %v", referencePython, err)
	}
	return referencePython
}

// tagsScript prints packaging.tags' list for a CPython version and a
// platform, with the machine's glibc, musl and ABI checks replaced by the
// target's.
const tagsScript = `
import json, sys
from pip._vendor.packaging import tags, _manylinux, _musllinux
out = {}
for case in json.loads(sys.argv[1]):
    py = tuple(case["python"])
    kind, arch, major, minor = case["kind"], case["arch"], case["major"], case["minor"]
    if kind == "manylinux":
        _manylinux._get_glibc_version = lambda: (major, minor)
        _manylinux._have_compatible_abi = lambda arch: True
        plats = list(_manylinux.platform_tags("linux_" + arch, arch))
    elif kind == "musllinux":
        _musllinux._get_musl_version = lambda exe: _musllinux._MuslVersion(major, minor)
        plats = list(_musllinux.platform_tags(arch))
    elif kind == "macos":
        plats = list(tags.mac_platforms((major, minor), arch))
    else:
        plats = [arch]
    abi = "cp%d%d" % py + ("m" if py < (3, 8) else "")
    interp = "cp%d%d" % py
    got = [str(t) for t in tags.cpython_tags(py, [abi], plats)]
    got += [str(t) for t in tags.compatible_tags(py, interp, plats)]
    out[case["name"]] = got
print(json.dumps(out))
`

func TestTargetTagsMatchPackaging(t *testing.T) {
	py := needPython(t)
	type tcase struct {
		Name   string `json:"name"`
		Python []int  `json:"python"`
		Kind   string `json:"kind"`
		Arch   string `json:"arch"`
		Major  int    `json:"major"`
		Minor  int    `json:"minor"`
		tag    string
	}
	cases := []tcase{
		{Name: "3.11 manylinux_2_17_x86_64", Python: []int{3, 11}, Kind: "manylinux", Arch: "x86_64", Major: 2, Minor: 17, tag: "manylinux_2_17_x86_64"},
		{Name: "3.9 manylinux_2_34_x86_64", Python: []int{3, 9}, Kind: "manylinux", Arch: "x86_64", Major: 2, Minor: 34, tag: "manylinux_2_34_x86_64"},
		{Name: "3.7 manylinux2014_x86_64", Python: []int{3, 7}, Kind: "manylinux", Arch: "x86_64", Major: 2, Minor: 17, tag: "manylinux2014_x86_64"},
		{Name: "3.13 manylinux_2_28_aarch64", Python: []int{3, 13}, Kind: "manylinux", Arch: "aarch64", Major: 2, Minor: 28, tag: "manylinux_2_28_aarch64"},
		{Name: "3.12 musllinux_1_2_x86_64", Python: []int{3, 12}, Kind: "musllinux", Arch: "x86_64", Major: 1, Minor: 2, tag: "musllinux_1_2_x86_64"},
		{Name: "3.12 macosx_11_0_arm64", Python: []int{3, 12}, Kind: "macos", Arch: "arm64", Major: 11, Minor: 0, tag: "macosx_11_0_arm64"},
		{Name: "3.10 macosx_14_0_arm64", Python: []int{3, 10}, Kind: "macos", Arch: "arm64", Major: 14, Minor: 0, tag: "macosx_14_0_arm64"},
		{Name: "3.10 macosx_10_13_x86_64", Python: []int{3, 10}, Kind: "macos", Arch: "x86_64", Major: 10, Minor: 13, tag: "macosx_10_13_x86_64"},
		{Name: "3.8 macosx_12_0_x86_64", Python: []int{3, 8}, Kind: "macos", Arch: "x86_64", Major: 12, Minor: 0, tag: "macosx_12_0_x86_64"},
		{Name: "3.11 win_amd64", Python: []int{3, 11}, Kind: "windows", Arch: "win_amd64", tag: "win_amd64"},
		{Name: "3.13 win_arm64", Python: []int{3, 13}, Kind: "windows", Arch: "win_arm64", tag: "win_arm64"},
	}
	arg, _ := json.Marshal(cases)
	out, err := exec.Command(py, "-c", tagsScript, string(arg)).CombinedOutput()
	if err != nil {
		t.Fatalf("reference packaging.tags: %v\n%s", err, out)
	}
	var want map[string][]string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, c := range cases {
		pyv := strconv.Itoa(c.Python[0]) + "." + strconv.Itoa(c.Python[1])
		tags, err := TargetTags([]string{pyv}, c.tag)
		if err != nil {
			t.Fatal(err)
		}
		got := tags.For(pyv)
		if !slices.Equal(got, want[c.Name]) {
			i := 0
			for i < len(got) && i < len(want[c.Name]) && got[i] == want[c.Name][i] {
				i++
			}
			t.Errorf("%s: %d tags, packaging %d; first difference at %d: got %v, want %v", c.Name, len(got), len(want[c.Name]), i,
				got[i:min(i+3, len(got))], want[c.Name][i:min(i+3, len(want[c.Name]))])
		}
	}
}

func TestTagsFit(t *testing.T) {
	tags, err := TargetTags([]string{"3.9", "3.13"}, "manylinux_2_28_x86_64.manylinux_2_28_x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file      string
		fits, all bool
	}{
		{"a-1-py3-none-any.whl", true, true},
		{"a-1-py2.py3-none-any.whl", true, true},
		{"a-1-cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", true, true},
		{"a-1-cp313-cp313-manylinux_2_28_x86_64.whl", true, false},
		{"a-1-cp313-cp313-manylinux_2_34_x86_64.whl", false, false}, // needs a newer glibc
		{"a-1-cp313-cp313-musllinux_1_2_x86_64.whl", false, false},
		{"a-1-cp313-cp313-linux_x86_64.whl", false, false}, // not portable
		{"a-1-cp27-cp27mu-manylinux1_x86_64.whl", false, false},
		{"a-1-cp313-cp313-win_amd64.whl", false, false},
		{"a-1-py2-none-any.whl", false, false},
		{"a-1-cp313-cp313t-manylinux_2_17_x86_64.whl", false, false}, // free-threaded
	} {
		f, err := wheel.ParseFilename(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if tags.Fits(f) != tt.fits || tags.FitsAll(f) != tt.all {
			t.Errorf("%s: Fits %v FitsAll %v, want %v %v", tt.file, tags.Fits(f), tags.FitsAll(f), tt.fits, tt.all)
		}
	}
	// Rank: the most specific tag wins.
	a, _ := wheel.ParseFilename("a-1-cp313-cp313-manylinux_2_28_x86_64.whl")
	b, _ := wheel.ParseFilename("a-1-py3-none-any.whl")
	ra, _ := tags.Rank("3.13", a)
	rb, _ := tags.Rank("3.13", b)
	if ra >= rb {
		t.Errorf("rank of the binary wheel %d, pure %d", ra, rb)
	}
}

func TestTargetTagsUniversal2(t *testing.T) {
	tags, err := TargetTags([]string{"3.12"}, "macosx_10_13_universal2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file string
		fits bool
	}{
		{"a-1-cp312-cp312-macosx_10_9_universal2.whl", true},
		{"a-1-cp312-cp312-macosx_10_9_x86_64.whl", false}, // not on arm64 Macs
		{"a-1-cp312-cp312-macosx_11_0_arm64.whl", false},  // not on x86_64 Macs
		// A compressed tag set: one file both Macs install, each through
		// its own tag.
		{"a-1-cp312-cp312-macosx_10_9_x86_64.macosx_11_0_arm64.whl", true},
		{"a-1-cp312-cp312-macosx_10_9_x86_64.macosx_10_9_intel.whl", false}, // neither is for arm64
		{"a-1-py3-none-any.whl", true},
	} {
		f, _ := wheel.ParseFilename(tt.file)
		if tags.Fits(f) != tt.fits {
			t.Errorf("%s: Fits %v, want %v", tt.file, tags.Fits(f), tt.fits)
		}
	}
}

// TestTargetTagsGlibcAndMusl: a library that needs no glibc symbol is
// tagged for both C libraries; its bundle must install on a glibc and on a
// musl machine, so the release's own wheel (both tags in one file) fits,
// and so does a dependency that covers both, but not one for glibc alone.
func TestTargetTagsGlibcAndMusl(t *testing.T) {
	tags, err := TargetTags([]string{"3.11", "3.12"}, "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file string
		fits bool
	}{
		{"greet_native-0.1.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_2_x86_64.whl", true},
		{"a-1-cp312-cp312-manylinux_2_17_x86_64.musllinux_1_1_x86_64.whl", true},
		{"a-1-cp312-cp312-manylinux_2_17_x86_64.whl", false},                      // not on musl
		{"a-1-cp312-cp312-musllinux_1_2_x86_64.whl", false},                       // not on glibc
		{"a-1-cp312-cp312-manylinux_2_28_x86_64.musllinux_1_2_x86_64.whl", false}, // glibc 2.28 > 2.17
		{"a-1-py3-none-any.whl", true},
	} {
		f, err := wheel.ParseFilename(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if tags.Fits(f) != tt.fits {
			t.Errorf("%s: Fits %v, want %v", tt.file, tags.Fits(f), tt.fits)
		}
	}
	// Preference: a wheel for this platform before a pure one.
	native, _ := wheel.ParseFilename("a-1-cp312-cp312-manylinux_2_17_x86_64.musllinux_1_2_x86_64.whl")
	pure, _ := wheel.ParseFilename("a-1-py3-none-any.whl")
	rn, _ := tags.Rank("3.12", native)
	rp, _ := tags.Rank("3.12", pure)
	if rn >= rp {
		t.Errorf("rank of the native wheel %d, of the pure one %d", rn, rp)
	}
}

func TestTargetTagsErrors(t *testing.T) {
	for _, tt := range []struct {
		pythons []string
		tag     string
	}{
		{nil, "manylinux_2_17_x86_64"},
		{[]string{"3.11"}, ""},
		{[]string{"3.11"}, "linux_x86_64"},
		{[]string{"2.7"}, "manylinux_2_17_x86_64"},
		{[]string{"3.x"}, "manylinux_2_17_x86_64"},
		{[]string{"3.11"}, "any"},
	} {
		if _, err := TargetTags(tt.pythons, tt.tag); err == nil {
			t.Errorf("TargetTags(%v, %q) succeeded", tt.pythons, tt.tag)
		}
	}
}

func TestMachineEnvs(t *testing.T) {
	for _, tt := range []struct {
		tag  string
		want []string
	}{
		{"manylinux_2_17_x86_64", []string{`sys_platform == "linux" and platform_machine == "x86_64"`}},
		{"manylinux2014_aarch64", []string{`sys_platform == "linux" and platform_machine == "aarch64"`}},
		{"musllinux_1_2_ppc64le", []string{`sys_platform == "linux" and platform_machine == "ppc64le"`}},
		{"macosx_10_13_universal2", []string{`sys_platform == "darwin" and platform_machine == "x86_64"`, `sys_platform == "darwin" and platform_machine == "arm64"`}},
		{"win_amd64", []string{`sys_platform == "win32" and platform_machine == "AMD64"`}},
		{"win32", []string{`sys_platform == "win32"`}},
	} {
		got, err := environmentMarkers(Target{Platform: tt.tag, Pythons: []string{"3.11"}})
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.tag, got, err, tt.want)
		}
	}
}
