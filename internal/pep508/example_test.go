package pep508_test

import (
	"errors"
	"fmt"

	"github.com/mkrelease/mkrelease/internal/pep508"
)

func ExampleParseRequirement() {
	r, err := pep508.ParseRequirement(`Requests [Security,tests] >= 2.8.1, == 2.8.* ; python_version < '3.9'`)
	if err != nil {
		panic(err)
	}
	fmt.Println(r)
	fmt.Println(r.NormalizedName(), r.Extras, r.Specifier, r.Marker)

	_, err = pep508.ParseRequirement("requests 2.8.1")
	var pe *pep508.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Offset, pe.Hint)
	}
	// Output:
	// Requests[security,tests]>=2.8.1,==2.8.*; python_version < "3.9"
	// requests [security tests] >=2.8.1,==2.8.* python_version < "3.9"
	// 9 a version needs an operator: did you mean "==2.8.1"?
}

func ExampleMarker_Evaluate() {
	m, err := pep508.ParseMarker(`sys_platform == "win32" or python_version < "3.10" and extra == "Docs"`)
	if err != nil {
		panic(err)
	}
	for _, target := range []struct {
		python   string
		platform pep508.Platform
	}{
		{"3.9", pep508.LinuxX86_64},
		{"3.12", pep508.LinuxX86_64},
		{"3.12", pep508.WindowsAMD64},
	} {
		env, err := pep508.TargetEnvironment(target.python, target.platform)
		if err != nil {
			panic(err)
		}
		withDocs, err := m.Evaluate(env.WithExtra("docs"))
		if err != nil {
			panic(err)
		}
		without, err := m.Evaluate(env.WithExtra(""))
		if err != nil {
			panic(err)
		}
		fmt.Println(target.python, target.platform, withDocs, without)
	}
	// Output:
	// 3.9 linux-x86_64 true false
	// 3.12 linux-x86_64 false false
	// 3.12 windows-amd64 true true
}

func ExampleMarker_EvaluatePartial() {
	env, err := pep508.TargetEnvironment("3.11", pep508.MacOSArm64)
	if err != nil {
		panic(err)
	}
	for _, s := range []string{
		`sys_platform == "darwin" and platform_machine == "arm64"`,
		`sys_platform == "linux" and python_full_version >= "3.11.4"`,
		`sys_platform == "darwin" and platform_release >= "22"`,
	} {
		m, err := pep508.ParseMarker(s)
		if err != nil {
			panic(err)
		}
		t, err := m.EvaluatePartial(env)
		if err != nil {
			panic(err)
		}
		fmt.Println(t)
	}
	// Output:
	// true
	// false
	// unknown
}

func ExampleMarker_Lint() {
	m, err := pep508.ParseMarker(`python_version in "3.8 3.9" or sys_platform > "linux"`)
	if err != nil {
		panic(err)
	}
	for _, p := range m.Lint() {
		fmt.Println(p.Comparison)
	}
	// Output:
	// python_version in "3.8 3.9"
	// sys_platform > "linux"
}
