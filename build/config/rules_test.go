package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// wheelTOML is validTOML with a second target, a bundle and a wheel pair.
const wheelTOML = validTOML + `
[bundle]
changelog = "CHANGELOG.md"
pythons = ["3.12"]

[[target]]
name = "linux-aarch64"

[[build.step]]
name = "lib"
source = "up"
run = ["true"]
outputs = ["lib/libx.so", "lib/include/x.h"]

[[wheel]]
name = "demo-compiler"
role = "compiler"
[[wheel.include]]
source = "up"
from = "py"
to = "demo"
[[wheel.include]]
step = "tool"
from = "tool"
to = "demo/bin/"

[[wheel]]
name = "demo-plugin"
role = "plugin"
pair = "demo-compiler"
[[wheel.include]]
step = "lib"
from = "lib"
to = "demo_plugin/lib"

[[source]]
name = "vendor"
archive = "https://example.invalid/vendor.tar.gz"
sha256 = "` + "0000000000000000000000000000000000000000000000000000000000000000" + `"
`

// buildNeeds are the rules that catch, when release.toml is loaded, what a
// build used to discover only in a late stage.
var buildNeeds = []struct {
	name     string
	old, new string
	want     string // the error's first line, from the key on
	pos      string
}{
	{"no pythons (closure stage)", "pythons = [\"3.12\"]\n", "",
		`bundle.pythons: missing: the release declares wheels, and every bundle states the Pythons it supports`, "32:2"},
	{"no changelog (bundle stage)", "changelog = \"CHANGELOG.md\"\n", "",
		`bundle.changelog: missing: the release declares wheels, and every bundle carries the release notes`, "32:2"},
	{"no [bundle] at all", "[bundle]\nchangelog = \"CHANGELOG.md\"\npythons = [\"3.12\"]\n", "",
		`bundle.pythons: missing: the release declares wheels, and every bundle states the Pythons it supports`, "42:3"},
	{"step not run for a target of the wheel (wheel stage)", "outputs = [\"tool\"]\n", "outputs = [\"tool\"]\ntargets = [\"linux-x86_64\"]\n",
		`wheel[0].include[1].step: step "tool" does not run for target "linux-aarch64", which wheel "demo-compiler" is built for`, "54:8"},
	{"from not an output of the step (wheel stage)", "from = \"lib\"\n", "from = \"lib/libz.so\"\n",
		`wheel[1].include[0].from: step "lib" declares no output "lib/libz.so"`, "63:8"},
	{"pair not built for a target (pair check)", "role = \"compiler\"\n", "role = \"compiler\"\ntargets = [\"linux-x86_64\"]\n",
		`wheel[1].pair: wheel "demo-plugin" is built for target "linux-aarch64", its pair "demo-compiler" is not`, "61:8"},
	{"unclean wheel path (wheel writer)", "to = \"demo/bin/\"", "to = \"demo//bin/\"",
		`wheel[0].include[1].to: "demo//bin/" is not a clean path (it would be "demo/bin")`, "55:6"},
	{"dot component in a wheel path", "to = \"demo\"", "to = \"./demo\"",
		`wheel[0].include[0].to: "./demo" is not a clean path (it would be "demo")`, "51:6"},
	{"pure-Python claim without install platform (closure stage)", "[[target]]\nname = \"linux-aarch64\"\n", "[[target]]\nname = \"linux-aarch64\"\nplatform_tag = \"any\"\n",
		`target[1].platform_tag: target "linux-aarch64" claims pure-Python wheels ("any") but names no install_platform`, "38:16"},
	{"uses whose variables collide", "[[wheel]]\nname = \"demo-compiler\"", "[[source]]\nname = \"ven-dor\"\nlocal = \"v\"\n[[source]]\nname = \"ven_dor\"\nlocal = \"w\"\n\n[[build.step]]\nname = \"both\"\nsource = \"up\"\nrun = [\"true\"]\nuses = [\"ven_dor\", \"ven-dor\"]\n\n[[wheel]]\nname = \"demo-compiler\"",
		`build.step[2].uses[1]: sources "ven_dor" and "ven-dor" would both be $MKRELEASE_SOURCE_VEN_DOR`, "56:20"},
	{"max_size on a local source", "local = \"src\"\n", "local = \"src\"\nmax_size = 10\n",
		`source[0].max_size: max_size does not apply to a local source`, "11:12"},
	{"allow_redirect_hosts on a local archive", "archive = \"https://example.invalid/vendor.tar.gz\"", "archive = \"vendor.tar.gz\"\nallow_redirect_hosts = [\"cdn.example\"]",
		`source[1].allow_redirect_hosts: allow_redirect_hosts does not apply to a local archive source`, "69:1"},
	{"redirect host with a scheme", "archive = \"https://example.invalid/vendor.tar.gz\"", "archive = \"https://example.invalid/vendor.tar.gz\"\nallow_redirect_hosts = [\"https://cdn.example\"]",
		`source[1].allow_redirect_hosts[0]: "https://cdn.example" is not a host name`, "69:25"},
	{"negative max_size", "archive = \"https://example.invalid/vendor.tar.gz\"", "archive = \"https://example.invalid/vendor.tar.gz\"\nmax_size = -1",
		`source[1].max_size: invalid max_size -1`, "69:12"},
	{"fetch_timeout on a local source", "local = \"src\"\n", "local = \"src\"\nfetch_timeout = \"1m\"\n",
		`source[0].fetch_timeout: fetch_timeout does not apply to a local source`, "11:17"},
	{"fetch_timeout on an archive", "archive = \"https://example.invalid/vendor.tar.gz\"", "archive = \"https://example.invalid/vendor.tar.gz\"\nfetch_timeout = \"1m\"",
		`source[1].fetch_timeout: fetch_timeout does not apply to a downloaded archive source`, "69:17"},
	{"include for an unknown target", "to = \"demo\"\n", "to = \"demo\"\ntargets = [\"macos-arm64\"]\n",
		`wheel[0].include[0].targets[0]: unknown target "macos-arm64"`, "52:12"},
	{"include for a target the wheel is not built for", "[[source]]\nname = \"vendor\"", "[[wheel]]\nname = \"demo-extra\"\ntargets = [\"linux-x86_64\"]\n[[wheel.include]]\nsource = \"up\"\nfrom = \"x\"\nto = \"x\"\ntargets = [\"linux-aarch64\"]\n\n[[source]]\nname = \"vendor\"",
		`wheel[2].include[0].targets[0]: wheel "demo-extra" is not built for target "linux-aarch64"`, "73:12"},
	{"toolchain path outside the project", "command = [\"go\", \"version\"]\n", "command = [\"go\", \"version\"]\npath = \"../zig\"\n",
		`toolchain[0].path: "../zig" leaves the project folder`, "20:8"},
	{"zero fetch_timeout", "local = \"src\"\n", "git = \"https://example.invalid/x.git\"\ncommit = \"" + strings.Repeat("a", 40) + "\"\nfetch_timeout = \"0s\"\n",
		`source.fetch_timeout: invalid duration "0s": must be positive`, "12:17"},
}

