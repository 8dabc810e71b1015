package itest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeSpark installs a shell script in place of `spark_sql.py --serve` (run
// by /bin/sh in place of the venv python). It appends a line to the
// returned file when it starts, logs a line to stderr, and answers each
// request line with reply(n) for its n-th request (1-based; "" means no
// reply: it exits with the given status instead).
func fakeSpark(t *testing.T, exit int, reply func(n int) string) (starts string) {
	t.Helper()
	dir := t.TempDir()
	starts = filepath.Join(dir, "starts")
	script := filepath.Join(dir, "fake.sh")
	body := "#!/bin/sh\necho $$ >>" + starts + "\necho 'spark log line' >&2\nn=0\nwhile read -r line; do\n  n=$((n+1))\n  case $n in\n"
	for n := 1; n <= 3; n++ {
		r := reply(n)
		if r == "" {
			body += "  " + strconv.Itoa(n) + ") exit " + strconv.Itoa(exit) + " ;;\n"
			continue
		}
		body += "  " + strconv.Itoa(n) + ") cat >&3 <<'EOF'\n" + r + "\nEOF\n  ;;\n"
	}
	body += "  esac\ndone\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPython, "/bin/sh")
	t.Setenv(EnvSparkScript, script)
	t.Cleanup(sharedSpark.closeAll)
	return starts
}

func always(r string) func(int) string { return func(int) string { return r } }

// startsOf counts the helper processes the fake has seen start.
func startsOf(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestRunSparkSQLParsesResults(t *testing.T) {
	fakeSpark(t, 0, always(`{"results": [[{"n": 3}], [], [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]]}`))
	res, err := RunSparkSQL(context.Background(), "q1", "q2", "q3")
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || res[0][0]["n"] != float64(3) || len(res[1]) != 0 || res[2][1]["name"] != "b" {
		t.Fatalf("results = %v", res)
	}
}

func TestRunSparkSQLFailures(t *testing.T) {
	cases := []struct {
		name, reply string
		exit        int
		wantQuery   string
		wantInError string
	}{
		{"query error", `{"error": "AnalysisException: no table", "query_index": 1}`, 0, "SELECT 2", "AnalysisException"},
		{"exits without a reply", "", 3, "", "exited without replying: exit status 3"},
		{"bad json", `{"results": [`, 0, "", "reply"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			starts := fakeSpark(t, tc.exit, always(tc.reply))
			_, err := RunSparkSQL(context.Background(), "SELECT 1", "SELECT 2")
			var se *SparkError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *SparkError", err)
			}
			if se.Query != tc.wantQuery {
				t.Errorf("Query = %q, want %q", se.Query, tc.wantQuery)
			}
			if !strings.Contains(err.Error(), tc.wantInError) || !strings.Contains(err.Error(), "spark log line") {
				t.Errorf("error %q lacks %q or the stderr tail", err, tc.wantInError)
			}
			// A new session's failure is the answer: no second try.
			if n := startsOf(t, starts); n != 1 {
				t.Errorf("helper started %d times, want 1", n)
			}
		})
	}
}

// Calls share one session: the second call reaches the helper the first
// one started.
func TestRunSparkSQLReusesTheSession(t *testing.T) {
	starts := fakeSpark(t, 0, func(n int) string { return `{"results": [[{"request": ` + strconv.Itoa(n) + `}]]}` })
	for want := 1; want <= 3; want++ {
		res, err := RunSparkSQL(context.Background(), "SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		if got := res[0][0]["request"]; got != float64(want) {
			t.Fatalf("call %d was request %v of its helper, want %d", want, got, want)
		}
	}
	if n := startsOf(t, starts); n != 1 {
		t.Errorf("helper started %d times for three calls, want 1", n)
	}
	// Another metastore is another session.
	if _, err := RunSparkSQLThrough(context.Background(), "thrift://127.0.0.1:1", "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if n := startsOf(t, starts); n != 2 {
		t.Errorf("helper started %d times after a call through another metastore, want 2", n)
	}
}

// A session that served earlier calls and then fails one (stale after an
// outage, say) is replaced, and the call answered by a new session.
func TestRunSparkSQLRetriesAFailureOfAReusedSession(t *testing.T) {
	starts := fakeSpark(t, 0, func(n int) string {
		if n == 1 {
			return `{"results": [[{"ok": 1}]]}`
		}
		return `{"error": "TTransportException: metastore connection lost", "query_index": 0}`
	})
	for call := 1; call <= 2; call++ {
		if _, err := RunSparkSQL(context.Background(), "SELECT 1"); err != nil {
			t.Fatalf("call %d: %v", call, err)
		}
	}
	if n := startsOf(t, starts); n != 2 {
		t.Errorf("helper started %d times, want 2 (the second call on a new session)", n)
	}
}

// A hung helper is killed with its children (pyspark's JVM is one) when the
// timeout expires.
func TestRunSparkSQLTimeoutKillsChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := filepath.Join(dir, "hang.sh")
	body := "#!/bin/sh\nsleep 300 &\necho $! >" + pidFile + "\nwait\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvPython, "/bin/sh")
	t.Setenv(EnvSparkScript, script)
	t.Cleanup(sharedSpark.closeAll)
	old := SparkTimeout
	SparkTimeout = time.Second
	defer func() { SparkTimeout = old }()

	start := time.Now()
	if _, err := RunSparkSQL(context.Background(), "SELECT 1"); err == nil {
		t.Fatal("RunSparkSQL on a hung helper returned no error")
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("returned after %v, want about SparkTimeout", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("helper never started its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d of the helper survived the timeout", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The one-shot helper (per-call settings, such as a test's ticket cache)
// is stopped after its call by closing its stdin.
func TestRunSparkSQLOnceStopsItsHelper(t *testing.T) {
	starts := fakeSpark(t, 0, always(`{"results": [[]]}`))
	for i := 0; i < 2; i++ {
		if _, err := runSparkSQLOnce(context.Background(), []string{"A=" + strconv.Itoa(i)}, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	pids := strings.Fields(string(b))
	if len(pids) != 2 {
		t.Fatalf("helper started %d times for two one-shot calls, want 2", len(pids))
	}
	for _, p := range pids {
		pid, _ := strconv.Atoi(p)
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("one-shot helper %d still runs after its call", pid)
		}
	}
}
