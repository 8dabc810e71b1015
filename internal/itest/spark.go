package itest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Rows is one query's result: each row maps column name to a JSON value
// (numbers are float64, as encoding/json decodes them).
type Rows []map[string]any

// SparkTimeout bounds one SparkSQL call (session start plus all queries).
var SparkTimeout = 5 * time.Minute

// SparkPython is the pyspark venv's interpreter written by testenv.sh.
func SparkPython() string { return setting(EnvPython, "") }

// SparkScript is testenv/spark_sql.py in this repository.
func SparkScript() string {
	return setting(EnvSparkScript, filepath.Join(RepoRoot(), "testenv", "spark_sql.py"))
}

// RequireSpark fails the test unless the pyspark venv and helper script exist.
func RequireSpark(t testing.TB) {
	t.Helper()
	if err := CheckSpark(); err != nil {
		t.Fatalf("%v (run `make testenv-up` or testenv/testenv.sh up)", err)
	}
}

// CheckSpark reports whether SparkSQL can run (it does not start a session).
func CheckSpark() error {
	py := SparkPython()
	if py == "" {
		return &ServiceError{ServiceSpark, "pyspark venv", fmt.Errorf("%s is not set and .testenv/testenv.env names no python", EnvPython)}
	}
	for _, f := range []string{py, SparkScript()} {
		if _, err := os.Stat(f); err != nil {
			return &ServiceError{ServiceSpark, f, err}
		}
	}
	return nil
}

// SparkSQL runs the queries in order in one local SparkSession with Hive
// support (metastore MetastoreURI, fs.defaultFS HDFSURI) and returns one Rows
// per query. Statements without results (DDL) yield empty Rows. A failing
// query fails the test with Spark's message and its log tail.
func SparkSQL(t testing.TB, queries ...string) []Rows {
	t.Helper()
	RequireSpark(t)
	res, err := RunSparkSQL(context.Background(), queries...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return res
}

// SparkError is a failed SparkSQL run: the query (if one failed) and the
// tail of the helper's stderr.
type SparkError struct {
	Query  string
	Err    error
	Stderr string
}

func (e *SparkError) Error() string {
	q := ""
	if e.Query != "" {
		q = fmt.Sprintf(" query %q:", e.Query)
	}
	return fmt.Sprintf("Spark SQL:%s %v\n--- spark_sql.py stderr (tail) ---\n%s", q, e.Err, e.Stderr)
}

func (e *SparkError) Unwrap() error { return e.Err }

type sparkOutput struct {
	Results    []Rows `json:"results"`
	Error      string `json:"error"`
	QueryIndex int    `json:"query_index"`
}

// RunSparkSQL is SparkSQL without a testing.TB.
func RunSparkSQL(ctx context.Context, queries ...string) ([]Rows, error) {
	return runSparkSQL(ctx, nil, queries...)
}

// RunSparkSQLThrough is RunSparkSQL with Spark's Hive client on the
// metastore at uri instead of MetastoreURI(): a test can ask another
// metastore without changing the process's environment, which would reach
// every test running beside it.
func RunSparkSQLThrough(ctx context.Context, uri string, queries ...string) ([]Rows, error) {
	return runSparkSQL(ctx, []string{EnvMetastore + "=" + uri}, queries...)
}

// runSparkSQL runs the helper with env added last (so it wins).
func runSparkSQL(ctx context.Context, env []string, queries ...string) ([]Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, SparkTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "itest-spark-")
	if err != nil {
		return nil, &SparkError{Err: err}
	}
	defer os.RemoveAll(dir)
	in, err := json.Marshal(map[string][]string{"queries": queries})
	if err != nil {
		return nil, &SparkError{Err: err}
	}
	outFile := filepath.Join(dir, "out.json")
	cmd := exec.CommandContext(ctx, SparkPython(), SparkScript(), "--out", outFile)
	cmd.Dir = dir // Spark may drop derby.log / spark-warehouse in its cwd
	// pyspark starts a JVM child: on timeout kill the whole process group
	// so no driver JVM outlives the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(),
		EnvMetastore+"="+MetastoreURI(),
		"HDFS_SINK_TESTENV_HDFS_URI="+HDFSURI(),
		EnvSparkAvroJar+"="+setting(EnvSparkAvroJar, ""),
		"SPARK_LOCAL_IP=127.0.0.1",
		"HADOOP_USER_NAME="+DefaultHDFSUser,
	)
	cmd.Env = append(cmd.Env, env...)
	runErr := cmd.Run()
	out, parseErr := readSparkOutput(outFile)
	if parseErr != nil {
		return nil, &SparkError{Err: errors.Join(runErr, parseErr), Stderr: tail(stderr.Bytes())}
	}
	if out.Error != "" {
		q := ""
		if out.QueryIndex >= 0 && out.QueryIndex < len(queries) {
			q = queries[out.QueryIndex]
		}
		return nil, &SparkError{Query: q, Err: errors.New(out.Error), Stderr: tail(stderr.Bytes())}
	}
	if runErr != nil {
		return nil, &SparkError{Err: runErr, Stderr: tail(stderr.Bytes())}
	}
	return out.Results, nil
}

func readSparkOutput(file string) (*sparkOutput, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("no result file: %w", err)
	}
	var out sparkOutput
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("result file %s: %w", file, err)
	}
	return &out, nil
}

// tail keeps the last lines of a log for error messages.
func tail(b []byte) string {
	const max = 4000
	if len(b) > max {
		b = b[len(b)-max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
