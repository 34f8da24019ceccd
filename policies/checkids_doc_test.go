package policies

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// troubleshootingPage lists, with its cause and remedy, every check ID a
// refusal can carry.
const troubleshootingPage = "../docs/troubleshooting.md"

// checkIDFamily is one family of check IDs: where the code declares them,
// and the section of troubleshootingPage (its "## " heading) that must
// list exactly them.
type checkIDFamily struct {
	section string
	// dir and prefix name the constants of the family: those of the
	// package in dir whose names are prefix followed by an upper-case
	// letter (prefix is "" for a family that is not constants).
	dir, prefix string
	// ids returns the family's IDs.
	ids func(t *testing.T) []string
}

// constFamily is the family of the constants prefix… of the package in
// dir.
func constFamily(section, dir, prefix string) checkIDFamily {
	return checkIDFamily{section: section, dir: dir, prefix: prefix, ids: constIDs(dir, prefix)}
}

// checkIDFamilies are every family of check IDs mkrelease reports. The
// rule IDs of the default policies come from their registry
// ([DefaultRules]), the rule constants and the deny messages of the Rego
// modules; the checkers' IDs have no registry, so they are read from the
// Go sources: the string constants named Check…, Rule… or Step… that a
// finding or a refusal carries, and the check names package audit passes
// as literals to the calls that record a check.
var checkIDFamilies = []checkIDFamily{
	{section: "The release policies", dir: ".", prefix: "Rule", ids: policyRuleIDs},
	constFamily("The channel's refusals", "../channel", "Rule"),
	constFamily("Channel checks", "../channel", "Check"),
	{section: "Verify checks", dir: "../audit", ids: auditCheckIDs},
	constFamily("Provenance verification steps", "../provenance", "Step"),
	constFamily("Wheel checks", "../wheel", "Check"),
	constFamily("Bundle checks", "../bundle", "Check"),
	constFamily("Part checks", "../part", "Check"),
	constFamily("Evidence checks", "../evidence/runner", "Check"),
	constFamily("Evidence run refusals", "../evidence/runner", "Rule"),
}

// TestCheckIDsDocumented fails when the code has a check ID that
// docs/troubleshooting.md does not list in the section of its family, and
// when the page lists an ID there that the code does not have. An ID is
// listed as a heading ("### `evidence.noise`") or as the first cell of a
// table row ("| `record-hash` | … |").
func TestCheckIDsDocumented(t *testing.T) {
	page, err := os.ReadFile(troubleshootingPage)
	if err != nil {
		t.Fatal(err)
	}
	listed := documentedIDs(string(page))
	for _, fam := range checkIDFamilies {
		t.Run(fam.section, func(t *testing.T) {
			code := fam.ids(t)
			if len(code) == 0 {
				t.Fatalf("found no check IDs in the code for this family: the test no longer reads where they are declared")
			}
			doc, ok := listed[fam.section]
			if !ok {
				t.Fatalf("%s has no section %q", troubleshootingPage, "## "+fam.section)
			}
			for _, id := range code {
				if !slices.Contains(doc, id) {
					t.Errorf("check ID %q is not in %s under %q: add it with its cause and remedy", id, troubleshootingPage, "## "+fam.section)
				}
			}
			for _, id := range doc {
				if !slices.Contains(code, id) {
					t.Errorf("%s lists check ID %q under %q, which the code does not have: remove it, or name the ID the code reports", troubleshootingPage, id, "## "+fam.section)
				}
			}
		})
	}
}

