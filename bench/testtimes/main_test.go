package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	in := `== the default part: unit and package tests
{"Action":"run","Package":"m/a","Test":"TestX"}
{"Action":"pass","Package":"m/a","Test":"TestX","Elapsed":2.5}
{"Action":"pass","Package":"m/a","Test":"TestX/sub","Elapsed":2}
{"Action":"fail","Package":"m/b","Test":"TestY","Elapsed":7}
{"Action":"skip","Package":"m/b","Test":"TestZ","Elapsed":0}
{"Action":"pass","Package":"m/a","Elapsed":3}
{"Action":"fail","Package":"m/b","Elapsed":8}
not json {
-- unit and package tests: 12 s
`
	pkgs, tests, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 2 || len(tests) != 3 {
		t.Fatalf("packages %v, tests %v; want 2 packages and 3 top-level tests (a subtest is not one)", pkgs, tests)
	}
	var b bytes.Buffer
	write(&b, pkgs, tests, 2, "m/")
	out := b.String()
	for _, want := range []string{"| `b` | 8.0 | fail |\n| `a` | 3.0 | pass |", "| all 2, one after another | 11.0 |",
		"| `TestY` | `b` | 7.0 | fail |\n| `TestX` | `a` | 2.5 | pass |\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TestZ") {
		t.Errorf("-top 2 listed a third test:\n%s", out)
	}
}
