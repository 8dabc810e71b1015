// Package itest owns the integration tests' view of the real test
// environment started by testenv/testenv.sh: the service addresses (defaults
// plus environment overrides), readiness checks shared with the start script,
// Require<Service> guards that fail a test naming the unreachable service, and
// helpers for a unique Kafka topic, an HDFS client and directory, the schema
// registry base URL and Spark SQL read-back.
//
// It has no build tag so that integration tests (which do) can import it; it
// never starts services itself.
package itest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Default addresses, all on loopback (see testenv/README.md for ports).
const (
	DefaultKafkaAddr     = "127.0.0.1:9092"
	DefaultNameNodeAddr  = "127.0.0.1:8020"
	DefaultMetastoreURI  = "thrift://127.0.0.1:9083"
	DefaultMetastore4URI = "thrift://127.0.0.1:9084"
	DefaultRegistryURL   = "http://127.0.0.1:8081/apis/ccompat/v7"
	DefaultHDFSUser      = "root"
	defaultEnvFileSuffix = ".testenv/testenv.env"
)

// Environment variables that override the defaults. testenv.sh writes the
// ones it knows into <repo>/.testenv/testenv.env; a variable set in the
// process environment wins over that file.
const (
	EnvKafka        = "HDFS_SINK_TESTENV_KAFKA"
	EnvNameNode     = "HDFS_SINK_TESTENV_NAMENODE"
	EnvMetastore    = "HDFS_SINK_TESTENV_METASTORE"
	EnvMetastore4   = "HDFS_SINK_TESTENV_METASTORE4"
	EnvRegistryURL  = "HDFS_SINK_TESTENV_REGISTRY_URL"
	EnvPython       = "HDFS_SINK_TESTENV_PYTHON"
	EnvSparkAvroJar = "HDFS_SINK_TESTENV_SPARK_AVRO_JAR"
	EnvSparkScript  = "HDFS_SINK_TESTENV_SPARK_SQL"
)

// KafkaAddr is the broker's bootstrap address.
func KafkaAddr() string { return setting(EnvKafka, DefaultKafkaAddr) }

// NameNodeAddr is the HDFS NameNode RPC address (host:port).
func NameNodeAddr() string { return setting(EnvNameNode, DefaultNameNodeAddr) }

// HDFSURI is the fs.defaultFS URI, for table and partition locations.
func HDFSURI() string { return "hdfs://" + NameNodeAddr() }

// MetastoreURI is the Hive Metastore 3.1's Thrift URI.
func MetastoreURI() string { return setting(EnvMetastore, DefaultMetastoreURI) }

// Metastore4URI is the Hive Metastore 4.0's Thrift URI.
func Metastore4URI() string { return setting(EnvMetastore4, DefaultMetastore4URI) }

// RegistryURL is the Confluent-compatible schema registry base URL, including
// Apicurio's /apis/ccompat/v7 prefix and without a trailing slash.
func RegistryURL() string {
	return strings.TrimRight(setting(EnvRegistryURL, DefaultRegistryURL), "/")
}

var (
	envFileOnce sync.Once
	envFile     map[string]string
)

// setting returns the process environment's value, else testenv.env's, else def.
func setting(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	envFileOnce.Do(func() { envFile = readEnvFile(findEnvFile()) })
	if v := envFile[key]; v != "" {
		return v
	}
	return def
}

// RepoRoot is the directory holding go.mod, found by walking up from the
// working directory (go test runs each package in its own directory).
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func findEnvFile() string {
	root := RepoRoot()
	if root == "" {
		return ""
	}
	return filepath.Join(root, defaultEnvFileSuffix)
}

// readEnvFile parses KEY=VALUE lines; a missing file is an empty map because
// every key has a default.
func readEnvFile(path string) map[string]string {
	m := map[string]string{}
	if path == "" {
		return m
	}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m
}
