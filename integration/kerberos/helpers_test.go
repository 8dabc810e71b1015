//go:build integration

// Package kerberos runs the hdfs-sink daemon against the Kerberos profile of
// testenv.sh (testenv/kerberos.sh): Kafka's GSSAPI listener, the Kerberized
// HDFS and Metastore, a KDC handing out 2-minute tickets, and reads back
// through Kerberos with internal/verify and Spark.
package kerberos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// binary is the daemon under test (itest.Binary).
func binary(t *testing.T) string { return itest.Binary(t) }

func requireKerberos(t *testing.T) {
	t.Helper()
	for _, check := range []func(context.Context) error{itest.CheckKrbHDFS, itest.CheckKrbKafka} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := check(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%v (the Kerberos profile of testenv/testenv.sh up must be running)", err)
		}
	}
}

// setup is one test's topic (on the Kerberos profile's broker), HDFS base
// directory (on the Kerberized HDFS) and schema id.
type setup struct {
	t        *testing.T
	topic    string
	parts    int32
	base     string
	schemaID int32
	fs       *hdfs.FS
}

func newSetup(t *testing.T, parts int32) *setup {
	requireKerberos(t)
	itest.RequireRegistry(t)
	s := &setup{t: t, topic: itest.UniqueName(t, "krb_"), parts: parts}
	s.createTopic()
	sch, err := srclient.NewSchemaRegistryClient(itest.RegistryURL()).CreateSchema(s.topic+"-value", demodata.Schema, srclient.Avro)
	if err != nil {
		t.Fatalf("Schema Registry: register: %v", err)
	}
	s.schemaID = int32(sch.ID())
	l, err := itest.SinkLogin()
	if err != nil {
		t.Fatal(err)
	}
	s.fs, err = hdfs.New(hdfs.Options{URL: "hdfs://" + itest.KrbNameNodeAddr, ConfDir: itest.KrbHadoopConf(), Kerberos: l.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.fs.Close() })
	s.base = path.Join("/itest", s.topic)
	return s
}

// plainClient talks to the Kerberos broker's plaintext listener, which
// producers and admin use: the listener under test is the consumer's.
func (s *setup) plainClient(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(itest.KrbKafkaPlainAddr)}, opts...)...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(cl.Close)
	return cl
}

func (s *setup) createTopic() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(s.plainClient()).CreateTopic(ctx, s.parts, 1, nil, s.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		s.t.Fatalf("create topic %s: %v", s.topic, err)
	}
}

// produce writes n more records round-robin; seq continues per partition.
func (s *setup) produce(counts map[int32]int64, n int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := demodata.ProduceFrom(ctx, []string{itest.KrbKafkaPlainAddr}, s.schemaID, s.topic, s.parts, n, counts)
	if err != nil {
		s.t.Fatalf("produce: %v", err)
	}
	for p, c := range got {
		counts[p] = c
	}
}

const krb5Module = "com.sun.security.auth.module.Krb5LoginModule"

