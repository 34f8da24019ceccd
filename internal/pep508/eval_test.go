package pep508

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
)

// testEnvironments returns the environments of the evaluation tables, in
// the order of the letters of evalTests' want strings.
func testEnvironments(t testing.TB) (names []string, envs []Environment) {
	t.Helper()
	add := func(python string, p Platform, release, version string) {
		env, err := TargetEnvironment(python, p)
		if err != nil {
			t.Fatalf("TargetEnvironment(%q, %q) error: %v", python, p, err)
		}
		env["platform_release"] = release
		env["platform_version"] = version
		names = append(names, fmt.Sprintf("CPython %s on %s", python, p))
		envs = append(envs, env)
	}
	add("3.8.18", LinuxX86_64, "6.5.0-1025-azure", "#26~22.04.1-Ubuntu SMP Thu Jul 11 22:33:04 UTC 2024")
	add("3.11.9", MacOSArm64, "23.5.0", "Darwin Kernel Version 23.5.0: Wed May  1 20:12:58 PDT 2024; root:xnu-10063.121.3~5/RELEASE_ARM64_T6000")
	add("3.13.0", WindowsAMD64, "11", "10.0.22631")
	return names, envs
}

// evalTests lists markers and their value in each test environment: 'T'
// true, 'F' false, 'E' an *EvalError; the letters are for CPython 3.8 on
// Linux x86_64, 3.11 on macOS arm64 and 3.13 on Windows amd64.
var evalTests = []struct {
	marker string
	want   string
}{
	// Version fields compare as versions, not strings ("3.8" < "3.10").
	{`python_version < "3.10"`, "TFF"},
	{`python_version >= "3.9"`, "FTT"},
	{`python_version > "3.8"`, "FTT"},
	{`python_version <= "3.11"`, "TTF"},
	{`python_version == "3.8"`, "TFF"},
	{`python_version == "3.8.0"`, "TFF"}, // zero padding
	{`python_version != "3.11"`, "TFT"},
	{`python_version == "3.*"`, "TTT"},
	{`python_version == "3.1*"`, "FFF"}, // not a version: string equality
	{`python_version ~= "3.8"`, "TTT"},
	{`python_version ~= "3.11.0"`, "FTF"}, // >=3.11.0, ==3.11.*
	{`python_version === "3.8"`, "TFF"},
	{`python_version === "3.8.0"`, "FFF"}, // arbitrary equality is string equality
	// The quoted string may be on the left.
	{`"3.9" <= python_version`, "FTT"},
	{`"3.9" > python_version`, "TFF"},
	{`"3.11" == python_version`, "FTF"},
	// Full versions and the implementation version.
	{`python_full_version < "3.8.19"`, "TFF"},
	{`python_full_version >= "3.8.1" and python_full_version < "3.12"`, "TTF"},
	{`python_full_version == "3.11.*"`, "FTF"},
	{`python_full_version ~= "3.11.2"`, "FTF"},
	{`implementation_version >= "3.11"`, "FTT"},
	{`implementation_name == "cpython" and platform_python_implementation == "CPython"`, "TTT"},
	{`platform_python_implementation != "PyPy"`, "TTT"},
	// White space around a version is ignored, as in version specifiers.
	{`python_version >= " 3.9 "`, "FTT"},
	// Invalid versions fall back to string comparison.
	{`python_version >= "surprise"`, "FFF"},
	{`python_version < "surprise"`, "FFF"},
	{`python_version != "surprise"`, "TTT"},
	{`python_version == "3.8, 3.9"`, "FFF"}, // not read as two clauses
	{`python_version == "=3.8"`, "FFF"},     // not read as "===3.8"
	{`python_version ~= "surprise"`, "EEE"},
	{`python_version ~= "3"`, "EEE"}, // "~=" needs two release numbers
	// "in" and "not in" are substring tests, even on version fields.
	{`python_version in "3.8 3.9"`, "TFF"},
	{`python_version not in "3.8 3.9"`, "FTT"},
	{`"3.1" in python_version`, "FTT"},
	// String fields.
	{`sys_platform == "linux"`, "TFF"},
	{`sys_platform != "win32"`, "TTF"},
	{`sys_platform == "Linux"`, "FFF"}, // case-sensitive
	{`"linux" in sys_platform`, "TFF"},
	{`sys_platform in "linux darwin"`, "TTF"},
	{`"win" not in sys_platform`, "TFF"}, // "darwin" contains "win"
	{`os_name == "nt"`, "FFT"},
	{`os_name == "posix"`, "TTF"},
	{`platform_system == "Darwin"`, "FTF"},
	{`platform_system == "Windows" or platform_system == "Linux"`, "TFT"},
	{`platform_machine == "x86_64"`, "TFF"},
	{`platform_machine == "AMD64"`, "FFT"},
	{`platform_machine == "arm64" or platform_machine == "aarch64"`, "FTF"},
	{`implementation_name == "pypy"`, "FFF"},
	// Ordered comparisons on strings: >= and <= are ==, < and > are false.
	{`sys_platform >= "linux"`, "TFF"},
	{`sys_platform <= "darwin"`, "FTF"},
	{`sys_platform > "a"`, "FFF"},
	{`sys_platform < "z"`, "FFF"},
	{`"a" < sys_platform`, "FFF"},
	// "~=" and "===" are not defined for string fields.
	{`sys_platform ~= "linux"`, "EEE"},
	{`os_name === "posix"`, "EEE"},
	// Version | String fields: versions when both sides parse, else strings.
	{`platform_release >= "22"`, "FTF"},   // "6.5.0-1025-azure" is not a version
	{`platform_release == "23.5"`, "FTF"}, // 23.5.0 == 23.5
	{`platform_release < "12"`, "FFT"},    // "11" < "12"
	{`platform_release == "6.5.0-1025-azure"`, "TFF"},
	{`"azure" in platform_release`, "TFF"},
	{`"SMP" in platform_version`, "TFF"},
	{`platform_version >= "10.0.22000"`, "FFT"},
	{`platform_version === "10.0.22631"`, "FFT"},
	{`platform_release ~= "23.1"`, "ETF"}, // "6.5.0-1025-azure" is not a version, and "~=" needs one
	// Precedence: "and" binds tighter than "or"; parentheses group.
	{`os_name == "nt" or python_version < "3.9" and sys_platform == "darwin"`, "FFT"},
	{`(os_name == "nt" or python_version < "3.9") and sys_platform == "linux"`, "TFF"},
	{`sys_platform == "linux" and python_version < "3.9" or sys_platform == "win32"`, "TFT"},
	{`sys_platform == "linux" and (python_version < "3.9" or sys_platform == "win32")`, "TFF"},
	// Every comparison is evaluated: an undefined one is an error even
	// when the result would not depend on it.
	{`sys_platform == "linux" or sys_platform ~= "x"`, "EEE"},
	{`sys_platform == "nope" and sys_platform ~= "x"`, "EEE"},
	// extra is not defined in these environments.
	{`extra == "test"`, "EEE"},
	{`python_version < "3" and extra == "test"`, "EEE"},
}

