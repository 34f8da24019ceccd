package pep440_test

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mkrelease/mkrelease/internal/pep440"
)

func ExampleParse() {
	v, err := pep440.Parse("V1.0-ALPHA_1")
	if err != nil {
		panic(err)
	}
	fmt.Println(v, v.IsPrerelease())

	_, err = pep440.Parse("1.0-")
	var ive *pep440.InvalidVersionError
	if errors.As(err, &ive) {
		fmt.Println(ive.Offset, ive.Hint)
	}
	// Output:
	// 1.0a1 true
	// 3 an implicit post-release needs a number, e.g. 1.0-1, which means 1.0.post1
}

func ExampleVersion_Compare() {
	var vs []pep440.Version
	for _, s := range []string{"1.0.post1", "1.0", "1.0a1", "1.0.dev0", "1.0+local", "1!0.1"} {
		v, err := pep440.Parse(s)
		if err != nil {
			panic(err)
		}
		vs = append(vs, v)
	}
	slices.SortFunc(vs, pep440.Version.Compare)
	fmt.Println(vs)
	// Output:
	// [1.0.dev0 1.0a1 1.0 1.0+local 1.0.post1 1!0.1]
}

func ExampleSpecifiers_Contains() {
	s, err := pep440.ParseSpecifiers(">= 1.0, != 1.3.*, < 2")
	if err != nil {
		panic(err)
	}
	fmt.Println(s)
	for _, in := range []string{"1.2", "1.3.1", "2.0", "1.9rc1"} {
		v, _ := pep440.Parse(in)
		fmt.Println(in, s.Contains(v, false), s.Contains(v, true))
	}
	// Output:
	// >=1.0,!=1.3.*,<2
	// 1.2 true true
	// 1.3.1 false false
	// 2.0 false false
	// 1.9rc1 false true
}
