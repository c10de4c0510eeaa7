package problem

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slotd/slotd/internal/phrase"
)

// Every title a problem of slotd carries is made in this package, by title
// with a key the phrase catalog holds in each language: no problem literal
// anywhere in slotd spells its title out, and every key exists in English,
// Russian and Ukrainian.
func TestEveryTitleIsAPhrase(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	keys := map[string]token.Position{}
	literals := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "proto":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		here := f.Name.Name == "problem" && filepath.Dir(path) == filepath.Join(root, "problem")
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if !isProblem(n.Type, here) {
					return true
				}
				literals++
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok || !isIdent(kv.Key, "Title") {
						continue
					}
					if !here {
						if spelled(kv.Value) {
							t.Errorf("%s: a problem made outside package problem spells its title out", fset.Position(kv.Pos()))
						}
					} else if call, ok := kv.Value.(*ast.CallExpr); !ok || !isIdent(call.Fun, "title") {
						t.Errorf("%s: a title not worded by the catalog (title(key))", fset.Position(kv.Pos()))
					}
				}
			case *ast.CallExpr:
				if !here || !isIdent(n.Fun, "title") || len(n.Args) != 1 {
					return true
				}
				lit, ok := n.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					// sessionsFull passes its caller's key on; its callers'
					// keys are literals, checked here.
					if id, ok := n.Args[0].(*ast.Ident); !ok || id.Name != "key" {
						t.Errorf("%s: title of a key that is not a literal", fset.Position(n.Pos()))
					}
					return true
				}
				key, _ := strconv.Unquote(lit.Value)
				keys[key] = fset.Position(n.Pos())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// sessionsFull's keys.
	for _, fn := range []func(string, int) *Error{SessionsFull, TenantSessionsFull} {
		title := fn("", 1).Problem.Title
		if title == "" || strings.HasPrefix(title, "title.") {
			t.Errorf("an MCP sessions problem has the title %q, not a sentence of the catalog", title)
		}
	}
	keys["title.sessions_full"], keys["title.tenant_sessions_full"] = token.Position{}, token.Position{}
	if literals < 10 || len(keys) < 20 {
		t.Fatalf("found %d problem literals and %d title keys: the walk missed the code", literals, len(keys))
	}
	for key, pos := range keys {
		for l := range phrase.Languages {
			if !phrase.HasIn(l, key) {
				t.Errorf("%s: the title %q has no %s sentence", pos, key, l)
			}
		}
	}
}

// spelled reports a title written as text (a string literal or a
// concatenation with one) rather than taken from a call or a copied field.
func spelled(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.BinaryExpr:
		return spelled(e.X) || spelled(e.Y)
	case *ast.ParenExpr:
		return spelled(e.X)
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isProblem reports a composite literal of problem.Problem (of Problem, in
// package problem itself).
func isProblem(typ ast.Expr, here bool) bool {
	if here && isIdent(typ, "Problem") {
		return true
	}
	sel, ok := typ.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Problem" && isIdent(sel.X, "problem")
}

// Every problem type a response carries has a title in each language,
// which TitleIn says in the language asked for.
func TestResponseTitlesInEachLanguage(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{TypeInvalidValue, TypeRuleViolated, TypeHandoff, TypeBackendTimeout, TypeBackendOutputInvalid,
		Base + "backend-unavailable", Base + "backend-rate-limited", Base + "backend-unauthorized", Base + "backend-error"} {
		seen := map[string]bool{}
		for l := range phrase.Languages {
			got := TitleIn(l, typ)
			if got == "" || !phrase.HasIn(l, "problem."+strings.TrimPrefix(typ, Base)) {
				t.Errorf("%s has no %s title", typ, l)
			}
			seen[got] = true
		}
		if len(seen) != int(phrase.Languages) {
			t.Errorf("%s: the titles %v are not one per language", typ, seen)
		}
	}
	if got := TitleIn(phrase.Russian, TypeUnavailable); got != "" {
		t.Errorf("TitleIn of a type no response carries = %q, want none", got)
	}
}

// The titles are the catalog's English sentences.
func TestTitlesAreEnglishSentences(t *testing.T) {
	t.Parallel()
	for _, pe := range []*Error{Internal(), Conflict(1), TurnOfAnotherTool("t-1", "bank.open_dispute"), Malformed("")} {
		if pe.Problem.Title == "" || strings.HasPrefix(pe.Problem.Title, "title.") {
			t.Errorf("title %q: not a sentence", pe.Problem.Title)
		}
	}
	if got := TurnOfAnotherTool("t", "x").Problem.Title; got != phrase.Text(phrase.English, "title.turn_other_tool", nil) {
		t.Errorf("TurnOfAnotherTool's title %q is not the catalog's", got)
	}
}
