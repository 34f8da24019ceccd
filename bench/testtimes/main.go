// Command testtimes reads the output of `go test -json` (scripts/test
// -json prints it, with the script's own lines mixed in) and prints, as
// Markdown tables, the time of each package's test binary and of its
// slowest top-level tests: the per-test table of docs/testing.md.
//
//	scripts/test -count=1 -json > test.json; go run ./bench/testtimes -top 25 < test.json
//
// Lines that are not JSON test events are skipped.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is the part of a test2json event read here.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

// timing is one package's or test's time and result.
type timing struct {
	pkg, test, result string
	seconds           float64
}

func main() {
	top := flag.Int("top", 25, "slowest top-level tests to list")
	module := flag.String("module", "github.com/mkrelease/mkrelease/", "prefix left out of package paths")
	flag.Parse()
	pkgs, tests, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testtimes:", err)
		os.Exit(1)
	}
	if len(pkgs) == 0 {
		fmt.Fprintln(os.Stderr, "testtimes: no package results in the input (was it `go test -json` output?)")
		os.Exit(1)
	}
	write(os.Stdout, pkgs, tests, *top, *module)
}

// read collects the package and top-level test results of r.
func read(r io.Reader) (pkgs, tests []timing, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		if e.Action != "pass" && e.Action != "fail" && e.Action != "skip" {
			continue
		}
		t := timing{pkg: e.Package, test: e.Test, result: e.Action, seconds: e.Elapsed}
		switch {
		case e.Test == "":
			pkgs = append(pkgs, t)
		case !strings.Contains(e.Test, "/"):
			tests = append(tests, t)
		}
	}
	return pkgs, tests, sc.Err()
}

// write prints the two tables, slowest first.
func write(w io.Writer, pkgs, tests []timing, top int, module string) {
	slowest := func(ts []timing) {
		sort.SliceStable(ts, func(i, j int) bool { return ts[i].seconds > ts[j].seconds })
	}
	slowest(pkgs)
	slowest(tests)
	var sum float64
	for _, p := range pkgs {
		sum += p.seconds
	}
	fmt.Fprintf(w, "| package | test binary (s) | result |\n| --- | ---: | --- |\n")
	for _, p := range pkgs {
		fmt.Fprintf(w, "| `%s` | %.1f | %s |\n", strings.TrimPrefix(p.pkg, module), p.seconds, p.result)
	}
	fmt.Fprintf(w, "| all %d, one after another | %.1f | |\n\n", len(pkgs), sum)
	fmt.Fprintf(w, "| test | package | time (s) | result |\n| --- | --- | ---: | --- |\n")
	for i, t := range tests {
		if i == top {
			break
		}
		fmt.Fprintf(w, "| `%s` | `%s` | %.1f | %s |\n", t.test, strings.TrimPrefix(t.pkg, module), t.seconds, t.result)
	}
}