func result(ok bool, err error) byte {
	switch {
	case err != nil:
		return 'E'
	case ok:
		return 'T'
	}
	return 'F'
}

func TestEvaluate(t *testing.T) {
	names, envs := testEnvironments(t)
	for _, tt := range evalTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			if len(tt.want) != len(envs) {
				t.Fatalf("want %q has %d letters, want %d", tt.want, len(tt.want), len(envs))
			}
			for i, env := range envs {
				ok, err := m.Evaluate(env)
				if got := result(ok, err); got != tt.want[i] {
					t.Errorf("ParseMarker(%q).Evaluate(%s) = %v, %v; want %c", tt.marker, names[i], ok, err, tt.want[i])
				}
				if err != nil {
					var ee *EvalError
					if !errors.As(err, &ee) || ee.Comparison == "" || ee.Variable == "" || ee.Reason == "" {
						t.Errorf("ParseMarker(%q).Evaluate(%s) error = %#v, want a complete *EvalError", tt.marker, names[i], err)
					}
					if ok {
						t.Errorf("ParseMarker(%q).Evaluate(%s) = true with an error", tt.marker, names[i])
					}
				}
			}
		})
	}
}

// extraTests evaluates markers with the extra variable; the letters of want
// are for no extra (""), the extra "test" and the extra "Foo_Bar".
var extraTests = []struct {
	marker string
	want   string
}{
	{`extra == "test"`, "FTF"},
	{`extra == "TEST"`, "FTF"},
	{`"test" == extra`, "FTF"},
	{`extra == "foo-bar"`, "FFT"},
	{`extra == "Foo.Bar"`, "FFT"},
	{`extra == "foo__bar"`, "FFT"},
	{`extra != "test"`, "TFT"},
	{`extra == ""`, "TFF"},
	// Other operators are not defined for extra and evaluate to false.
	{`"test" in extra`, "FFF"},
	{`extra not in "test"`, "FFF"},
	{`extra >= "test"`, "FFF"},
	{`extra ~= "test"`, "FFF"},
	{`extra === "test"`, "FFF"},
	{`extra == "test" and python_version >= "3.9"`, "FTF"},
	{`extra == "test" or extra == "foo_bar"`, "FTT"},
}

