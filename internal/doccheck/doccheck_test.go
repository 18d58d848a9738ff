// Package doccheck keeps the documentation's names true: every name of one
// of the module's packages that godoc comments, README.md or docs/*.md
// mention (core.WithTimeout, [memstore.New], [Limiter.Allow],
// `ratelimitgin.New(limiter)` in a code block) must exist in that package.
// The compiler checks the examples (Example functions, examples/); this
// checks the prose and snippets around them, which drift when an API is
// renamed.
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// api is what one package exports: its top-level names, and the exported
// methods and fields of each of its types.
type api struct {
	names   map[string]bool
	members map[string]map[string]bool
}

func (a api) has(name, member string) bool {
	if !a.names[name] {
		return false
	}
	if member == "" {
		return true
	}
	m, isType := a.members[name]
	return !isType || m[member] // a func or var: the member is beyond its result
}

// root is the module's directory.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not found from %s: %v", dir, err)
	}
	return dir
}

// skipDir reports whether the directory is outside what the check reads:
// the bench module (its own go.mod, the peers' names), test data, hidden
// directories.
func skipDir(rel string) bool {
	base := filepath.Base(rel)
	return rel == "bench" || base == "testdata" || (strings.HasPrefix(base, ".") && rel != ".")
}

// parsed is the module's Go files, parsed with comments, by package name
// (package main left out: nothing imports it) and, for each file, the
// package it belongs to.
type parsed struct {
	fset  *token.FileSet
	apis  map[string]api
	files map[string]*ast.File // by path, non-test files only
}

func parseModule(t *testing.T, dir string) parsed {
	t.Helper()
	p := parsed{fset: token.NewFileSet(), apis: map[string]api{}, files: map[string]*ast.File{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			if skipDir(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(p.fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		p.files[path] = f
		if f.Name.Name != "main" {
			p.collect(f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// collect adds f's exported names to its package's api.
func (p parsed) collect(f *ast.File) {
	a, ok := p.apis[f.Name.Name]
	if !ok {
		a = api{names: map[string]bool{}, members: map[string]map[string]bool{}}
		p.apis[f.Name.Name] = a
	}
	member := func(typ, name string) {
		if a.members[typ] == nil {
			a.members[typ] = map[string]bool{}
		}
		a.members[typ][name] = true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				a.names[d.Name.Name] = true
				continue
			}
			typ := d.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if idx, ok := typ.(*ast.IndexExpr); ok {
				typ = idx.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				member(id.Name, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						a.names[n.Name] = true
					}
				case *ast.TypeSpec:
					a.names[s.Name.Name] = true
					if a.members[s.Name.Name] == nil {
						a.members[s.Name.Name] = map[string]bool{}
					}
					var fields *ast.FieldList
					switch tt := s.Type.(type) {
					case *ast.StructType:
						fields = tt.Fields
					case *ast.InterfaceType:
						fields = tt.Methods
					}
					if fields == nil {
						continue
					}
					for _, fl := range fields.List {
						for _, n := range fl.Names {
							member(s.Name.Name, n.Name)
						}
						if len(fl.Names) == 0 { // embedded
							typ := fl.Type
							if star, ok := typ.(*ast.StarExpr); ok {
								typ = star.X
							}
							switch e := typ.(type) {
							case *ast.Ident:
								member(s.Name.Name, e.Name)
							case *ast.SelectorExpr:
								member(s.Name.Name, e.Sel.Name)
							}
						}
					}
				}
			}
		}
	}
}

// qualified matches pkg.Name and pkg.Name.Member for any package name; the
// check applies to the module's own packages only. The name must not
// follow a dot or a word character (a file name, a longer selector).
var qualified = regexp.MustCompile(`(?:^|[^\w.])([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// link matches a godoc link to a name of the comment's own package:
// [Name] or [Name.Member].
var link = regexp.MustCompile(`\[([A-Z]\w*)(?:\.([A-Z]\w*))?\]`)

// A miss is a name the documentation mentions that does not exist.
type miss struct{ where, name string }

// check returns the qualified names in text that name nothing; own is the
// package whose unqualified doc links text may use ("" for markdown).
func (p parsed) check(where, text, own string) []miss {
	var misses []miss
	for _, m := range qualified.FindAllStringSubmatch(text, -1) {
		a, ours := p.apis[m[1]]
		if !ours || a.has(m[2], m[3]) {
			continue
		}
		name := m[1] + "." + m[2]
		if m[3] != "" {
			name += "." + m[3]
		}
		misses = append(misses, miss{where, name})
	}
	if a, ok := p.apis[own]; ok {
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			if !a.has(m[1], m[2]) {
				name := strings.TrimSuffix(m[1]+"."+m[2], ".")
				misses = append(misses, miss{where, "[" + name + "] in package " + own})
			}
		}
	}
	return misses
}

// TestGodocNamesExist checks every comment of the module's non-test Go
// files: the names it mentions of the module's packages, and its doc
// links to its own package.
func TestGodocNamesExist(t *testing.T) {
	dir := root(t)
	p := parseModule(t, dir)
	var misses []miss
	for path, f := range p.files {
		rel, _ := filepath.Rel(dir, path)
		for _, cg := range f.Comments {
			where := rel + ":" + itoa(p.fset.Position(cg.Pos()).Line)
			misses = append(misses, p.check(where, cg.Text(), f.Name.Name)...)
		}
	}
	report(t, misses)
}

// TestMarkdownNamesExist checks README.md and docs/*.md. CHANGELOG.md is
// left out: it names what was removed, on purpose.
func TestMarkdownNamesExist(t *testing.T) {
	dir := root(t)
	p := parseModule(t, dir)
	docs, err := filepath.Glob(filepath.Join(dir, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(dir, "README.md"))
	var misses []miss
	for _, path := range docs {
		rel, _ := filepath.Rel(dir, path)
		if rel == filepath.Join("docs", "benchmarks.md") { // generated; names the peers' packages
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			misses = append(misses, p.check(rel+":"+itoa(i+1), line, "")...)
		}
	}
	report(t, misses)
}

// TestCheckFindsMissingNames proves the check can fail: a comment naming a
// function core does not have, a doc link to a missing method, and a
// markdown line with a removed option are all reported; true names are
// not.
func TestCheckFindsMissingNames(t *testing.T) {
	p := parseModule(t, root(t))
	for _, tt := range []struct {
		text, own string
		want      []string
	}{
		{"use core.NewLimiter and core.WithLimits", "", nil},
		{"see [Limiter.Allow] and core.Limiter.Allow", "core", nil},
		{"call core.NoSuchFunc()", "", []string{"core.NoSuchFunc"}},
		{"see [Limiter.NoSuchMethod]", "core", []string{"[Limiter.NoSuchMethod] in package core"}},
		{"`memstore.New(memstore.WithNoSuchOption(3))`", "", []string{"memstore.WithNoSuchOption"}},
		{"gin.Default() and redis.NewClient are not ours; file core.go is no name", "", nil},
	} {
		var got []string
		for _, m := range p.check("test", tt.text, tt.own) {
			got = append(got, m.name)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("check(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func report(t *testing.T, misses []miss) {
	t.Helper()
	slices.SortFunc(misses, func(a, b miss) int { return strings.Compare(a.where, b.where) })
	for _, m := range misses {
		t.Errorf("%s: %s does not exist", m.where, m.name)
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}
