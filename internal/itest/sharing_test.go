package itest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// TestSharingProblems: each way a test can break the sharing rule is
// named, and the two right ways pass.
func TestSharingProblems(t *testing.T) {
	exclusive := map[string]string{"TestStops": "stops Kafka"}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"TestShares", "t.Parallel(); run(t)", ""},
		{"TestStops", `testenv(t, "stop", "kafka")`, ""},
		{"TestStops", `t.Parallel(); testenv(t, "stop", "kafka")`, "is exclusive (stops Kafka) but calls t.Parallel"},
		{"TestForgot", "run(t)", "neither calls t.Parallel() as its first statement"},
		{"TestLate", "run(t); t.Parallel()", "neither calls t.Parallel() as its first statement"},
		{"TestUnlisted", `t.Parallel(); testenv(t, "up")`, "calls testenv or t.Setenv"},
		{"TestEnv", `t.Parallel(); t.Setenv("X", "1")`, "calls testenv or t.Setenv"},
		{"TestInClosure", `t.Parallel(); t.Cleanup(func() { testenv(t, "up") })`, "calls testenv or t.Setenv"},
	} {
		fn := parseFunc(t, tc.name, tc.body)
		got := sharingProblem(tc.name, fn, exclusive)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s { %s }: %q, want %q", tc.name, tc.body, got, tc.want)
		}
	}
}

// TestSharingProblemsNamesAStaleListing: an exclusive entry for a test
// that no longer exists is reported, and the package's own files parse.
func TestSharingProblemsNamesAStaleListing(t *testing.T) {
	tests, err := parseTests(".")
	if err != nil || tests["TestSharingProblems"] == nil {
		t.Fatalf("parseTests(.) = %d tests, %v; want this file's", len(tests), err)
	}
	tests = map[string]*ast.FuncDecl{"TestShares": parseFunc(t, "TestShares", "t.Parallel()")}
	got := sharingProblems(tests, map[string]string{"TestRenamed": "stops Kafka"})
	if len(got) != 1 || !strings.Contains(got[0], "TestRenamed is listed as exclusive but there is no such test") {
		t.Fatalf("problems = %q; want the stale TestRenamed entry alone", got)
	}
}

func parseFunc(t *testing.T, name, body string) *ast.FuncDecl {
	t.Helper()
	src := "package p\nfunc " + name + "(t *testing.T) {\n" + strings.ReplaceAll(body, "; ", "\n") + "\n}\n"
	f, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, 0)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return f.Decls[0].(*ast.FuncDecl)
}
