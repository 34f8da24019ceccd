package platform

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/testpart"
)

const helloMain = "package main\n\nfunc main() { println(\"hello\") }\n"

const cSharedMain = `package main

import "C"

//export Add
func Add(a, b C.int) C.int { return a + b }

func main() {}
`

// goBuild builds a one-file main package with the Go toolchain running the
// tests, into a fresh temporary directory, and returns the output path.
func goBuild(t *testing.T, src string, env []string, args ...string) string {
	t.Helper()
	// Another pair than the host's compiles the Go runtime and standard
	// library for it first: 30-40 s a pair on a cold build cache, 393 s for
	// all of this file's pairs on 2 cores. The default part builds for the
	// host only; the whole suite builds every pair.
	goos, goarch := runtime.GOOS, runtime.GOARCH
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOOS="); ok {
			goos = v
		}
		if v, ok := strings.CutPrefix(kv, "GOARCH="); ok {
			goarch = v
		}
	}
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		testpart.RequireFull(t, "cross-compiles the Go runtime for "+goos+"/"+goarch)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/hello\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := exec.Command(goTool, append(append([]string{"build", "-trimpath", "-o", out}, args...), ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local", "GOPROXY=off")
	cmd.Env = append(cmd.Env, env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", env, err, b)
	}
	return out
}

// rawMachOMinOS reads the minimum macOS of a thin 64-bit little-endian
// Mach-O by walking its load commands directly: an independent check of
// the package's parse.
func rawMachOMinOS(t *testing.T, b []byte) Version {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 32 || le.Uint32(b) != 0xfeedfacf {
		t.Fatalf("not a 64-bit little-endian Mach-O")
	}
	ncmds := int(le.Uint32(b[16:]))
	off := 32
	for i := 0; i < ncmds && off+8 <= len(b); i++ {
		cmd, size := le.Uint32(b[off:]), int(le.Uint32(b[off+4:]))
		switch cmd {
		case 0x32: // LC_BUILD_VERSION
			if le.Uint32(b[off+8:]) == 1 {
				v := le.Uint32(b[off+12:])
				return Version{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
			}
		case 0x24: // LC_VERSION_MIN_MACOSX
			v := le.Uint32(b[off+8:])
			return Version{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
		}
		if size < 8 {
			break
		}
		off += size
	}
	t.Fatalf("no macOS version load command")
	return Version{}
}

// expectedMacTag is the tag rule spelled out independently of the package.
func expectedMacTag(v Version, arch string) string {
	if v.Major >= 11 {
		if v.Minor == 0 && v.Patch == 0 {
			return fmt.Sprintf("macosx_%d_0_%s", v.Major, arch)
		}
		return fmt.Sprintf("macosx_%d_0_%s", v.Major+1, arch)
	}
	return fmt.Sprintf("macosx_10_%d_%s", v.Minor, arch)
}

func TestGoCrossCompiled(t *testing.T) {
	static := func(arch, manylinux string) string {
		return manylinux + "_" + arch + ".musllinux_1_2_" + arch
	}
	tests := []struct {
		goos, goarch string
		env          []string
		os, arch     string
		tag          string // "" for macOS, checked against the raw load command
		needed       string // a library it must list, if any
	}{
		{"linux", "amd64", nil, Linux, "x86_64", static("x86_64", "manylinux_2_17_x86_64.manylinux2014"), ""},
		{"linux", "arm64", nil, Linux, "aarch64", static("aarch64", "manylinux_2_17_aarch64.manylinux2014"), ""},
		{"linux", "386", nil, Linux, "i686", static("i686", "manylinux_2_17_i686.manylinux2014"), ""},
		{"linux", "arm", []string{"GOARM=7"}, Linux, "armv7l", static("armv7l", "manylinux_2_17_armv7l.manylinux2014"), ""},
		{"linux", "riscv64", nil, Linux, "riscv64", "manylinux_2_31_riscv64.musllinux_1_2_riscv64", ""},
		{"darwin", "amd64", nil, MacOS, "x86_64", "", "/usr/lib/libSystem.B.dylib"},
		{"darwin", "arm64", nil, MacOS, "arm64", "", "/usr/lib/libSystem.B.dylib"},
		{"windows", "amd64", nil, Windows, "amd64", "win_amd64", "kernel32.dll"},
		{"windows", "arm64", nil, Windows, "arm64", "win_arm64", "kernel32.dll"},
		{"windows", "386", nil, Windows, "win32", "win32", "kernel32.dll"},
	}
	for _, tt := range tests {
		t.Run(tt.goos+"_"+tt.goarch, func(t *testing.T) {
			env := append([]string{"CGO_ENABLED=0", "GOOS=" + tt.goos, "GOARCH=" + tt.goarch}, tt.env...)
			path := goBuild(t, helloMain, env)
			n, err := Inspect(path)
			if err != nil {
				t.Fatal(err)
			}
			if n.OS != tt.os || n.Arch != tt.arch {
				t.Errorf("OS/arch = %s/%s, want %s/%s", n.OS, n.Arch, tt.os, tt.arch)
			}
			if tt.os == Linux && (n.Libc != "" || len(n.Needed) != 0 || !n.Glibc.IsZero()) {
				t.Errorf("static Go binary: libc %q, needed %v, glibc %s; want nothing", n.Libc, n.Needed, n.Glibc)
			}
			if tt.needed != "" && !containsFold(n.Needed, tt.needed) {
				t.Errorf("Needed = %v, want it to include %s", n.Needed, tt.needed)
			}
			want := tt.tag
			if tt.os == MacOS {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				raw := rawMachOMinOS(t, b)
				t.Logf("Go's darwin/%s binary has minos %s", tt.goarch, raw)
				if n.MacOS != raw {
					t.Errorf("MacOS = %s, raw load command says %s", n.MacOS, raw)
				}
				want = expectedMacTag(raw, tt.arch)
			}
			got, err := Tag([]Need{n})
			if err != nil || got != want {
				t.Errorf("Tag = %q, %v; want %q", got, err, want)
			}
			if err := Satisfies(got, []Need{n}); err != nil {
				t.Errorf("Satisfies(own tag): %v", err)
			}
		})
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func TestGoUniversal2(t *testing.T) {
	var slices [][]byte
	var mins []Version
	for _, arch := range []string{"amd64", "arm64"} {
		b, err := os.ReadFile(goBuild(t, helloMain, []string{"CGO_ENABLED=0", "GOOS=darwin", "GOARCH=" + arch}))
		if err != nil {
			t.Fatal(err)
		}
		slices = append(slices, b)
		mins = append(mins, rawMachOMinOS(t, b))
	}
	n, err := InspectReader("hello-universal", bytes.NewReader(fat(slices...)))
	if err != nil {
		t.Fatal(err)
	}
	// The x86_64 slice sets the version; the arm64 slice only when it needs
	// more than macOS 11.0.
	want := mins[0]
	if mins[1].Compare(Version{11, 0, 0}) > 0 {
		want = maxVersion(want, mins[1])
	}
	if n.Arch != "universal2" || n.MacOS != want {
		t.Errorf("got %s minos %s, want universal2 minos %s", n.Arch, n.MacOS, want)
	}
	tag, err := Tag([]Need{n})
	if wantTag := expectedMacTag(want, "universal2"); err != nil || tag != wantTag {
		t.Errorf("Tag = %q, %v; want %q", tag, err, wantTag)
	}
	// With a thin arm64 binary the set only runs on arm64.
	thin, err := InspectReader("thin-arm64", bytes.NewReader(slices[1]))
	if err != nil {
		t.Fatal(err)
	}
	tag, err = Tag([]Need{n, thin})
	if !strings.HasSuffix(tag, "_arm64") || err != nil {
		t.Errorf("universal2 + arm64: Tag = %q, %v; want an arm64 tag", tag, err)
	}
}

// readelfGlibc runs readelf -V and returns the highest GLIBC_ version the
// file needs (rounded as the package documents; GLIBC_ABI_DT_RELR counts as
// 2.36), or skips if readelf is missing.
func readelfGlibc(t *testing.T, path string) Version {
	t.Helper()
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf not installed")
	}
	out, err := exec.Command("readelf", "-V", "-W", path).Output()
	if err != nil {
		t.Fatalf("readelf -V %s: %v", path, err)
	}
	needs := false
	var max Version
	re := regexp.MustCompile(`Name: GLIBC_(\d+)\.(\d+)(?:\.(\d+))?\b`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "Version needs section") {
			needs = true
		} else if strings.HasPrefix(line, "Version ") && !strings.HasPrefix(strings.TrimSpace(line), "Version:") {
			needs = false
		}
		if needs && strings.Contains(line, "Name: GLIBC_ABI_DT_RELR ") {
			// Packed relative relocations: glibc 2.36 and later.
			max = maxVersion(max, Version{2, 36, 0})
		}
		m := re.FindStringSubmatch(line)
		if !needs || m == nil {
			continue
		}
		var v Version
		fmt.Sscan(m[1], &v.Major)
		fmt.Sscan(m[2], &v.Minor)
		if m[3] != "" && m[3] != "0" {
			v.Minor++
		}
		max = maxVersion(max, v)
	}
	return max
}

// readelfBinds reports whether readelf lists symbol sym as an undefined
// dynamic symbol bound to version ver.
func readelfBinds(t *testing.T, path, sym, ver string) bool {
	t.Helper()
	out, err := exec.Command("readelf", "--dyn-syms", "-W", path).Output()
	if err != nil {
		t.Fatalf("readelf --dyn-syms %s: %v", path, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, " UND ") && strings.Contains(line, " "+sym+"@"+ver) {
			return true
		}
	}
	return false
}

func manylinuxTagFor(v Version, arch string) string {
	v = maxVersion(v, DefaultFloor())
	tag := fmt.Sprintf("manylinux_%d_%d_%s", v.Major, v.Minor, arch)
	if v == DefaultFloor() {
		tag += ".manylinux2014_" + arch
	}
	return tag
}

func TestCShared(t *testing.T) {
	tests := []struct {
		name, cc string
		env      []string
		arch     string
	}{
		{"native", "gcc", nil, "x86_64"},
		{"aarch64", "aarch64-linux-gnu-gcc", []string{"GOARCH=arm64", "CC=aarch64-linux-gnu-gcc"}, "aarch64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath(tt.cc); err != nil {
				t.Skipf("%s not installed: cannot build a cgo shared library for %s", tt.cc, tt.arch)
			}
			if tt.name == "native" && runtime.GOARCH != "amd64" {
				t.Skip("native test expects an x86_64 host")
			}
			path := goBuild(t, cSharedMain, append([]string{"CGO_ENABLED=1", "GOOS=linux"}, tt.env...), "-buildmode=c-shared")
			n, err := Inspect(path)
			if err != nil {
				t.Fatal(err)
			}
			if n.Arch != tt.arch || n.Libc != Glibc || n.Glibc.IsZero() || !containsFold(n.Needed, "libc.so.6") {
				t.Fatalf("got arch %s libc %q glibc %s needed %v; want %s glibc >0 linking libc.so.6", n.Arch, n.Libc, n.Glibc, n.Needed, tt.arch)
			}
			want := readelfGlibc(t, path)
			if n.Glibc != want {
				t.Errorf("Glibc = %s, readelf -V says %s", n.Glibc, want)
			}
			if !readelfBinds(t, path, n.GlibcSymbol, "GLIBC_"+n.Glibc.String()) {
				t.Errorf("GlibcSymbol %q is not bound to GLIBC_%s according to readelf", n.GlibcSymbol, n.Glibc)
			}
			if err := n.PolicyError(); err != nil {
				t.Errorf("PolicyError: %v", err)
			}
			tag, err := Tag([]Need{n})
			if err != nil || tag != manylinuxTagFor(want, tt.arch) {
				t.Errorf("Tag = %q, %v; want %q", tag, err, manylinuxTagFor(want, tt.arch))
			}
			t.Logf("%s c-shared library: %s (highest GLIBC_%s via %s)", tt.name, tag, n.Glibc, n.GlibcSymbol)
			if err := Satisfies(tag, []Need{n}); err != nil {
				t.Errorf("Satisfies(own tag): %v", err)
			}
			if n.Glibc.Compare(Version{2, 17, 0}) > 0 {
				lower := "manylinux_2_17_" + tt.arch
				err := Satisfies(lower, []Need{n})
				if err == nil {
					t.Fatalf("Satisfies(%s) accepted a library needing glibc %s", lower, n.Glibc)
				}
				for _, s := range []string{path, "GLIBC_" + n.Glibc.String(), n.GlibcSymbol, lower, "2.17"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
			}
		})
	}
}

func TestSystemBinaries(t *testing.T) {
	tests := []struct {
		path   string
		policy string // substring of the policy error, "" for none
	}{
		{"/bin/ls", ""},
		{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", ""},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "GLIBC_PRIVATE"},
		{"/usr/lib/x86_64-linux-gnu/libm.so.6", "GLIBC_PRIVATE"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			real, err := filepath.EvalSymlinks(tt.path)
			if err != nil {
				t.Skipf("%s: %v", tt.path, err)
			}
			n, err := Inspect(real)
			if err != nil {
				t.Fatal(err)
			}
			if n.OS != Linux || n.Libc != Glibc {
				t.Fatalf("got %s/%s, want a glibc Linux binary", n.OS, n.Libc)
			}
			if want := readelfGlibc(t, real); n.Glibc != want {
				t.Errorf("Glibc = %s, readelf -V says %s", n.Glibc, want)
			}
			err = n.PolicyError()
			var external []string
			for _, lib := range n.Needed {
				if _, ok := libraryFloor(lib); !ok {
					external = append(external, lib)
				}
			}
			switch {
			case tt.policy != "":
				if err == nil || !strings.Contains(err.Error(), tt.policy) {
					t.Errorf("PolicyError = %v, want it to mention %s", err, tt.policy)
				}
			case len(external) > 0:
				// /bin/ls links libselinux on Debian: not on the allowlist.
				if err == nil || !strings.Contains(err.Error(), external[0]) || !strings.Contains(err.Error(), "bundle it") {
					t.Errorf("PolicyError = %v, want it to name %s", err, external[0])
				}
				if _, err := Tag([]Need{n}); err == nil {
					t.Errorf("Tag accepted a binary linking %v", external)
				}
			default:
				if err != nil {
					t.Errorf("PolicyError: %v", err)
				}
				tag, err := Tag([]Need{n})
				if err != nil || !strings.HasPrefix(tag, fmt.Sprintf("manylinux_%d_", n.Glibc.Major)) {
					t.Errorf("Tag = %q, %v", tag, err)
				}
				t.Logf("%s: %s", tt.path, tag)
			}
		})
	}
}