func TestParseCatchesWhatBuildNeeds(t *testing.T) {
	if _, err := Parse("release.toml", "/p", []byte(wheelTOML)); err != nil {
		t.Fatalf("the base config is refused: %v", err)
	}
	for _, tc := range buildNeeds {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(wheelTOML, tc.old) {
				t.Fatalf("test bug: %q not in the config", tc.old)
			}
			_, err := Parse("release.toml", "/p", []byte(strings.Replace(wheelTOML, tc.old, tc.new, 1)))
			var list ErrorList
			if !errors.As(err, &list) || list.ExitCode() != 2 {
				t.Fatalf("Parse = %v, want an ErrorList", err)
			}
			first, _, _ := strings.Cut(list[0].Error(), "\n")
			if want := "release.toml:" + tc.pos + ": " + tc.want; first != want {
				t.Errorf("error = %q\n   want %q", first, want)
			}
		})
	}
}

// TestParseAcceptsIncludesOfSomeTargets checks that a wheel may take a
// file from a step that runs for some of its targets only, when the
// include is limited to those targets.
func TestParseAcceptsIncludesOfSomeTargets(t *testing.T) {
	toml := strings.Replace(wheelTOML, "outputs = [\"tool\"]\n", "outputs = [\"tool\"]\ntargets = [\"linux-x86_64\"]\n", 1)
	toml = strings.Replace(toml, "to = \"demo/bin/\"\n", "to = \"demo/bin/\"\ntargets = [\"linux-x86_64\"]\n", 1)
	c, err := Parse("release.toml", "/p", []byte(toml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	in := c.Wheels[0].Include[1]
	if !in.AppliesTo("linux-x86_64") || in.AppliesTo("linux-aarch64") {
		t.Errorf("include %+v: AppliesTo(linux-x86_64) = %v, AppliesTo(linux-aarch64) = %v", in, in.AppliesTo("linux-x86_64"), in.AppliesTo("linux-aarch64"))
	}
}

func TestParseAcceptsURLArchiveSettings(t *testing.T) {
	src := strings.Replace(wheelTOML, "archive = \"https://example.invalid/vendor.tar.gz\"",
		"archive = \"https://example.invalid/vendor.tar.gz\"\nmax_size = 536_870_912\nallow_redirect_hosts = [\"objects.githubusercontent.com\", \"10.0.0.1\"]", 1)
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Source("vendor"); s.MaxSize != 512<<20 || len(s.AllowRedirectHosts) != 2 {
		t.Errorf("source = %+v", s)
	}
}

func TestParseAcceptsGitFetchTimeout(t *testing.T) {
	src := strings.Replace(wheelTOML, "local = \"src\"\n", "git = \"https://example.invalid/x.git\"\ncommit = \""+strings.Repeat("a", 40)+"\"\nfetch_timeout = \"45m\"\n", 1)
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Source("up"); s.FetchTimeout.Duration != 45*time.Minute {
		t.Errorf("source = %+v", s)
	}
}

func TestStepDeclares(t *testing.T) {
	s := Step{Outputs: []string{"bin/tool", "lib/a.so", "lib/sub/b.so"}}
	for from, want := range map[string]bool{
		"bin/tool": true, "./bin/tool": true, "lib": true, "lib/": true, "lib/sub": true,
		"bin": true, "bin/to": false, "li": false, "lib/c.so": false, ".": false, "": false,
	} {
		if got := s.Declares(from); got != want {
			t.Errorf("Declares(%q) = %v, want %v", from, got, want)
		}
	}
}
