package e2e

import (
	"bytes"
	"debug/macho"
	"debug/pe"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkBinaries checks the binaries of every target of the embedded
// default in dist/build with the real tools and the standard library's
// parsers, never with mkrelease's own inspector: `file` says what each is;
// the Linux ones are ELF of their machine whose GLIBC_ symbol versions
// (readelf -V) stop at 2.17; the macOS ones are arm64 Mach-O with
// LC_BUILD_VERSION minos 13.0 for the library (read with debug/macho),
// which loads libSystem and CoreFoundation from the system and names
// itself @rpath/libvexl.dylib; the Windows ones are PE32+ for AMD64, the
// library a DLL that imports no MinGW runtime DLL.
func checkBinaries(t *testing.T, dist string) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			dir := filepath.Join(dist, "build", tg.name)
			for _, b := range []struct {
				file string
				want []string
			}{{tg.exe, tg.fileExe}, {tg.lib, tg.fileLib}} {
				out := must(t, "", nil, "file", "-b", filepath.Join(dir, b.file))
				for _, w := range b.want {
					if !strings.Contains(out, w) {
						t.Errorf("file %s/%s: %s, want %q in it", tg.name, b.file, strings.TrimSpace(out), w)
					}
				}
			}
			if st, err := os.Stat(filepath.Join(dir, tg.header)); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s missing (%v)", tg.name, tg.header, err)
			}
			switch {
			case tg.elfMachine != "":
				checkELF(t, dir, tg)
			case strings.HasPrefix(tg.tag, "macosx_"):
				checkMachO(t, dir, tg)
			default:
				checkPE(t, dir, tg)
			}
		})
	}
}

// checkELF checks the machine of both binaries and the glibc the library
// needs: some GLIBC_ version, none above 2.17.
func checkELF(t *testing.T, dir string, tg defaultTarget) {
	for _, f := range []string{tg.exe, tg.lib} {
		out := must(t, "", nil, "readelf", "-h", filepath.Join(dir, f))
		if !strings.Contains(out, tg.elfMachine) {
			t.Errorf("readelf -h %s/%s: want machine %q:\n%s", tg.name, f, tg.elfMachine, out)
		}
	}
	out := must(t, "", nil, "readelf", "-V", "--wide", filepath.Join(dir, tg.lib))
	var over []string
	n := 0
	for _, m := range regexp.MustCompile(`Name: GLIBC_2\.(\d+)`).FindAllStringSubmatch(out, -1) {
		minor, _ := strconv.Atoi(m[1])
		n++
		if minor > 17 {
			over = append(over, m[0])
		}
	}
	if n == 0 {
		t.Errorf("readelf -V %s/%s shows no GLIBC_ version need:\n%s", tg.name, tg.lib, out)
	}
	if len(over) > 0 {
		t.Errorf("%s/%s needs glibc above 2.17: %v", tg.name, tg.lib, over)
	}
}

// checkMachO checks the Mach-O files with debug/macho: arm64, the library
// a dylib with minos 13.0 that loads exactly libSystem and CoreFoundation,
// the executable needing no newer macOS.
func checkMachO(t *testing.T, dir string, tg defaultTarget) {
	lib := openMachO(t, dir, tg.lib, macho.TypeDylib)
	if v, ok := machoMinOS(lib); !ok || v != "13.0" {
		t.Errorf("%s: LC_BUILD_VERSION minos %q (found %v), want 13.0", tg.lib, v, ok)
	}
	libs, err := lib.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(libs)
	want := []string{"/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation", "/usr/lib/libSystem.B.dylib"}
	if !slices.Equal(libs, want) {
		t.Errorf("%s loads %v, want %v", tg.lib, libs, want)
	}
	if id := machoID(lib); id != "@rpath/libvexl.dylib" {
		t.Errorf("%s: LC_ID_DYLIB %q, want @rpath/libvexl.dylib", tg.lib, id)
	}
	exe := openMachO(t, dir, tg.exe, macho.TypeExec)
	if v, ok := machoMinOS(exe); !ok {
		t.Errorf("%s records no minimum macOS", tg.exe)
	} else if major, _ := strconv.Atoi(strings.Split(v, ".")[0]); major > 13 {
		t.Errorf("%s needs macOS %s, more than the tag's 13.0", tg.exe, v)
	}
}

// openMachO opens the Mach-O file name of dir, closed when the test ends,
// and checks that it is an arm64 file of type typ.
func openMachO(t *testing.T, dir, name string, typ macho.Type) *macho.File {
	t.Helper()
	f, err := macho.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("debug/macho: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	if f.Cpu != macho.CpuArm64 || f.Type != typ {
		t.Errorf("%s: cpu %v, type %v, want arm64 %v", name, f.Cpu, f.Type, typ)
	}
	return f
}