// TestEveryCheckIDFamilyListed fails when a package of the module
// declares check-ID constants (string constants named Check…, Rule… or
// Step… followed by an upper-case letter) that no family of
// checkIDFamilies reads: a new checker's IDs must get a family, and a
// section of the page.
func TestEveryCheckIDFamilyListed(t *testing.T) {
	covered := map[string]bool{}
	for _, fam := range checkIDFamilies {
		if fam.prefix != "" {
			covered[absDir(t, fam.dir)+" "+fam.prefix] = true
		}
	}
	idConst := regexp.MustCompile("^(Check|Rule|Step)[A-Z]")
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); p != ".." && (n == "testdata" || n == "backend" || n == "node_modules" || strings.HasPrefix(n, ".")) {
			return filepath.SkipDir
		}
		names, _ := filepath.Glob(filepath.Join(p, "*.go"))
		if len(names) == 0 {
			return nil
		}
		dir := absDir(t, p)
		for _, f := range parseDir(t, p) {
			for _, decl := range f.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						m := idConst.FindStringSubmatch(n.Name)
						if m == nil || i >= len(vs.Values) {
							continue
						}
						if _, ok := stringLit(vs.Values[i]); ok && !covered[dir+" "+m[1]] {
							t.Errorf("%s declares %s, a %s… constant no family of checkIDFamilies reads: add the family, and a section of %s listing its IDs", p, n.Name, m[1], troubleshootingPage)
							covered[dir+" "+m[1]] = true // once per package and prefix
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

var (
	idHeading  = regexp.MustCompile("^#{3,4} `([^`]+)`$")
	idTableRow = regexp.MustCompile("^\\| `([^`]+)` \\|")
)

// documentedIDs returns the IDs page lists, by the "## " section they are
// in.
func documentedIDs(page string) map[string][]string {
	out := map[string][]string{}
	section := ""
	fenced := false
	for line := range strings.SplitSeq(page, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if s, ok := strings.CutPrefix(line, "## "); ok {
			section = strings.TrimSpace(s)
			out[section] = []string{}
			continue
		}
		m := idHeading.FindStringSubmatch(line)
		if m == nil {
			m = idTableRow.FindStringSubmatch(line)
		}
		if m != nil && section != "" {
			out[section] = append(out[section], m[1])
		}
	}
	return out
}

// regoRuleID is the rule ID a deny message of a Rego module starts with.
var regoRuleID = regexp.MustCompile(`"\[([a-z_]+\.[a-z_]+)\] `)

// policyRuleIDs are the rule IDs of the default policies: the registry,
// every Rule constant of this package, and every ID a deny message of
// default/*.rego starts with.
func policyRuleIDs(t *testing.T) []string {
	ids := DefaultRules()
	ids = append(ids, constIDs(".", "Rule")(t)...)
	files, err := filepath.Glob("default/*.rego")
	if err != nil || len(files) == 0 {
		t.Fatalf("no default policies in default/: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regoRuleID.FindAllStringSubmatch(string(src), -1) {
			ids = append(ids, m[1])
		}
	}
	return unique(ids)
}

// constIDs returns the string constants of the package in dir (its
// non-test Go files) whose names are prefix followed by an upper-case
// letter: CheckRecordHash, RuleDowngrade, StepSubjects (not
// CheckpointFormat).
func constIDs(dir, prefix string) func(t *testing.T) []string {
	name := regexp.MustCompile("^" + prefix + "[A-Z]")
	return func(t *testing.T) []string {
		var ids []string
		for _, f := range parseDir(t, dir) {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if !name.MatchString(n.Name) || i >= len(vs.Values) {
							continue
						}
						if s, ok := stringLit(vs.Values[i]); ok {
							ids = append(ids, s)
						}
					}
				}
			}
		}
		return unique(ids)
	}
}

// auditCheckIDs returns the check names package audit records: the
// first argument of every call of the item's check method (it.check) and
// of checkProvenance's fail, when it is a string literal. A name built as
// a literal plus a version ("vsa "+ver) is listed as "vsa VERSION". Calls
// whose name is not a literal pass on another checker's IDs (a wheel's, a
// bundle's, evidence's), which their own families list.
func auditCheckIDs(t *testing.T) []string {
	var ids []string
	for _, f := range parseDir(t, "../audit") {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			switch fun := call.Fun.(type) {
			case *ast.SelectorExpr:
				if fun.Sel.Name != "check" {
					return true
				}
			case *ast.Ident:
				if fun.Name != "fail" {
					return true
				}
			default:
				return true
			}
			switch arg := call.Args[0].(type) {
			case *ast.BasicLit:
				if s, ok := stringLit(arg); ok {
					ids = append(ids, s)
				}
			case *ast.BinaryExpr:
				if s, ok := stringLit(arg.X); ok && arg.Op == token.ADD {
					ids = append(ids, s+"VERSION")
				}
			}
			return true
		})
	}
	return unique(ids)
}

// parseDir parses the non-test Go files of the package in dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// absDir is dir as an absolute path, so that "." and "../policies" are
// one folder.
func absDir(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// stringLit returns the value of e when it is a string literal.
func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

func unique(ids []string) []string {
	sort.Strings(ids)
	return slices.Compact(ids)
}
