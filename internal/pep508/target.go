package pep508

import (
	"fmt"
	"strings"
)

// Platform names an operating system and CPU architecture for
// [TargetEnvironment], in the spelling mkrelease uses for build targets.
type Platform string

// The platforms [TargetEnvironment] knows.
const (
	// LinuxX86_64 is Linux on 64-bit x86.
	LinuxX86_64 Platform = "linux-x86_64"
	// LinuxAarch64 is Linux on 64-bit ARM.
	LinuxAarch64 Platform = "linux-aarch64"
	// MacOSArm64 is macOS on Apple silicon.
	MacOSArm64 Platform = "macos-arm64"
	// MacOSX86_64 is macOS on 64-bit x86.
	MacOSX86_64 Platform = "macos-x86_64"
	// WindowsAMD64 is Windows on 64-bit x86.
	WindowsAMD64 Platform = "windows-amd64"
	// WindowsARM64 is Windows on 64-bit ARM.
	WindowsARM64 Platform = "windows-arm64"
)

// TargetEnvironment returns the marker environment of CPython on the given
// platform, as CPython's own os, sys and platform modules report it there:
//
//	                   linux-*        macos-*        windows-*
//	os_name            posix          posix          nt
//	sys_platform       linux          darwin         win32
//	platform_system    Linux          Darwin         Windows
//	platform_machine   x86_64         x86_64         AMD64
//	                   aarch64        arm64          ARM64
//
// together with implementation_name "cpython" and
// platform_python_implementation "CPython".
//
// python is a CPython version: a feature release "X.Y" such as "3.11", or a
// full version "X.Y.Z" such as "3.11.4" or "3.13.0rc1". python_version is
// always set to "X.Y"; python_full_version and implementation_version are
// set only for a full version, since a feature release does not determine
// them. platform_release and platform_version describe the kernel or OS
// build, which a target does not determine, and are never set; neither is
// extra (see [Environment.WithExtra]). Use [Marker.EvaluatePartial] to
// evaluate markers that may refer to variables left unset, or set them in
// the returned map.
func TargetEnvironment(python string, platform Platform) (Environment, error) {
	feature, full, err := splitPythonVersion(python)
	if err != nil {
		return nil, err
	}
	env := Environment{
		"implementation_name":            "cpython",
		"platform_python_implementation": "CPython",
		"python_version":                 feature,
	}
	if full {
		env["python_full_version"] = python
		env["implementation_version"] = python
	}
	var osName, sysPlatform, system, machine string
	switch platform {
	case LinuxX86_64:
		osName, sysPlatform, system, machine = "posix", "linux", "Linux", "x86_64"
	case LinuxAarch64:
		osName, sysPlatform, system, machine = "posix", "linux", "Linux", "aarch64"
	case MacOSArm64:
		osName, sysPlatform, system, machine = "posix", "darwin", "Darwin", "arm64"
	case MacOSX86_64:
		osName, sysPlatform, system, machine = "posix", "darwin", "Darwin", "x86_64"
	case WindowsAMD64:
		osName, sysPlatform, system, machine = "nt", "win32", "Windows", "AMD64"
	case WindowsARM64:
		osName, sysPlatform, system, machine = "nt", "win32", "Windows", "ARM64"
	default:
		return nil, fmt.Errorf("unknown platform %q (known: %s, %s, %s, %s, %s, %s)", platform,
			LinuxX86_64, LinuxAarch64, MacOSArm64, MacOSX86_64, WindowsAMD64, WindowsARM64)
	}
	env["os_name"] = osName
	env["sys_platform"] = sysPlatform
	env["platform_system"] = system
	env["platform_machine"] = machine
	return env, nil
}

// splitPythonVersion checks a CPython version "X.Y" or "X.Y.Z" with an
// optional "aN", "bN" or "rcN" suffix and returns "X.Y" and whether the
// version was a full one.
func splitPythonVersion(s string) (feature string, full bool, err error) {
	bad := func(why string) (string, bool, error) {
		return "", false, fmt.Errorf(`invalid Python version %q: %s (want "X.Y" such as "3.11", or "X.Y.Z" such as "3.11.4" or "3.13.0rc1")`, s, why)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 2 && len(parts) != 3 {
		return bad("it needs two or three numbers")
	}
	for i, p := range parts {
		if i == 2 {
			// The micro number may carry a pre-release suffix.
			n := len(p) - len(strings.TrimLeft(p, "0123456789"))
			num, suffix := p[:n], p[n:]
			if !isDecimal(num) {
				return bad(fmt.Sprintf("%q is not a number", p))
			}
			if suffix != "" {
				label := strings.TrimRight(suffix, "0123456789")
				serial := suffix[len(label):]
				if label != "a" && label != "b" && label != "rc" || !isDecimal(serial) {
					return bad(fmt.Sprintf("%q is not a pre-release suffix like a1, b2 or rc1", suffix))
				}
			}
			continue
		}
		if !isDecimal(p) {
			return bad(fmt.Sprintf("%q is not a number", p))
		}
	}
	return parts[0] + "." + parts[1], len(parts) == 3, nil
}

// isDecimal reports whether s is a decimal number without leading zeros.
func isDecimal(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
