package proc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyProcWaits enforces the single-wait-owner rule (docs/architecture.md,
// the reaper):
// outside internal/proc (and bench/, tools that are not podvisor) no non-test
// code may call exec.Cmd's Wait, Run,
// Output or CombinedOutput, which would race the reaper's wait4(-1). It flags
// any call of those names on a value built by exec.Command or declared as an
// *exec.Cmd in the same file: a heuristic, but a cheap tripwire.
func TestOnlyProcWaits(t *testing.T) {
	root := filepath.Join("..", "..")
	var bad []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// bench/ holds tools that drive other supervisors, not podvisor;
			// internal/testharness runs podvisor from the black-box tests and
			// test/vm/guest runs podvisors inside the VM test's guest; neither
			// is ever linked into it.
			if d.Name() == ".git" || d.Name() == "testdata" || path == filepath.Join(root, "internal", "proc") || path == filepath.Join(root, "bench") ||
				path == filepath.Join(root, "internal", "testharness") || path == filepath.Join(root, "test", "vm", "guest") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		cmds := map[string]bool{} // identifiers holding an *exec.Cmd
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for i, rhs := range n.Rhs {
					if isExecCommand(rhs) && i < len(n.Lhs) {
						if id, ok := n.Lhs[i].(*ast.Ident); ok {
							cmds[id.Name] = true
						}
					}
				}
			case *ast.Field:
				if isExecCmdType(n.Type) {
					for _, id := range n.Names {
						cmds[id.Name] = true
					}
				}
			case *ast.ValueSpec:
				if isExecCmdType(n.Type) {
					for _, id := range n.Names {
						cmds[id.Name] = true
					}
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				switch sel.Sel.Name {
				case "Wait", "Run", "Output", "CombinedOutput":
				default:
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && cmds[id.Name] || isExecCommand(sel.X) {
					bad = append(bad, fset.Position(n.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: only internal/proc may wait for children (use proc.Reaper)", b)
	}
}

func isExecCommand(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "exec" && (sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext")
}

func isExecCmdType(e ast.Expr) bool {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "exec" && sel.Sel.Name == "Cmd"
}