func TestEvaluateExtra(t *testing.T) {
	base, err := TargetEnvironment("3.11", LinuxX86_64)
	if err != nil {
		t.Fatal(err)
	}
	extras := []string{"", "test", "Foo_Bar"}
	for _, tt := range extraTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			for i, extra := range extras {
				env := base.WithExtra(extra)
				ok, err := m.Evaluate(env)
				if got := result(ok, err); got != tt.want[i] {
					t.Errorf("ParseMarker(%q).Evaluate(extra %q) = %v, %v; want %c", tt.marker, extra, ok, err, tt.want[i])
				}
				// An unnormalised value set directly compares the same.
				env["extra"] = extra
				ok, err = m.Evaluate(env)
				if got := result(ok, err); got != tt.want[i] {
					t.Errorf("ParseMarker(%q).Evaluate(extra set to %q) = %v, %v; want %c", tt.marker, extra, ok, err, tt.want[i])
				}
			}
		})
	}
}

func TestWithExtra(t *testing.T) {
	base := Environment{"os_name": "posix"}
	env := base.WithExtra("Foo_Bar")
	if want := (Environment{"os_name": "posix", "extra": "foo-bar"}); !maps.Equal(env, want) {
		t.Errorf("WithExtra(%q) = %v, want %v", "Foo_Bar", env, want)
	}
	if _, ok := base["extra"]; ok {
		t.Errorf("WithExtra modified its receiver: %v", base)
	}
	var nilEnv Environment
	if got := nilEnv.WithExtra(""); !maps.Equal(got, Environment{"extra": ""}) {
		t.Errorf("Environment(nil).WithExtra(\"\") = %v", got)
	}
}

// preReleaseTests evaluates markers on CPython 3.13.0rc1, where the
// pre-release rules of version specifiers matter.
var preReleaseTests = []struct {
	marker string
	want   bool
}{
	{`python_version >= "3.13"`, true}, // python_version is "3.13"
	{`python_full_version >= "3.13"`, false},
	{`python_full_version >= "3.13.0rc1"`, true},
	{`python_full_version >= "3.13.0b1"`, true},
	{`python_full_version < "3.13"`, false}, // "<" excludes pre-releases of the named version
	{`python_full_version < "3.13.0rc2"`, true},
	{`python_full_version == "3.13.*"`, true},
	{`python_full_version > "3.12"`, true},
	{`implementation_version == "3.13.0rc1"`, true},
	{`python_full_version === "3.13.0RC1"`, true},
	{`"3.13.0rc1" in python_full_version`, true},
}

