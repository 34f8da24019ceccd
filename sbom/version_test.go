package sbom

import (
	"encoding/json"
	"strings"
	"testing"
)

// Identity lines as toolchains print them (the first line of their
// version command), and the version each gives.
var toolchainVersions = []struct {
	line, want string // want "": no version can be read
}{
	{"go version go1.26.8 linux/amd64", "1.26.8"},
	{"go version go1.26rc1 darwin/arm64", "1.26rc1"},
	{"go version devel go1.27-4a5b6c7 Tue Nov 3 10:00:00 2026 +0000 linux/amd64", "1.27-4a5b6c7"},
	{"0.11.0", "0.11.0"}, // zig version
	{"0.12.0-dev.1856+94c63f31f", "0.12.0-dev.1856+94c63f31f"}, // a zig nightly
	{"v20.11.1", "20.11.1"}, // node --version
	{"x86_64-w64-mingw32-gcc (GCC) 12-win32", "12-win32"},
	{"gcc (Debian 12.2.0-14+deb12u1) 12.2.0", "12.2.0"},
	{"aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0", "12.2.0"},
	{"gcc (GCC) 13.2.1 20231011 (Red Hat 13.2.1-4)", "13.2.1"},
	{"GNU ld (GNU Binutils for Debian) 2.40", "2.40"},
	{"Debian clang version 14.0.6", "14.0.6"},
	{"Apple clang version 15.0.0 (clang-1500.1.0.2.5)", "15.0.0"},
	{"clang version 17.0.6 (https://github.com/llvm/llvm-project 6009708b4367171ccdbf4b5905cb6a803753fe18)", "17.0.6"},
	{"rustc 1.75.0 (82e1608df 2023-12-21)", "1.75.0"},
	{"cmake version 3.25.1", "3.25.1"},
	{"GNU Make 4.3", "4.3"},
	{"Python 3.12.1", "3.12.1"},
	{"  0.11.0  ", "0.11.0"}, // white space around it
	// No version: the line is kept in the comment instead.
	{"zig", ""},
	{"Usage: cc [options] file...", ""},
	{"built by (someone 1.2) on a Tuesday", ""}, // a number inside parentheses only
	{"version unknown", ""},
	{"", ""},
}

func TestToolchainVersion(t *testing.T) {
	for _, tc := range toolchainVersions {
		got, ok := toolchainVersion(tc.line)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("toolchainVersion(%q) = %q, %v; want %q, %v", tc.line, got, ok, tc.want, tc.want != "")
		}
	}
}

// Every rule of the table reads at least one line above: none is dead.
func TestToolchainVersionRulesUsed(t *testing.T) {
	for _, r := range versionRules {
		used := false
		for _, tc := range toolchainVersions {
			if tc.want != "" && r.re.MatchString(strings.TrimSpace(tc.line)) {
				used = true
			}
		}
		if !used {
			t.Errorf("rule %q reads no line of the table", r.name)
		}
	}
}

// A toolchain's versionInfo is its version, not its identity line, which
// the comment quotes; a line with no version leaves versionInfo out.
func TestToolchainVersionInfo(t *testing.T) {
	r := realistic()
	r.Toolchains = append(r.Toolchains,
		Toolchain{Name: "zig", Version: "0.11.0"},
		Toolchain{Name: "mingw-gcc", Version: "x86_64-w64-mingw32-gcc (GCC) 12-win32"},
		Toolchain{Name: "odd", Version: "Usage: odd [options]"})
	out := generate(t, r)
	if err := validate(t, out); err != nil {
		t.Errorf("the document is not valid SPDX 2.3 JSON:\n%v", err)
	}
	var doc struct {
		Packages []struct {
			SPDXID  string  `json:"SPDXID"`
			Version *string `json:"versionInfo"`
			Comment string  `json:"comment"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ version, line string }{
		"SPDXRef-Package-toolchain-go":               {"1.26.8", "go version go1.26.8 linux/amd64"},
		"SPDXRef-Package-toolchain-linux-x86-64-cc":  {"12.2.0", "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"},
		"SPDXRef-Package-toolchain-linux-aarch64-cc": {"12.2.0", "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0"},
		"SPDXRef-Package-toolchain-zig":              {"0.11.0", "0.11.0"},
		"SPDXRef-Package-toolchain-mingw-gcc":        {"12-win32", "x86_64-w64-mingw32-gcc (GCC) 12-win32"},
		"SPDXRef-Package-toolchain-odd":              {"", "Usage: odd [options]"},
	}
	for _, p := range doc.Packages {
		w, ok := want[p.SPDXID]
		if !ok {
			continue
		}
		delete(want, p.SPDXID)
		switch {
		case w.version == "" && p.Version != nil:
			t.Errorf("%s: versionInfo %q, want none (no version in %q)", p.SPDXID, *p.Version, w.line)
		case w.version != "" && (p.Version == nil || *p.Version != w.version):
			t.Errorf("%s: versionInfo %v, want %q", p.SPDXID, p.Version, w.version)
		}
		if !strings.Contains(p.Comment, "'"+w.line+"'") {
			t.Errorf("%s: comment %q does not quote the identity line %q", p.SPDXID, p.Comment, w.line)
		}
		if w.version == "" && !strings.Contains(p.Comment, "no version could be read") {
			t.Errorf("%s: comment %q does not say no version was read", p.SPDXID, p.Comment)
		}
	}
	for id := range want {
		t.Errorf("no package %s", id)
	}
}
