// Command housemap prints the shape of the repository's Go code, for the
// report issue 50 asks for: each package with its job (the first sentence
// of its doc comment) and its non-test lines, the types with the most
// methods, and the longest functions. Generated code (api/) is left out.
//
//	go run ./scripts/housemap [-types 10] [-funcs 15]
package main

import (
	"cmp"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

type pkg struct {
	dir, doc string
	lines    int
}

type count struct {
	name string
	n    int
}

func main() {
	ntypes := flag.Int("types", 10, "types with the most methods to list")
	nfuncs := flag.Int("funcs", 15, "longest functions to list")
	flag.Parse()
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	methods := map[string]int{}
	var funcs []count
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || path == "api") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkg{dir: dir}
			pkgs[dir] = p
		}
		p.lines += fset.Position(f.End()).Line
		if f.Doc != nil && p.doc == "" {
			p.doc = firstSentence(f.Doc.Text())
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := dir + "." + fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				t := recvType(fd.Recv.List[0].Type)
				methods[dir+"."+t]++
				name = dir + "." + t + "." + fd.Name.Name
			}
			funcs = append(funcs, count{name, fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1})
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "housemap:", err)
		os.Exit(1)
	}
	fmt.Println("| package | job | lines |\n|---|---|---:|")
	for _, dir := range slices.Sorted(maps.Keys(pkgs)) {
		p := pkgs[dir]
		fmt.Printf("| %s | %s | %d |\n", dir, p.doc, p.lines)
	}
	var types []count
	for t, n := range methods {
		types = append(types, count{t, n})
	}
	top := func(cs []count, n int) []count {
		slices.SortFunc(cs, func(a, b count) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
		return cs[:min(n, len(cs))]
	}
	fmt.Println("\n| type | methods |\n|---|---:|")
	for _, c := range top(types, *ntypes) {
		fmt.Printf("| %s | %d |\n", c.name, c.n)
	}
	fmt.Println("\n| function | lines |\n|---|---:|")
	for _, c := range top(funcs, *nfuncs) {
		fmt.Printf("| %s | %d |\n", c.name, c.n)
	}
}

func recvType(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvType(t.X)
	case *ast.IndexExpr:
		return recvType(t.X)
	case *ast.IndexListExpr:
		return recvType(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(s, "|", `\|`)
}