func TestEvaluatePreRelease(t *testing.T) {
	env, err := TargetEnvironment("3.13.0rc1", LinuxAarch64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range preReleaseTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			ok, err := m.Evaluate(env)
			if err != nil || ok != tt.want {
				t.Errorf("ParseMarker(%q).Evaluate(3.13.0rc1) = %v, %v; want %v", tt.marker, ok, err, tt.want)
			}
		})
	}
}

// untaggedBuildTests evaluates markers where python_full_version is that of
// an untagged CPython build ("3.12.1+"), which pypa/packaging reads as the
// local version "3.12.1+local".
var untaggedBuildTests = []struct {
	marker string
	want   bool
}{
	{`python_full_version >= "3.12.1"`, true},
	{`python_full_version == "3.12.1"`, true},
	{`python_full_version < "3.12.2"`, true},
}

func TestEvaluateUntaggedBuild(t *testing.T) {
	env := Environment{"python_full_version": "3.12.1+"}
	for _, tt := range untaggedBuildTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			ok, err := m.Evaluate(env)
			if err != nil || ok != tt.want {
				t.Errorf("ParseMarker(%q).Evaluate(3.12.1+) = %v, %v; want %v", tt.marker, ok, err, tt.want)
			}
		})
	}
}

func TestEvaluateErrors(t *testing.T) {
	tests := []struct {
		marker   string
		env      Environment
		variable string
		word     string
	}{
		{`os_name == "nt"`, Environment{}, "os_name", "does not define os_name"},
		{`os_name == "nt" and sys_platform == "x"`, Environment{"os_name": "nt"}, "sys_platform", "does not define"},
		{`os_name == "nt" or sys_platform ~= "x"`, Environment{"os_name": "nt", "sys_platform": "x"}, "sys_platform", `"~=" is not defined`},
		{`python_version ~= "x"`, Environment{"python_version": "3.8"}, "python_version", "not both valid"},
		{`extra == "x"`, Environment{"os_name": "nt"}, "extra", "does not define extra"},
	}
	for _, tt := range tests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			ok, err := m.Evaluate(tt.env)
			var ee *EvalError
			if ok || !errors.As(err, &ee) {
				t.Fatalf("ParseMarker(%q).Evaluate(%v) = %v, %v; want an *EvalError", tt.marker, tt.env, ok, err)
			}
			if ee.Variable != tt.variable || !strings.Contains(err.Error(), tt.word) {
				t.Errorf("ParseMarker(%q).Evaluate(%v) error = %q (variable %q), want variable %q and %q", tt.marker, tt.env, err, ee.Variable, tt.variable, tt.word)
			}
		})
	}
}

func TestEvaluateNil(t *testing.T) {
	var m *Marker
	if ok, err := m.Evaluate(nil); !ok || err != nil {
		t.Errorf("(*Marker)(nil).Evaluate(nil) = %v, %v; want true, nil", ok, err)
	}
	if tr, err := m.EvaluatePartial(nil); tr != True || err != nil {
		t.Errorf("(*Marker)(nil).EvaluatePartial(nil) = %v, %v; want true, nil", tr, err)
	}
	if p := m.Lint(); p != nil {
		t.Errorf("(*Marker)(nil).Lint() = %v, want nil", p)
	}
}

