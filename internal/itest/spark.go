package itest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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

// SparkSQL runs the queries in order in a local SparkSession with Hive
// support (metastore MetastoreURI, fs.defaultFS HDFSURI) and returns one Rows
// per query. Statements without results (DDL) yield empty Rows. A failing
// query fails the test with Spark's message and its log tail. The session is
// shared by the test binary's calls, one call at a time, and forgets its
// caches between calls (see sharedSpark).
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
	return sharedSpark.run(ctx, nil, queries)
}

// RunSparkSQLThrough is RunSparkSQL with Spark's Hive client on the
// metastore at uri instead of MetastoreURI(): a test can ask another
// metastore without changing the process's environment, which would reach
// every test running beside it.
func RunSparkSQLThrough(ctx context.Context, uri string, queries ...string) ([]Rows, error) {
	return sharedSpark.run(ctx, []string{EnvMetastore + "=" + uri}, queries)
}

// runSparkSQLOnce runs the queries in a helper of their own, started for
// this call and stopped after it, with env added last (so it wins): for
// settings that differ per call, such as a test's own ticket cache.
func runSparkSQLOnce(ctx context.Context, env []string, queries ...string) ([]Rows, error) {
	ctx, cancel := context.WithTimeout(ctx, SparkTimeout)
	defer cancel()
	srv, err := startSparkServer(env)
	if err != nil {
		return nil, err
	}
	defer srv.close()
	return srv.query(ctx, queries)
}

// sparkEnv is the helper's environment: the test environment's services,
// then env (so it wins).
func sparkEnv(env []string) []string {
	out := append(os.Environ(),
		EnvMetastore+"="+MetastoreURI(),
		"HDFS_SINK_TESTENV_HDFS_URI="+HDFSURI(),
		EnvSparkAvroJar+"="+setting(EnvSparkAvroJar, ""),
		"SPARK_LOCAL_IP=127.0.0.1",
		"HADOOP_USER_NAME="+DefaultHDFSUser,
	)
	return append(out, env...)
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
