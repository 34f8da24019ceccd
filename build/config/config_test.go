package config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const validTOML = `[project]
name = "Vexl_Demo"
version = "V1.0-RC_1"

[build]
source_date_epoch = 1793491200

[[source]]
name = "up"
local = "src"

[[overlay]]
name = "fix"
source = "up"
patch = "patches/fix.patch"

[[toolchain]]
name = "go"
command = ["go", "version"]

[[target]]
name = "linux-x86_64"
env = { GOOS = "linux" }

[[build.step]]
name = "tool"
source = "up"
run = ["go", "build", "-o", "${MKRELEASE_OUT}/tool"]
outputs = ["tool"]
timeout = "5m"
`

func TestParseValidNormalises(t *testing.T) {
	c, err := Parse("release.toml", "/p", []byte(validTOML))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.Project.Version != "1.0rc1" {
		t.Errorf("version = %q, want normalised 1.0rc1", c.Project.Version)
	}
	if c.Project.NormalizedName != "vexl-demo" {
		t.Errorf("normalised name = %q, want vexl-demo", c.Project.NormalizedName)
	}
	if c.Build.Steps[0].Timeout.Minutes() != 5 {
		t.Errorf("timeout = %v", c.Build.Steps[0].Timeout)
	}
	if len(c.SHA256) != 64 {
		t.Errorf("SHA256 = %q", c.SHA256)
	}
}

