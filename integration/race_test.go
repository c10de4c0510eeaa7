package integration

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// race.txt names the tests make test runs with -race (scripts/test.sh); a
// name that no longer matches a test would take that test out of both
// runs, so each must name a top-level test of this package, once.
func TestRaceListNamesTests(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("race.txt")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	seen := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		name := strings.TrimSpace(line)
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		switch {
		case !tests[name]:
			t.Errorf("race.txt:%d: %q is not a test of this package", i+1, name)
		case seen[name]:
			t.Errorf("race.txt:%d: %s is listed twice", i+1, name)
		}
		seen[name] = true
	}
	if len(seen) == 0 {
		t.Error("race.txt names no test: make test would run no integration test with -race")
	}
}
