package outline

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// ErrNotGo is returned when go/parser finds nothing to outline.
var ErrNotGo = errors.New("not a Go source file")

// Go outlines Go source with go/parser, or, past MaxParseBytes, with the
// streaming scan (goScan).
func Go(src []byte) (Outline, error) {
	o := Outline{Language: "go", Imports: []Import{}, Decls: []Decl{}}
	if len(src) > MaxSourceBytes {
		src, o.Truncated = src[:MaxSourceBytes], true
	}
	o.Lines = countLines(src)
	if len(src) > MaxParseBytes {
		if err := goScan(src, &o); err != nil {
			return Outline{}, err
		}
		return o, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "src.go", src, parser.SkipObjectResolution)
	if f == nil || f.Name == nil || f.Name.Name == "" {
		return Outline{}, ErrNotGo
	}
	if err != nil {
		msg := err.Error()
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		o.ParseError = clip(strings.TrimPrefix(msg, "src.go:"))
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	for _, spec := range f.Imports {
		if len(o.Imports) == MaxImports {
			o.Truncated = true
			break
		}
		mod, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			mod = spec.Path.Value
		}
		im := Import{Line: line(spec.Pos()), Module: clip(mod), Kind: "import"}
		if spec.Name != nil {
			im.Name = spec.Name.Name
		}
		o.Imports = append(o.Imports, im)
	}
	add := func(d Decl) bool {
		if len(o.Decls) == MaxDecls {
			o.Truncated = true
			return false
		}
		d.Name = clip(d.Name)
		o.Decls = append(o.Decls, d)
		return true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			fd := Decl{Line: line(d.Pos()), EndLine: line(d.End()), Kind: "func", Name: d.Name.Name, Exported: d.Name.IsExported()}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				fd.Kind, fd.Parent = "method", exprString(d.Recv.List[0].Type)
			}
			if !add(fd) {
				return o, nil
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					td := Decl{Line: line(s.Pos()), EndLine: line(s.End()), Kind: "type", Name: s.Name.Name, Exported: s.Name.IsExported()}
					switch {
					case s.Assign.IsValid():
						td.Detail = "alias"
					default:
						switch s.Type.(type) {
						case *ast.StructType:
							td.Detail = "struct"
						case *ast.InterfaceType:
							td.Detail = "interface"
						case *ast.FuncType:
							td.Detail = "func"
						}
					}
					if !add(td) {
						return o, nil
					}
				case *ast.ValueSpec:
					kind := "var"
					if d.Tok == token.CONST {
						kind = "const"
					}
					for _, n := range s.Names {
						if n.Name == "_" {
							continue
						}
						if !add(Decl{Line: line(n.Pos()), EndLine: line(s.End()), Kind: kind, Name: n.Name, Exported: n.IsExported()}) {
							return o, nil
						}
					}
				}
			}
		}
	}
	return o, nil
}

// exprString prints a receiver type: T, *T, T[K], *T[K, V].
func exprString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + exprString(t.X)
	case *ast.ParenExpr:
		return exprString(t.X)
	case *ast.IndexExpr:
		return exprString(t.X) + "[" + exprString(t.Index) + "]"
	case *ast.IndexListExpr:
		parts := make([]string, len(t.Indices))
		for i, x := range t.Indices {
			parts[i] = exprString(x)
		}
		return exprString(t.X) + "[" + strings.Join(parts, ", ") + "]"
	case *ast.SelectorExpr:
		return exprString(t.X) + "." + t.Sel.Name
	}
	return "?"
}
