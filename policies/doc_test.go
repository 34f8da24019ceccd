package policies

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docLink is a doc link to a name of this package: [Name] or
// [Type.Method].
var docLink = regexp.MustCompile(`\[([A-Z][A-Za-z0-9]*(?:\.[A-Z][A-Za-z0-9]*)?)\]`)

// packageDoc returns the package doc comments of the Go files (tests
// excluded) in dir, by file, and every exported name they declare
// (methods as Type.Method).
func packageDoc(t *testing.T, dir string) (docs map[string]string, names map[string]bool) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	docs, names = map[string]string{}, map[string]bool{}
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			docs[e.Name()] = f.Doc.Text()
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					typ := d.Recv.List[0].Type
					if s, ok := typ.(*ast.StarExpr); ok {
						typ = s.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				names[name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return docs, names
}

// The package has one doc comment, and every doc link in it names
// something the package declares.
func TestPackageDoc(t *testing.T) {
	docs, names := packageDoc(t, ".")
	if len(docs) != 1 {
		t.Fatalf("package doc comments in %d files %v, want 1 (doc.go)", len(docs), docs)
	}
	for file, doc := range docs {
		if !strings.HasPrefix(doc, "Package policies ") {
			t.Errorf("%s: the package doc starts %q, want \"Package policies ...\"", file, strings.SplitN(doc, "\n", 2)[0])
		}
		links := docLink.FindAllStringSubmatch(doc, -1)
		if len(links) == 0 {
			t.Errorf("%s: the package doc links to nothing the package provides", file)
		}
		for _, m := range links {
			if !names[m[1]] {
				t.Errorf("%s: the package doc links to [%s], which the package does not declare", file, m[1])
			}
		}
	}
}