// machoMinOS reads the minos of the file's LC_BUILD_VERSION for macOS, as
// "major.minor" (".patch" when not zero).
func machoMinOS(f *macho.File) (string, bool) {
	const lcBuildVersion, platformMacOS = 0x32, 1
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 24 || f.ByteOrder.Uint32(raw) != lcBuildVersion || f.ByteOrder.Uint32(raw[8:]) != platformMacOS {
			continue
		}
		v := f.ByteOrder.Uint32(raw[12:])
		s := fmt.Sprintf("%d.%d", v>>16, v>>8&0xff)
		if v&0xff != 0 {
			s += fmt.Sprintf(".%d", v&0xff)
		}
		return s, true
	}
	return "", false
}

// machoID is the install name of a dylib (LC_ID_DYLIB).
func machoID(f *macho.File) string {
	const lcIDDylib = 0xd
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) < 12 || f.ByteOrder.Uint32(raw) != lcIDDylib {
			continue
		}
		off := f.ByteOrder.Uint32(raw[8:])
		if int(off) >= len(raw) {
			return ""
		}
		name, _, _ := bytes.Cut(raw[off:], []byte{0})
		return string(name)
	}
	return ""
}

// checkPE checks the PE files with debug/pe: AMD64, the library a DLL, and
// neither importing a DLL of the MinGW runtime, which a Windows machine
// does not have.
func checkPE(t *testing.T, dir string, tg defaultTarget) {
	for _, name := range []string{tg.exe, tg.lib} {
		f, err := pe.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("debug/pe: %v", err)
		}
		defer f.Close()
		if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("%s: machine %#x, want AMD64", name, f.Machine)
		}
		if isDLL := f.Characteristics&pe.IMAGE_FILE_DLL != 0; isDLL != (name == tg.lib) {
			t.Errorf("%s: IMAGE_FILE_DLL is %v", name, isDLL)
		}
		syms, err := f.ImportedSymbols()
		if err != nil {
			t.Fatal(err)
		}
		dlls := map[string]bool{}
		for _, s := range syms {
			if i := strings.LastIndexByte(s, ':'); i >= 0 {
				dlls[strings.ToLower(s[i+1:])] = true
			}
		}
		for d := range dlls {
			if strings.HasPrefix(d, "libgcc") || strings.HasPrefix(d, "libwinpthread") || strings.HasPrefix(d, "libstdc++") {
				t.Errorf("%s imports %s, a MinGW runtime DLL", name, d)
			}
		}
		if name == tg.lib && !dlls["kernel32.dll"] {
			t.Errorf("%s imports %v, not kernel32.dll", name, dlls)
		}
	}
}

// pipPlatforms checks that pip resolves each target's pair from dist for
// a platform of that target, and nothing for macOS 12 (below the tag).
func pipPlatforms(t *testing.T, dist string) {
	py := pythonFor(t, 12)
	download := func(t *testing.T, platform string) ([]string, string, error) {
		dest := t.TempDir()
		cmd := exec.Command(py, "-m", "pip", "download", "--isolated", "--no-cache-dir", "--disable-pip-version-check",
			"--no-index", "--find-links", dist, "--only-binary=:all:", "--platform", platform, "--python-version", "3.12",
			"-d", dest, "vexl-plugin==0.3.0")
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		var got []string
		entries, _ := os.ReadDir(dest)
		for _, e := range entries {
			got = append(got, e.Name())
		}
		slices.Sort(got)
		return got, string(out), err
	}
	for _, tg := range targets {
		t.Run(tg.pipPlatform, func(t *testing.T) {
			got, out, err := download(t, tg.pipPlatform)
			want := []string{wheelName("vexl_compiler", tg.name), wheelName("vexl_plugin", tg.name)}
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("pip download --platform %s: %v, got %v, want %v\n%s", tg.pipPlatform, err, got, want, out)
			}
		})
	}
	t.Run("macosx_12_0_arm64 finds none", func(t *testing.T) {
		got, out, err := download(t, "macosx_12_0_arm64")
		if err == nil || len(got) != 0 || !strings.Contains(out, "No matching distribution found for vexl-plugin==0.3.0") {
			t.Errorf("pip download --platform macosx_12_0_arm64: %v, got %v, want none (the wheels need macOS 13)\n%s", err, got, out)
		}
	})
}
