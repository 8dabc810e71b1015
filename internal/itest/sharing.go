package itest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"testing"
)

// CheckSharing holds an integration package to its sharing rule, so that
// `make test` can run the package's tests side by side (go test -parallel)
// without one of them pulling a service from under another.
//
// The rule: a test that stops, restarts, kills or reconfigures a service
// of testenv (or changes the process's environment) is exclusive: it is
// listed in exclusive with the reason and does not call t.Parallel, so Go
// runs it alone, before any parallel test starts. Every other test uses
// only things of its own on the shared services (topic, HDFS directory,
// Hive database, connector name) and calls t.Parallel() as its first
// statement. A test that calls testenv or t.Setenv but is not listed, or is
// listed but calls t.Parallel, or is neither, fails this check: a new test
// cannot land without saying which kind it is.
//
// dir is the package's directory; its *_test.go files are parsed whatever
// their build tags, so the check runs in `make unit` without services.
func CheckSharing(t *testing.T, dir string, exclusive map[string]string) {
	t.Helper()
	tests, err := parseTests(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range sharingProblems(tests, exclusive) {
		t.Error(msg)
	}
}

// sharingProblems lists every breach of the rule among tests, in name
// order, including exclusive entries naming no test (a renamed test would
// otherwise lose its listing silently).
func sharingProblems(tests map[string]*ast.FuncDecl, exclusive map[string]string) []string {
	var problems []string
	for name := range exclusive {
		if _, ok := tests[name]; !ok {
			problems = append(problems, name+" is listed as exclusive but there is no such test")
		}
	}
	for name, fn := range tests {
		if msg := sharingProblem(name, fn, exclusive); msg != "" {
			problems = append(problems, msg)
		}
	}
	sort.Strings(problems)
	return problems
}

// sharingProblem is what is wrong with test fn under the rule, or "".
func sharingProblem(name string, fn *ast.FuncDecl, exclusive map[string]string) string {
	reason, isExclusive := exclusive[name]
	parallelFirst := startsWithParallel(fn)
	callsParallel := calls(fn, "Parallel")
	disrupts := calls(fn, "testenv") || calls(fn, "Setenv")
	switch {
	case isExclusive && callsParallel:
		return name + " is exclusive (" + reason + ") but calls t.Parallel: it would run beside the tests it disturbs"
	case isExclusive:
		return ""
	case disrupts:
		return name + " calls testenv or t.Setenv (a shared service or the process's environment) but is not listed as exclusive"
	case !parallelFirst:
		return name + " neither calls t.Parallel() as its first statement nor is listed as exclusive (with the reason)"
	}
	return ""
}

// parseTests maps each top-level TestXxx(t *testing.T) in dir's test
// files to its declaration.
func parseTests(dir string) (map[string]*ast.FuncDecl, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	tests := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && isTestName(fn.Name.Name) && fn.Body != nil {
				tests[fn.Name.Name] = fn
			}
		}
	}
	return tests, nil
}

func isTestName(name string) bool {
	return len(name) > 4 && name[:4] == "Test" && (name[4] < 'a' || name[4] > 'z')
}

// startsWithParallel: the body's first statement is <x>.Parallel().
func startsWithParallel(fn *ast.FuncDecl) bool {
	if len(fn.Body.List) == 0 {
		return false
	}
	stmt, ok := fn.Body.List[0].(*ast.ExprStmt)
	return ok && isCallTo(stmt.X, "Parallel")
}

// calls: anywhere in fn's body (closures included) there is a call to a
// function or method of that name.
func calls(fn *ast.FuncDecl, name string) bool {
	found := false
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if e, ok := n.(ast.Expr); ok && isCallTo(e, name) {
			found = true
		}
		return !found
	})
	return found
}

func isCallTo(e ast.Expr, name string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name == name
	case *ast.SelectorExpr:
		return f.Sel.Name == name
	}
	return false
}