// badConfigs each change validTOML and expect one error at a position.
var badConfigs = []struct {
	name      string
	old, new  string // replacement in validTOML
	wantPos   string // "line:col"
	wantInMsg string
}{
	{"unknown top-level key", "[build]\n", "colour = \"red\"\n[build]\n", "5:1", "unknown key"},
	{"unknown key in table", `name = "Vexl_Demo"`, `nmae = "Vexl_Demo"`, "2:1", `did you mean "name"`},
	{"unknown key in array table", `patch = "patches/fix.patch"`, `patch = "patches/fix.patch"` + "\nfuzz = 3", "16:1", "unknown key"},
	{"wrong type", "source_date_epoch = 1793491200", `source_date_epoch = "yesterday"`, "6:21", "an integer"},
	{"wrong type in array", `command = ["go", "version"]`, `command = "go version"`, "19:11", "array of strings"},
	{"bad duration", `timeout = "5m"`, `timeout = "soon"`, "30:11", "duration"},
	{"invalid version", `version = "V1.0-RC_1"`, `version = "1.0-final"`, "3:11", "invalid version"},
	{"invalid name", `name = "Vexl_Demo"`, `name = "-vexl"`, "2:8", "invalid project name"},
	{"missing version", "version = \"V1.0-RC_1\"\n", "", "1:2", "missing project version"},
	{"syntax error", `name = "up"`, `name = "up`, "9:11", ""},
	{"two source kinds", `local = "src"`, "local = \"src\"\ngit = \"https://example.invalid/x.git\"", "8:3", "exactly one of local, git, archive"},
	{"git without commit", `local = "src"`, `git = "https://example.invalid/x.git"`, "10:7", "has no commit"},
	{"short commit", `local = "src"`, "git = \"https://example.invalid/x.git\"\ncommit = \"abc123\"", "11:10", "not a full commit id"},
	{"archive without sha", `local = "src"`, `archive = "up.tar.gz"`, "8:3", "needs its sha256"},
	{"path escapes", `local = "src"`, `local = "../elsewhere"`, "10:9", "leaves the project folder"},
	{"absolute path", `patch = "patches/fix.patch"`, `patch = "/etc/passwd"`, "15:9", "is absolute"},
	{"unknown source", "source = \"up\"\npatch", "source = \"down\"\npatch", "14:10", `unknown source "down"`},
	{"duplicate target", "[[build.step]]", "[[target]]\nname = \"linux-x86_64\"\n\n[[build.step]]", "26:8", "duplicate target"},
	{"target named like evidence", "[[build.step]]", "[[target]]\nname = \"verifier-evidence-linux\"\n\n[[build.step]]", "26:8", "named like the verifier evidence of target \"linux\""},
	{"reserved env", `env = { GOOS = "linux" }`, `env = { GOOS = "linux", TZ = "Europe/Paris" }`, "23:30", "cannot be overridden"},
	{"step targets unknown", `outputs = ["tool"]`, "outputs = [\"tool\"]\ntargets = [\"win\"]", "30:12", `unknown target "win"`},
	{"output escapes", `outputs = ["tool"]`, `outputs = ["../tool"]`, "29:12", "leaves the project folder"},
	{"policy threshold out of range", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[policy]\nmax_robust_cv = 1.5\n", "33:17", "invalid threshold 1.5"},
	{"policy file not rego", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[policy]\nfiles = [\"extra.txt\"]\n", "33:10", "is not a .rego file"},
	{"publish to a web URL", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[publish]\nto = \"https://example.invalid/\"\n", "33:6", "unsupported channel"},
	{"epoch before 1980", "source_date_epoch = 1793491200", "source_date_epoch = 1000", "6:21", "before 1980"},
	{"remote cache not http", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote = \"ftp://cache.example.invalid/x\"\n", "33:10", "not an http:// or https:// URL"},
	{"remote cache with credentials", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote = \"https://ci:s3cret@cache.example.invalid/x\"\n", "33:10", "holds credentials"},
	{"remote cache with a query", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote = \"https://cache.example.invalid/x?token=1\"\n", "33:10", "query or fragment"},
	{"remote cache token env not a name", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote = \"https://cache.example.invalid/x\"\nremote_token_env = \"$TOKEN\"\n", "34:20", "not an environment variable name"},
	{"negative remote cache size cap", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote_max_size = -1\n", "33:19", "invalid remote_max_size -1"},
	{"negative archive entry limit", `local = "src"`, "archive = \"up.tar.gz\"\nsha256 = \"" + strings.Repeat("a", 64) + "\"\nmax_entries = -1", "12:15", "invalid max_entries -1"},
	{"archive limit on a local source", `local = "src"`, "local = \"src\"\nmax_unpacked_size = 100", "11:21", "max_unpacked_size does not apply to a local source"},
	{"source supplier without its type", "local = \"src\"\n", "local = \"src\"\nsupplier = \"vexl upstream\"\n", "11:12", `invalid supplier "vexl upstream"`},
	{"toolchain supplier without its type", "command = [\"go\", \"version\"]\n", "command = [\"go\", \"version\"]\nsupplier = \"Google\"\n", "20:12", `write "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)"`},
	{"project supplier of an unknown type", "version = \"V1.0-RC_1\"\n", "version = \"V1.0-RC_1\"\nsupplier = \"Team: vexl\"\n", "4:12", `invalid supplier "Team: vexl"`},
	{"supplier misspelt", "local = \"src\"\n", "local = \"src\"\nsuplier = \"Person: Ada\"\n", "11:1", `did you mean "supplier"?`},
	{"lane network not a boolean", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[[evidence.lane]]\nname = \"fetch\"\nkind = \"cases\"\nrun = [\"true\"]\nnetwork = \"yes\"\n", "36:11", "takes true or false"},
	{"remote cache mode unknown", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote_mode = \"lax\"\n", "33:15", "invalid remote_mode \"lax\""},
	{"remote cache writer outside", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\ntrusted_writers = [\"../ci.pub\"]\n", "33:20", "leaves the project folder"},
	{"remote cache unknown key", "timeout = \"5m\"\n", "timeout = \"5m\"\n\n[cache]\nremote = \"https://cache.example.invalid/x\"\ntoken = \"s3cret\"\n", "34:1", "unknown key"},
}

// Suppliers of the release, a source and a toolchain, in SPDX form, for
// the SBOM; each is optional.
func TestParseSuppliers(t *testing.T) {
	src := strings.NewReplacer(
		"version = \"V1.0-RC_1\"\n", "version = \"V1.0-RC_1\"\nsupplier = \"Organization: vexl release team (release@vexl.invalid)\"\n",
		"local = \"src\"\n", "local = \"src\"\nsupplier = \"Organization: vexl developers\"\n",
		"command = [\"go\", \"version\"]\n", "command = [\"go\", \"version\"]\nsupplier = \"Person: Ada Lovelace (ada@example.invalid)\"\n",
	).Replace(validTOML)
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := [3]string{c.Project.Supplier, c.Sources[0].Supplier, c.Toolchains[0].Supplier}; got != [3]string{
		"Organization: vexl release team (release@vexl.invalid)", "Organization: vexl developers", "Person: Ada Lovelace (ada@example.invalid)"} {
		t.Errorf("suppliers (project, source, toolchain) = %q", got)
	}
	c, err = Parse("release.toml", "/p", []byte(validTOML))
	if err != nil || c.Sources[0].Supplier != "" || c.Toolchains[0].Supplier != "" {
		t.Errorf("without suppliers: %v, source %q, toolchain %q", err, c.Sources[0].Supplier, c.Toolchains[0].Supplier)
	}
}

func TestParseCache(t *testing.T) {
	src := validTOML + "\n[cache]\nremote = \"http://127.0.0.1:9090/mk\"\nremote_token_env = \"CACHE_TOKEN\"\nremote_timeout = \"5s\"\nremote_upload = false\nremote_max_size = 1_048_576\ntrusted_writers = [\"keys/ci.pub\"]\nremote_mode = \"verify\"\n"
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.Cache.Remote != "http://127.0.0.1:9090/mk" || c.Cache.RemoteTokenEnv != "CACHE_TOKEN" ||
		c.Cache.RemoteTimeout.Seconds() != 5 || c.Cache.RemoteUpload == nil || *c.Cache.RemoteUpload ||
		c.Cache.RemoteMaxBytes() != 1<<20 || len(c.Cache.TrustedWriters) != 1 || c.Cache.TrustedWriters[0] != "keys/ci.pub" ||
		c.Cache.RemoteMode != RemoteModeVerify {
		t.Errorf("cache = %+v", c.Cache)
	}
	c, err = Parse("release.toml", "/p", []byte(validTOML))
	if err != nil || c.Cache.RemoteMaxBytes() != DefaultRemoteMaxSize {
		t.Errorf("remote_max_size unset: %v, RemoteMaxBytes() = %d, want %d", err, c.Cache.RemoteMaxBytes(), DefaultRemoteMaxSize)
	}
}

func TestParseRefusesWithPosition(t *testing.T) {
	for _, tc := range badConfigs {
		t.Run(tc.name, func(t *testing.T) {
			src := validTOML
			if tc.old != "" {
				if !strings.Contains(src, tc.old) {
					t.Fatalf("test bug: %q not in valid config", tc.old)
				}
				src = strings.Replace(src, tc.old, tc.new, 1)
			}
			_, err := Parse("release.toml", "/p", []byte(src))
			if err == nil {
				t.Fatalf("Parse accepted:\n%s", src)
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse error %T %v, want ErrorList", err, err)
			}
			if code := list.ExitCode(); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "release.toml:"+tc.wantPos+":") {
				t.Errorf("Parse error = %q, want position release.toml:%s", msg, tc.wantPos)
			}
			if !strings.Contains(msg, tc.wantInMsg) {
				t.Errorf("Parse error = %q, want it to contain %q", msg, tc.wantInMsg)
			}
		})
	}
}

// TestLaneNetwork: a lane has no network unless it says network = true.
func TestLaneNetwork(t *testing.T) {
	src := validTOML + "\n[[evidence.lane]]\nname = \"fetch\"\nkind = \"cases\"\nrun = [\"true\"]\nnetwork = true\n" +
		"\n[[evidence.lane]]\nname = \"offline\"\nkind = \"cases\"\nrun = [\"true\"]\n"
	c, err := Parse("release.toml", "/p", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Evidence.Lanes; len(l) != 2 || !l[0].Network || l[1].Network {
		t.Errorf("lanes %+v: want fetch with the network and offline without", l)
	}
}

func TestErrorsAreAllReported(t *testing.T) {
	src := strings.Replace(validTOML, `version = "V1.0-RC_1"`, `version = "x"`, 1)
	src = strings.Replace(src, `source = "up"`+"\npatch", `source = "nope"`+"\npatch", 1)
	_, err := Parse("release.toml", "/p", []byte(src))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("got %v, want 2 errors", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(validTOML))
	f.Add([]byte("[[build.step]]\nname=1\n[[build.step.x]]\n"))
	f.Add([]byte("a.b.c = {d = [1, {e = 2}]}\n[[a.b]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("release.toml", "/p", data)
		if err == nil && c == nil {
			t.Fatal("nil config without error")
		}
		if err != nil {
			var coder interface{ ExitCode() int }
			if !errors.As(err, &coder) || coder.ExitCode() != 2 {
				t.Fatalf("error %v does not map to exit 2", err)
			}
		}
	})
}

// The repository's own release.toml (the embedded default) keeps loading as
// the rules get stricter: exact keys, text classes, what build needs.
func TestEmbeddedDefaultLoads(t *testing.T) {
	if _, err := Load("../../release.toml"); err != nil {
		t.Fatalf("the embedded default release.toml is refused:\n%v", err)
	}
}

func TestToolPath(t *testing.T) {
	c := &Config{Dir: "/p", Toolchains: []Toolchain{{Name: "go"}, {Name: "zig", Path: ".toolchains/zig"}, {Name: "mingw", Path: "tools/mingw"}}}
	want := []string{filepath.FromSlash("/p/.toolchains/zig"), filepath.FromSlash("/p/tools/mingw")}
	if got := c.ToolPath(); !slices.Equal(got, want) {
		t.Errorf("ToolPath() = %v, want %v", got, want)
	}
}

func TestSourcesOf(t *testing.T) {
	c := &Config{
		Build: Build{Steps: []Step{
			{Name: "lib", Source: "core", Uses: []string{"headers"}},
			{Name: "arm-fixups", Source: "arm-patches", Targets: []string{"linux-aarch64"}},
			{Name: "test", Source: "core", Uses: []string{"testdata"}, Targets: []string{"linux-x86_64"}},
		}},
		Wheels: []Wheel{
			{Name: "demo", Include: []Include{{Source: "python", From: "demo"}, {Step: "lib", From: "lib.so"}},
				Licenses: []Include{{Source: "legal", From: "LICENSE"}}},
			{Name: "demo-arm-extras", Targets: []string{"linux-aarch64"}, Include: []Include{{Source: "arm-python", From: "x"}}},
			{Name: "demo-docs", Include: []Include{{Source: "windows-docs", From: "x", Targets: []string{"windows-amd64"}}}},
		},
	}
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"linux-x86_64", []string{"core", "headers", "legal", "python", "testdata"}},
		{"linux-aarch64", []string{"arm-patches", "arm-python", "core", "headers", "legal", "python"}},
		{"windows-amd64", []string{"core", "headers", "legal", "python", "windows-docs"}},
	} {
		var names []string
		for n := range c.SourcesOf(tc.target) {
			names = append(names, n)
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.want) {
			t.Errorf("SourcesOf(%s) = %v, want %v", tc.target, names, tc.want)
		}
	}
}

// TestBuildCurrent: require_current decides for every verb when set;
// unset, release refuses and build and check warn.
func TestBuildCurrent(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		set           *bool
		release, want bool
	}{
		{nil, false, false}, {nil, true, true},
		{&yes, false, true}, {&yes, true, true},
		{&no, false, false}, {&no, true, false},
	} {
		if got := (Build{RequireCurrent: tc.set}).Current(tc.release); got != tc.want {
			t.Errorf("require_current %v, release %v: Current = %v, want %v", tc.set, tc.release, got, tc.want)
		}
	}
}
