package safefile

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

// unsafeCalls are the standard library's ways to read or write a file,
// or to read a stream, with no bound and no check of what the file is.
// Outside this package every one of them goes through it: ReadFile,
// ReadAll, WriteFile, WriteBytes, OpenAppend.
var unsafeCalls = map[string]string{
	"os.ReadFile":         "ReadFile",
	"os.Open":             "ReadFile",
	"os.OpenFile":         "ReadFile or OpenAppend",
	"os.Create":           "WriteFile",
	"os.WriteFile":        "WriteBytes",
	"io/ioutil.ReadFile":  "ReadFile",
	"io/ioutil.ReadAll":   "ReadAll",
	"io/ioutil.WriteFile": "WriteBytes",
	"io.ReadAll":          "ReadAll, or io.LimitReader around the reader",
}

// bounded are the readers io.ReadAll may be given: they stop at a limit.
var bounded = map[string]bool{"io.LimitReader": true, "net/http.MaxBytesReader": true}

// TestEveryReadAndWriteIsBounded reads the module's Go code (tests
// aside) and finds every file read or written, and every read of standard
// input, that does not go through this package: a device, a pipe, a link
// planted where an output goes, or /dev/zero given as an input must meet
// one set of checks, whichever command is given it.
func TestEveryReadAndWriteIsBounded(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if filepath.Dir(rel) == filepath.Join("internal", "safefile") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		for _, bad := range unsafeUses(f) {
			t.Errorf("%s:%d: %s", rel, fset.Position(bad.pos).Line, bad.msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files of %s: not the module", files, root)
	}
}

type use struct {
	pos token.Pos
	msg string
}

// unsafeUses finds the calls of unsafeCalls in f, io.ReadAll on a reader
// no limit bounds, and os.Stdin anywhere but as ReadAll's reader.
func unsafeUses(f *ast.File) []use {
	imports := map[string]string{} // local name → import path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	qualified := func(e ast.Expr) string {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok || imports[id.Name] == "" {
			return ""
		}
		return imports[id.Name] + "." + sel.Sel.Name
	}
	var out []use
	stdinOK := map[ast.Expr]bool{} // os.Stdin given to safefile.ReadAll
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			name := qualified(n.Fun)
			if strings.HasSuffix(name, "/internal/safefile.ReadAll") && len(n.Args) > 1 {
				stdinOK[n.Args[1]] = true
			}
			instead, unsafe := unsafeCalls[name]
			if name == "io.ReadAll" && len(n.Args) == 1 {
				if c, ok := n.Args[0].(*ast.CallExpr); ok && bounded[qualified(c.Fun)] {
					unsafe = false
				}
			}
			if unsafe {
				out = append(out, use{n.Pos(), name + ": use internal/safefile's " + instead})
			}
		case *ast.SelectorExpr:
			if qualified(n) == "os.Stdin" && !stdinOK[n] {
				out = append(out, use{n.Pos(), "os.Stdin: read it with internal/safefile's ReadAll, which bounds it and stops with the context"})
			}
		}
		return true
	})
	return out
}

func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = up
	}
}

// The finder finds what it is for: each unsafe use in a file written to
// hold them, and nothing in the safe ones.
func TestUnsafeUsesAreFound(t *testing.T) {
	src := `package x
import (
	"io"
	"net/http"
	osx "os"
	"github.com/headroom-agent/headroom/internal/safefile"
)
func f(ctx any, r *http.Request, w http.ResponseWriter) {
	osx.ReadFile("a")
	osx.WriteFile("a", nil, 0)
	io.ReadAll(r.Body)
	io.ReadAll(io.LimitReader(r.Body, 10))
	io.ReadAll(http.MaxBytesReader(w, r.Body, 10))
	_ = osx.Stdin
	safefile.ReadAll(nil, osx.Stdin, 10, "stdin")
}`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range unsafeUses(f) {
		got = append(got, strings.SplitN(u.msg, ":", 2)[0])
	}
	want := []string{"os.ReadFile", "os.WriteFile", "io.ReadAll", "os.Stdin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("found %v, want %v", got, want)
	}
}
