package check

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocsListEveryCheck: docs/checks.md has one table row for every check id the code can
// emit (All), and no row for an id the code never emits.
func TestDocsListEveryCheck(t *testing.T) {
	data, err := os.ReadFile("../../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[ID]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z.-]+)` \\|").FindAllSubmatch(data, -1) {
		id := ID(m[1])
		if documented[id] {
			t.Errorf("docs/checks.md lists %s twice", id)
		}
		documented[id] = true
	}
	emitted := map[ID]bool{}
	for _, id := range All {
		if emitted[id] {
			t.Errorf("All lists %s twice", id)
		}
		emitted[id] = true
		if !documented[id] {
			t.Errorf("check %s is not in docs/checks.md", id)
		}
	}
	var extra []string
	for id := range documented {
		if !emitted[id] {
			extra = append(extra, string(id))
		}
	}
	sort.Strings(extra)
	for _, id := range extra {
		t.Errorf("docs/checks.md lists %s, which the code never emits", id)
	}
}

// TestEveryIDConstantIsListed: every constant of type ID is in All, and no Finding literal
// anywhere under commands/ names its check with a string literal instead of a constant.
func TestEveryIDConstantIsListed(t *testing.T) {
	fset := token.NewFileSet()
	listed := map[string]bool{}
	for _, id := range All {
		listed[string(id)] = true
	}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "ID" {
					for _, v := range n.Values {
						if lit, ok := v.(*ast.BasicLit); ok && !listed[strings.Trim(lit.Value, `"`)] {
							t.Errorf("%s: check id %s is not in All", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
			case *ast.CompositeLit:
				if isFindingType(n.Type) {
					checkFindingLiteral(t, fset, n)
				}
				if arr, ok := n.Type.(*ast.ArrayType); ok && isFindingType(arr.Elt) {
					for _, e := range n.Elts {
						if lit, ok := e.(*ast.CompositeLit); ok {
							checkFindingLiteral(t, fset, lit)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkFindingLiteral fails on a Finding literal whose check is a string literal.
func checkFindingLiteral(t *testing.T, fset *token.FileSet, lit *ast.CompositeLit) {
	if len(lit.Elts) == 0 {
		return
	}
	first := lit.Elts[0]
	if kv, ok := first.(*ast.KeyValueExpr); ok {
		first = kv.Value
	}
	if _, ok := first.(*ast.BasicLit); ok {
		t.Errorf("%s: a Finding names its check with a string literal", fset.Position(first.Pos()))
	}
}

func isFindingType(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "Finding"
	case *ast.SelectorExpr:
		return e.Sel.Name == "Finding"
	}
	return false
}
