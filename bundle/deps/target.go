package deps

import (
	"fmt"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// Target is what a bundle is built for: one platform and the CPython
// feature releases of the release's support boundary.
type Target struct {
	// Name is the target's name in release.toml, e.g. "linux-x86_64"; it
	// is used in messages only.
	Name string
	// Platform is the platform tag of the release's own wheels for this
	// target, e.g. "manylinux_2_34_x86_64" (a compressed tag set is
	// allowed).
	Platform string
	// Pythons are the CPython feature releases the bundle must install on,
	// e.g. ["3.9", "3.10", "3.11", "3.12", "3.13"].
	Pythons []string
}

func (t Target) label() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Platform
}

// machineEnvs returns, for each machine the target's platform stands for
// (two for universal2), the marker environment of CPython python there:
// pep508.TargetEnvironment where it knows the platform, otherwise the
// nearest one with platform_machine set to the architecture (or, for
// win32, left unset: a 32-bit Python on a 64-bit Windows reports AMD64).
func machineEnvs(platformTag, python string) ([]pep508.Environment, error) {
	var envs []pep508.Environment
	seen := map[string]bool{}
	for _, part := range strings.Split(platformTag, ".") {
		p, err := platform.ParseTag(part)
		if err != nil {
			return nil, err
		}
		for _, m := range machinesOf(p) {
			base, machine := envPlatform(m)
			env, err := pep508.TargetEnvironment(python, base)
			if err != nil {
				return nil, err
			}
			switch {
			case machine == "-":
				delete(env, "platform_machine")
			case machine != "":
				env["platform_machine"] = machine
			}
			key := env["sys_platform"] + "/" + env["platform_machine"]
			if !seen[key] {
				seen[key] = true
				envs = append(envs, env)
			}
		}
	}
	return envs, nil
}

// envPlatform maps a machine to the pep508 platform to start from and the
// platform_machine to put instead ("" keeps it, "-" removes it).
func envPlatform(m platform.Platform) (pep508.Platform, string) {
	switch m.OS {
	case platform.Linux:
		switch m.Arch {
		case "x86_64":
			return pep508.LinuxX86_64, ""
		case "aarch64":
			return pep508.LinuxAarch64, ""
		}
		return pep508.LinuxX86_64, m.Arch
	case platform.MacOS:
		if m.Arch == "arm64" {
			return pep508.MacOSArm64, ""
		}
		return pep508.MacOSX86_64, ""
	default:
		switch m.Arch {
		case "arm64":
			return pep508.WindowsARM64, ""
		case "amd64":
			return pep508.WindowsAMD64, ""
		}
		return pep508.WindowsAMD64, "-"
	}
}

// applies reports whether m holds, or may hold, in at least one of envs:
// a marker that depends on a variable the target leaves unknown (such as
// platform_release) counts as applying, so that the bundle can serve every
// machine of the target.
func applies(m *pep508.Marker, envs []pep508.Environment) (bool, error) {
	if m == nil {
		return true, nil
	}
	for _, env := range envs {
		t, err := m.EvaluatePartial(env)
		if err != nil {
			return false, err
		}
		if t != pep508.False {
			return true, nil
		}
	}
	return false, nil
}

// environmentMarkers returns pylock.toml environments markers for the
// target: one per machine, naming sys_platform and, where known,
// platform_machine.
func environmentMarkers(t Target) ([]string, error) {
	if len(t.Pythons) == 0 {
		return nil, nil
	}
	envs, err := machineEnvs(t.Platform, t.Pythons[0])
	if err != nil {
		return nil, err
	}
	var out []string
	for _, env := range envs {
		s := fmt.Sprintf("sys_platform == %q", env["sys_platform"])
		if m, ok := env["platform_machine"]; ok {
			s += fmt.Sprintf(" and platform_machine == %q", m)
		}
		out = append(out, s)
	}
	return out, nil
}
