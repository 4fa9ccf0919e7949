package commands

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
)

// faceOnly are the imports only the CLI face (this package) may use.
var faceOnly = []string{"github.com/urfave/cli", "github.com/olekukonko/tablewriter", "github.com/fatih/color", "github.com/mattn/go-isatty", "github.com/schollz/progressbar"}

// TestEngineHasNoFace: below commands/, only this package is the CLI face. The engine
// (commands/internal/…) imports no CLI, table or colour library, never exits the process and
// never writes to stdout or stderr: it returns values and errors.
func TestEngineHasNoFace(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, face := range faceOnly {
				if strings.HasPrefix(p, face) {
					t.Errorf("%s imports %s: only the CLI face may", path, p)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && (sel.Sel.Name == "Exit" || sel.Sel.Name == "Stdout" || sel.Sel.Name == "Stderr") {
				t.Errorf("%s: uses os.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "fmt" && strings.HasPrefix(sel.Sel.Name, "Print") {
				t.Errorf("%s: uses fmt.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// faceLineBudget bounds the CLI face (this package's non-test files): what grows past it is
// engine work that belongs under commands/internal.
const faceLineBudget = 4050 // 2500 until issue 20 added prune, archive, entries prune, space, fts rebuild, holders, compact, backup, restore and maintain's hygiene steps; issue 21 journal list/show/prune, undo --last, entries rm/set, relocate, --metrics-file, --wait, completion, man and an example per command (docs/design.md)

// TestFaceStaysThin: the face is under its line budget.
func TestFaceStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(data), "\n")
	}
	if lines >= faceLineBudget {
		t.Errorf("the commands package has %d lines, over its budget of %d: move engine work to commands/internal", lines, faceLineBudget)
	}
}
