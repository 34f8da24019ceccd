package dist_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// releaseNamePatterns are the pieces release file names are made of.
// Outside dist, no string literal of the product's code may be a release
// file name, a suffix, a glob or a fragment of one: every package asks dist
// for names and for what a name is. Prose (a literal with white space,
// such as a message that mentions SHA256SUMS) is not a name.
var releaseNamePatterns = []string{
	"SHA256SUMS", "manifest.json", "artifacts.json", "RELEASE_NOTES.md",
	".spdx.json", ".cdx.json", ".intoto.jsonl", ".sigstore.json", "-verifier-evidence-",
	".vsa.", ".tar.gz", ".sha256", ".whl",
}

// notProduct are the folders the walk leaves out: the embedded default
// project, which mkrelease builds, and dist itself (with internal/dist/ext,
// the extensions of the wheel and sdist standards, which the wheel package
// takes from it). There is no other exception.
var notProduct = []string{"backend", "internal/dist"}

func TestNoPackageButDistSpellsAReleaseFileName(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			for _, n := range notProduct {
				if rel == n {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil || strings.ContainsFunc(v, unicode.IsSpace) {
				return true
			}
			for _, pat := range releaseNamePatterns {
				if strings.Contains(v, pat) {
					found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
					break
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		rel, _ := filepath.Rel(root, f)
		t.Errorf("%s spells a release file name: ask package dist for it", rel)
	}
}

func TestTheOwnerTestSeesTheTree(t *testing.T) {
	// The walk must reach the product's packages: a moved test that walks
	// an empty tree would pass for nothing.
	for _, p := range []string{"../../publish/publish.go", "../../audit/audit.go", "../../cmd/mkrelease"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
}