// partialTests evaluates markers for CPython 3.11 on Linux x86_64 with
// python_full_version, implementation_version, platform_release,
// platform_version and extra unknown.
var partialTests = []struct {
	marker string
	want   Truth
	err    bool
}{
	{`python_version >= "3.9"`, True, false},
	{`python_version < "3.9"`, False, false},
	{`python_full_version >= "3.8.1"`, Unknown, false},
	{`sys_platform == "win32" and python_full_version >= "3.8.1"`, False, false},
	{`python_full_version >= "3.8.1" and sys_platform == "win32"`, False, false},
	{`sys_platform == "linux" or platform_release >= "5"`, True, false},
	{`sys_platform == "linux" and platform_release >= "5"`, Unknown, false},
	{`sys_platform == "win32" or platform_release >= "5"`, Unknown, false},
	{`extra == "test"`, Unknown, false},
	{`extra == "test" and python_version < "3"`, False, false},
	{`(platform_release >= "5" or extra == "x") and os_name == "posix"`, Unknown, false},
	// Sound but not complete.
	{`python_full_version < "3.11.4" or python_full_version >= "3.11.4"`, Unknown, false},
	// Errors are reported for comparisons whose variable is known only.
	{`platform_release ~= "x"`, Unknown, false},
	{`sys_platform ~= "linux" and platform_release >= "5"`, False, true},
}

func TestEvaluatePartial(t *testing.T) {
	env, err := TargetEnvironment("3.11", LinuxX86_64)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range partialTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			got, err := m.EvaluatePartial(env)
			if got != tt.want || (err != nil) != tt.err {
				t.Errorf("ParseMarker(%q).EvaluatePartial(3.11 linux) = %v, %v; want %v, error %v", tt.marker, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestTruthString(t *testing.T) {
	for tr, want := range map[Truth]string{False: "false", True: "true", Unknown: "unknown", Truth(7): "Truth(7)"} {
		if got := tr.String(); got != want {
			t.Errorf("Truth(%d).String() = %q, want %q", int8(tr), got, want)
		}
	}
}

// lintTests lists markers and the comparisons Lint should report, joined
// by " | ".
var lintTests = []struct {
	marker string
	want   string
}{
	{`python_version >= "3.9" and sys_platform == "linux" and extra == "test"`, ""},
	{`"3.9" <= python_version and "SMP" in platform_version and platform_release >= "5"`, ""},
	{`implementation_version === "not.a.valid.version"`, ""},
	{`python_version == "3.*" and python_version ~= "3.8"`, ""},
	{`sys_platform >= "linux"`, `sys_platform >= "linux"`},
	{`os_name < "a" or "b" > os_name`, `os_name < "a" | "b" > os_name`},
	{`sys_platform ~= "linux" and os_name === "nt"`, `sys_platform ~= "linux" | os_name === "nt"`},
	{`python_version in "3.8 3.9"`, `python_version in "3.8 3.9"`},
	{`"3" not in python_full_version`, `"3" not in python_full_version`},
	{`python_version >= "surprise"`, `python_version >= "surprise"`},
	{`"3.x" < python_version`, `"3.x" < python_version`},
	{`python_version == "3.8.*.1"`, `python_version == "3.8.*.1"`},
	{`python_version ~= "3"`, `python_version ~= "3"`},
	{`extra != "test"`, `extra != "test"`},
	{`"test" in extra`, `"test" in extra`},
	{`extra == "not valid!"`, `extra == "not valid!"`},
}

func TestLint(t *testing.T) {
	for _, tt := range lintTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			var got []string
			for _, p := range m.Lint() {
				if p.Reason == "" || !strings.HasPrefix(p.String(), p.Comparison+": ") {
					t.Errorf("ParseMarker(%q).Lint() problem %#v is incomplete", tt.marker, p)
				}
				got = append(got, p.Comparison)
			}
			if g := strings.Join(got, " | "); g != tt.want {
				t.Errorf("ParseMarker(%q).Lint() = %q, want %q", tt.marker, g, tt.want)
			}
		})
	}
}

