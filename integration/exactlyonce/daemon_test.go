//go:build integration

// Package exactlyonce runs the hdfs-sink daemon as a real process against the
// real services of testenv/testenv.sh, kills it in every way the issue lists
// (SIGKILL at each state and at random moments, rebalances, SIGSTOP past the
// session timeout) and reads every committed file back from HDFS.
package exactlyonce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/storage/hdfs"
)

// binary is the daemon under test (itest.Binary).
func binary(t *testing.T) string { return itest.Binary(t) }

// setup is one test's topic, HDFS base directory and schema id.
type setup struct {
	t        *testing.T
	topic    string
	parts    int32
	base     string // HDFS directory holding topics/ and logs/
	schemaID int32
	fs       *hdfs.FS
	// config is the last connector file written; check runs `hdfs-sink
	// verify` on it unless noVerify (a test whose end state verify must
	// flag, which then asserts that itself).
	config   string
	noVerify bool
}

func newSetup(t *testing.T, parts int32) *setup {
	itest.RequireRegistry(t)
	cl := itest.HDFSClient(t)
	s := &setup{t: t, topic: itest.Topic(t, parts), parts: parts, base: itest.HDFSDir(t, cl)}
	s.registerSchema()
	fs, err := hdfs.New(hdfs.Options{URL: itest.HDFSURI(), User: "root"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	s.fs = fs
	return s
}

// registerSchema registers the records' schema for the topic.
func (s *setup) registerSchema() {
	s.t.Helper()
	sr := srclient.NewSchemaRegistryClient(itest.RegistryURL())
	sch, err := sr.CreateSchema(s.topic+"-value", demodata.Schema, srclient.Avro)
	if err != nil {
		s.t.Fatalf("Schema Registry at %s: register: %v", itest.RegistryURL(), err)
	}
	s.schemaID = int32(sch.ID())
}

// produce writes n more records round-robin; seq continues per partition.
func (s *setup) produce(counts map[int32]int64, n int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := demodata.ProduceFrom(ctx, []string{itest.KafkaAddr()}, s.schemaID, s.topic, s.parts, n, counts)
	if err != nil {
		s.t.Fatalf("Kafka at %s: %v", itest.KafkaAddr(), err)
	}
	for p, c := range got {
		counts[p] = c
	}
}

// connector writes a connector file the way a Confluent user would.
func (s *setup) connector(name string, extra map[string]string) string {
	return s.connectorIn(s.t.TempDir(), name, extra)
}

// connectorIn writes the connector file into dir (a config directory).
func (s *setup) connectorIn(dir, name string, extra map[string]string) string {
	cfg := map[string]string{
		"connector.class":                         "io.confluent.connect.hdfs.HdfsSinkConnector",
		"tasks.max":                               "1",
		"topics":                                  s.topic,
		"hdfs.url":                                itest.HDFSURI() + s.base,
		"flush.size":                              "500",
		"rotate.interval.ms":                      "3000",
		"retry.backoff.ms":                        "1000",
		"format.class":                            "io.confluent.connect.hdfs.avro.AvroFormat",
		"value.converter":                         "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":     itest.RegistryURL(),
		"key.converter":                           "org.apache.kafka.connect.storage.StringConverter",
		"bootstrap.servers":                       itest.KafkaAddr(),
		"hdfs.sink.hdfs.user":                     "root",
		"consumer.override.session.timeout.ms":    "6000",
		"consumer.override.heartbeat.interval.ms": "500",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	p := filepath.Join(dir, name+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.config = p
	return p
}

// daemon is one hdfs-sink process.
type daemon struct {
	t    *testing.T
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

func (s *setup) start(config string, env ...string) *daemon {
	s.t.Helper()
	return s.startWith(config, nil, env...)
}

// startWith is start with more command-line flags for hdfs-sink run.
func (s *setup) startWith(config string, flags []string, env ...string) *daemon {
	s.t.Helper()
	return s.startBinary(binary(s.t), config, append([]string{"--status-addr", "127.0.0.1:0"}, flags...), env...)
}

// startBinary is startWith for another build of hdfs-sink (the upgrade
// tests' earlier builds, itest.BinaryAt), with no flag but --config and
// --log-level unless flags adds them: the oldest builds have no others.
func (s *setup) startBinary(bin, config string, flags []string, env ...string) *daemon {
	s.t.Helper()
	logf, err := os.CreateTemp(s.t.TempDir(), "daemon-*.log")
	if err != nil {
		s.t.Fatal(err)
	}
	args := append([]string{"run", "--config", config, "--log-level", "debug"}, flags...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	d := &daemon{t: s.t, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); logf.Close(); close(d.done) }()
	s.t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGCONT)
		d.cmd.Process.Kill()
		<-d.done
		if d.logContains("WARNING: DATA RACE") {
			s.t.Errorf("the race detector fired in daemon %s", d.log)
		}
		if s.t.Failed() {
			s.t.Logf("daemon log %s (tail):\n%s", d.log, tail(d.log, 40))
		}
	})
	return d
}

func tail(file string, lines int) string {
	b, _ := os.ReadFile(file)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// wait returns the process's exit error, or false if it runs past d.
func (d *daemon) wait(dur time.Duration) (error, bool) {
	select {
	case <-d.done:
		return d.err, true
	case <-time.After(dur):
		return nil, false
	}
}

func (d *daemon) signal(sig syscall.Signal) {
	if err := d.cmd.Process.Signal(sig); err != nil {
		d.t.Fatalf("signal %v: %v", sig, err)
	}
}

// stop sends SIGTERM and requires a clean exit within the shutdown bound.
func (d *daemon) stop() {
	d.t.Helper()
	d.signal(syscall.SIGTERM)
	err, ok := d.wait(60 * time.Second)
	if !ok {
		d.t.Fatalf("daemon did not exit within 60s of SIGTERM\n%s", tail(d.log, 30))
	}
	if err != nil {
		d.t.Fatalf("daemon exit after SIGTERM: %v\n%s", err, tail(d.log, 30))
	}
}

// status fetches the daemon's GET /status document.
func (d *daemon) status() map[string]any {
	d.t.Helper()
	b, _ := os.ReadFile(d.log)
	m := regexp.MustCompile(`url=(http://\S+/status)`).FindSubmatch(b)
	if m == nil {
		d.t.Fatalf("no status endpoint in the daemon log")
	}
	resp, err := http.Get(string(m[1]))
	if err != nil {
		d.t.Fatalf("GET %s: %v", m[1], err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		d.t.Fatalf("status: %v", err)
	}
	return doc
}

func (d *daemon) logContains(s string) bool {
	b, _ := os.ReadFile(d.log)
	return bytes.Contains(b, []byte(s))
}

func (s *setup) topicsDir() string { return path.Join(s.base, "topics") }

// waitCommitted waits until committed file names cover n records.
func (s *setup) waitCommitted(n int64, within time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var got int64
	for time.Now().Before(deadline) {
		var err error
		if got, err = verify.CountByNames(context.Background(), s.fs, s.topicsDir(), s.topic); err == nil && got >= n {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.t.Fatalf("after %v, committed files hold %d records, want %d", within, got, n)
}

// check reads every committed file back from HDFS: each offset exactly
// once; then `hdfs-sink verify`, which knows nothing of what was produced,
// must agree.
func (s *setup) check(counts map[int32]int64) verify.Report {
	s.t.Helper()
	rep, err := verify.Check(context.Background(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: counts, SeqField: "seq"})
	if err != nil {
		s.t.Fatalf("exactly-once violated on HDFS: %v", err)
	}
	if s.config != "" && !s.noVerify {
		if code, out, errOut := s.tool("verify", "--config", s.config, "--topic", s.topic); code != 0 {
			s.t.Fatalf("hdfs-sink verify after an exactly-once check: exit %d\n%s%s", code, out, errOut)
		}
	}
	return rep
}

// tool runs an hdfs-sink command to its end.
func (s *setup) tool(args ...string) (code int, stdout, stderr string) {
	s.t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(binary(s.t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		s.t.Fatalf("hdfs-sink %v: %v", args, err)
	}
	return code, out.String(), errOut.String()
}

func total(counts map[int32]int64) int64 {
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// produceRaw appends one record with an arbitrary value.
func (s *setup) produceRaw(p int32, value []byte) {
	s.t.Helper()
	cl := itest.KafkaClient(s.t, kgo.DefaultProduceTopic(s.topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: value}).FirstErr(); err != nil {
		s.t.Fatalf("Kafka at %s: %v", itest.KafkaAddr(), err)
	}
}

func (s *setup) dlqTopic() string { return itest.Topic(s.t, 1) }

// consume reads n records of topic from the start.
func (s *setup) consume(topic string, n int) []*kgo.Record {
	s.t.Helper()
	cl := itest.KafkaClient(s.t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n && ctx.Err() == nil {
		out = append(out, cl.PollFetches(ctx).Records()...)
	}
	if len(out) != n {
		s.t.Fatalf("%s holds %d records, want %d", topic, len(out), n)
	}
	return out
}