// connector is a Confluent-style connector file with Kerberos everywhere:
// the keytab login for HDFS and the Metastore, GSSAPI for the consumer.
func (s *setup) connector(name string, extra map[string]string) string {
	jaas := fmt.Sprintf(`%s required useKeyTab=true storeKey=true keyTab="%s" principal="%s";`, krb5Module, itest.Keytab("sink"), itest.KrbSinkPrincipal)
	cfg := map[string]string{
		"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "tasks.max": "1", "topics": s.topic,
		"hdfs.url": "hdfs://" + itest.KrbNameNodeAddr + s.base, "hadoop.conf.dir": itest.KrbHadoopConf(),
		"hdfs.authentication.kerberos": "true", "connect.hdfs.principal": itest.KrbSinkPrincipal,
		"connect.hdfs.keytab": itest.Keytab("sink"), "hdfs.namenode.principal": itest.KrbNameNodeSPN,
		"hdfs.sink.krb5.conf": itest.Krb5Conf(), "kerberos.ticket.renew.period.ms": "3600000",
		"flush.size": "500", "rotate.interval.ms": "3000", "retry.backoff.ms": "1000",
		"format.class":                        "io.confluent.connect.hdfs.avro.AvroFormat",
		"value.converter":                     "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": itest.RegistryURL(),
		"bootstrap.servers":                   itest.KrbKafkaAddr,
		"consumer.override.security.protocol": "SASL_PLAINTEXT", "consumer.override.sasl.mechanism": "GSSAPI",
		"consumer.override.sasl.kerberos.service.name": "kafka", "consumer.override.sasl.jaas.config": jaas,
		"consumer.override.session.timeout.ms": "6000", "consumer.override.heartbeat.interval.ms": "500",
	}
	for k, v := range extra {
		if v == "" {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	b, _ := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	p := filepath.Join(s.t.TempDir(), name+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// hiveExtra turns on Hive registration on the Kerberized Metastore.
func hiveExtra(db string) map[string]string {
	return map[string]string{
		"hive.integration": "true", "hive.metastore.uris": itest.KrbMetastoreURI, "hive.database": db,
		"hive.metastore.sasl.enabled": "true", "hive.metastore.kerberos.principal": "hive/_HOST@" + itest.KrbRealm,
		"schema.compatibility": "BACKWARD",
	}
}

// daemon is one hdfs-sink process.
type daemon struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func (s *setup) start(config string) *daemon {
	s.t.Helper()
	logf, err := os.CreateTemp(s.t.TempDir(), "daemon-*.log")
	if err != nil {
		s.t.Fatal(err)
	}
	// No HTTP listener (two daemons of one test must not share a port), and
	// no restart: a refused login ends the only connector, and the process.
	cmd := exec.Command(binary(s.t), "run", "--config", config, "--listen", "", "--restart-max-attempts", "0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	d := &daemon{t: s.t, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); logf.Close(); close(d.done) }()
	s.t.Cleanup(func() {
		d.cmd.Process.Kill()
		<-d.done
		if i := strings.Index(d.text(), "WARNING: DATA RACE"); i >= 0 {
			report := d.text()[i:]
			s.t.Errorf("the race detector fired in daemon %s:\n%s", d.log, report[:min(len(report), 6000)])
		}
		if s.t.Failed() {
			s.t.Logf("daemon log %s (tail):\n%s", d.log, d.tail(40))
		}
	})
	return d
}

func (d *daemon) text() string { b, _ := os.ReadFile(d.log); return string(b) }

func (d *daemon) contains(s string) bool { return strings.Contains(d.text(), s) }

func (d *daemon) count(s string) int { return strings.Count(d.text(), s) }

func (d *daemon) tail(lines int) string {
	all := strings.Split(strings.TrimRight(d.text(), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// wait returns the exit error, or false if the process runs past dur.
func (d *daemon) wait(dur time.Duration) (error, bool) {
	select {
	case <-d.done:
		return d.err, true
	case <-time.After(dur):
		return nil, false
	}
}

// stop sends SIGTERM and requires a clean exit.
func (d *daemon) stop() {
	d.t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	err, ok := d.wait(60 * time.Second)
	if !ok || err != nil {
		d.t.Fatalf("daemon exit after SIGTERM: exited %v, err %v\n%s", ok, err, d.tail(30))
	}
}

func (s *setup) topicsDir() string { return path.Join(s.base, "topics") }

// waitCommitted waits until committed file names cover n records.
func (s *setup) waitCommitted(d *daemon, n int64, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var got int64
	for time.Now().Before(deadline) {
		got, _ = verify.CountByNames(context.Background(), s.fs, s.topicsDir(), s.topic)
		if got >= n {
			return
		}
		if _, exited := d.wait(500 * time.Millisecond); exited {
			s.t.Fatalf("daemon exited with %d of %d records committed:\n%s", got, n, d.tail(30))
		}
	}
	s.t.Fatalf("after %v, committed files hold %d records, want %d", within, got, n)
}

// check reads every committed file back through Kerberos: each offset once.
func (s *setup) check(counts map[int32]int64) verify.Report {
	s.t.Helper()
	rep, err := verify.Check(context.Background(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: counts, SeqField: "seq"})
	if err != nil {
		s.t.Fatalf("exactly-once violated on the Kerberized HDFS: %v", err)
	}
	return rep
}

func total(counts map[int32]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// testenv runs testenv/testenv.sh with args (stop kdc, start-kdc, ...).
func testenv(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{itest.TestenvScript()}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("testenv.sh %v: %v\n%s", args, err, out.String())
	}
}