var targetEnvironmentTests = []struct {
	python   string
	platform Platform
	want     Environment
}{
	{"3.11", LinuxX86_64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.11",
		"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
	}},
	{"3.12.4", LinuxAarch64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.12",
		"python_full_version": "3.12.4", "implementation_version": "3.12.4",
		"os_name": "posix", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64",
	}},
	{"3.10.0", MacOSArm64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.10",
		"python_full_version": "3.10.0", "implementation_version": "3.10.0",
		"os_name": "posix", "sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64",
	}},
	{"3.9", MacOSX86_64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.9",
		"os_name": "posix", "sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "x86_64",
	}},
	{"3.14.0a3", WindowsAMD64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.14",
		"python_full_version": "3.14.0a3", "implementation_version": "3.14.0a3",
		"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64",
	}},
	{"3.13", WindowsARM64, Environment{
		"implementation_name": "cpython", "platform_python_implementation": "CPython", "python_version": "3.13",
		"os_name": "nt", "sys_platform": "win32", "platform_system": "Windows", "platform_machine": "ARM64",
	}},
}

func TestTargetEnvironment(t *testing.T) {
	for _, tt := range targetEnvironmentTests {
		t.Run(tt.python+" "+string(tt.platform), func(t *testing.T) {
			got, err := TargetEnvironment(tt.python, tt.platform)
			if err != nil {
				t.Fatalf("TargetEnvironment(%q, %q) error: %v", tt.python, tt.platform, err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("TargetEnvironment(%q, %q) = %v, want %v", tt.python, tt.platform, got, tt.want)
			}
		})
	}
}

var invalidTargetTests = []struct {
	python   string
	platform Platform
	word     string
}{
	{"3", LinuxX86_64, "two or three numbers"},
	{"3.11.4.1", LinuxX86_64, "two or three numbers"},
	{"", LinuxX86_64, "two or three numbers"},
	{"3.x", LinuxX86_64, "not a number"},
	{"03.11", LinuxX86_64, "not a number"},
	{"3.11.", LinuxX86_64, "not a number"},
	{"3.11.0c1", LinuxX86_64, "pre-release suffix"},
	{"3.11.0rc", LinuxX86_64, "pre-release suffix"},
	{"3.11.0.dev1", LinuxX86_64, "two or three numbers"},
	{" 3.11", LinuxX86_64, "not a number"},
	{"3.11", "linux", "unknown platform"},
	{"3.11", "", "unknown platform"},
}

func TestTargetEnvironmentInvalid(t *testing.T) {
	for _, tt := range invalidTargetTests {
		t.Run(tt.python+" "+string(tt.platform), func(t *testing.T) {
			env, err := TargetEnvironment(tt.python, tt.platform)
			if err == nil {
				t.Fatalf("TargetEnvironment(%q, %q) = %v, want an error", tt.python, tt.platform, env)
			}
			if !strings.Contains(err.Error(), tt.word) {
				t.Errorf("TargetEnvironment(%q, %q) error = %q, want it to mention %q", tt.python, tt.platform, err, tt.word)
			}
		})
	}
}

// orientationTests shows why String keeps the side a variable was written
// on: with python_version "3.9.post1", "3.9" < python_version holds (3.9 is
// below 3.9.post1) but python_version > "3.9" does not (">3.9" excludes
// post-releases of 3.9).
var orientationTests = []struct {
	marker string
	want   bool
}{
	{`"3.9" < python_version`, true},
	{`python_version > "3.9"`, false},
	{`python_version >= "3.9"`, true},
}

func TestEvaluateOrientation(t *testing.T) {
	env := Environment{"python_version": "3.9.post1"}
	for _, tt := range orientationTests {
		t.Run(tt.marker, func(t *testing.T) {
			m, err := ParseMarker(tt.marker)
			if err != nil {
				t.Fatalf("ParseMarker(%q) error: %v", tt.marker, err)
			}
			ok, err := m.Evaluate(env)
			if err != nil || ok != tt.want {
				t.Errorf("ParseMarker(%q).Evaluate(3.9.post1) = %v, %v; want %v", tt.marker, ok, err, tt.want)
			}
		})
	}
}
