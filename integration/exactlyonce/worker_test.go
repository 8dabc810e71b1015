//go:build integration

package exactlyonce

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// Secrets of TestWorkerFileAndSecrets: one reaches the daemon through
// ${file:...}, one through ${env:...}; neither may be printed. The second
// is the SASL PLAIN password the consumer authenticates with.
const (
	fileSecret = "file-secret-Zq81x"
	envSecret  = itest.SASLPassword
)

// bareConnector writes a connector file as Connect users publish them:
// no bootstrap.servers, no converter, no registry URL (the worker's).
func (s *setup) bareConnector(name string, extra map[string]string) string {
	cfg := map[string]string{
		"connector.class": "HdfsSinkConnector", "tasks.max": "1", "topics": s.topic,
		"store.url": itest.HDFSURI() + s.base, "flush.size": "500", "rotate.interval.ms": "3000",
		"retry.backoff.ms": "1000", "hdfs.sink.hdfs.user": "root",
		"consumer.override.session.timeout.ms": "6000", "consumer.override.heartbeat.interval.ms": "500",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, _ := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	return s.writeLocalFile(name+".json", string(b))
}

func (s *setup) writeLocalFile(name, body string) string {
	p := filepath.Join(s.t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// TestWorkerFileAndSecrets: the daemon runs from a Connect worker file and a
// connector file that lacks what Connect keeps in the worker; the registry
// credentials come through ${file:...} and the consumer's JAAS line through
// ${env:...}, and the consumer authenticates with it on the SASL_PLAINTEXT
// listener (a JAAS line under PLAINTEXT is a check error). Every record is on HDFS exactly once, /status answers on the
// worker's listeners, and neither secret appears in the daemon's output or
// in /status.
func TestWorkerFileAndSecrets(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	s.produce(counts, 3000)
	secrets := s.writeLocalFile("secrets.properties", "registry.user.info=svc:"+fileSecret+"\n")
	httpAddr := freeAddr(t)
	worker := s.writeLocalFile("connect-distributed.properties", fmt.Sprintf(`bootstrap.servers=%s
consumer.security.protocol=SASL_PLAINTEXT
consumer.sasl.mechanism=PLAIN
group.id=connect-cluster
offset.storage.topic=connect-offsets
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=%s
value.converter.basic.auth.credentials.source=USER_INFO
value.converter.basic.auth.user.info=${file:%s:registry.user.info}
config.providers=file,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
consumer.sasl.jaas.config=${env:HDFS_SINK_IT_JAAS}
listeners=HTTP://%s
`, itest.KafkaSASLPlaintextAddr, itest.RegistryURL(), secrets, httpAddr))
	conn := s.bareConnector("from-worker", nil)
	jaas := `HDFS_SINK_IT_JAAS=org.apache.kafka.common.security.plain.PlainLoginModule required username="` + itest.SASLUser + `" password="` + envSecret + `";`
	if out, err := s.checkCmd(worker, conn, jaas); err != nil || !strings.Contains(out, "sasl.jaas.config=[hidden]") {
		t.Fatalf("check: %v\n%s", err, out)
	}
	d := s.startArgs([]string{"run", "--worker", worker, "--config", conn, "--log-level", "debug"}, jaas)
	s.waitCommitted(total(counts), 3*time.Minute)
	status := d.statusAt("http://" + httpAddr + "/status")
	d.stop()
	s.check(counts)
	log, _ := os.ReadFile(d.log)
	for _, secret := range []string{fileSecret, envSecret} {
		if strings.Contains(string(log), secret) || strings.Contains(status, secret) {
			t.Fatalf("secret %q printed (log %s, status %s)", secret, d.log, status)
		}
	}
	if !strings.Contains(status, `"from-worker"`) || !d.logContains("not applicable to hdfs-sink, ignored: group.id, offset.storage.topic") {
		t.Fatalf("status %s, or the worker's not-applicable keys not listed", status)
	}
}

// checkCmd runs hdfs-sink check with the worker and connector files.
func (s *setup) checkCmd(worker, conn string, env ...string) (string, error) {
	cmd := exec.Command(binary(s.t), "check", "--worker", worker, "--config", conn)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// startArgs starts hdfs-sink with exactly args (start adds --status-addr).
func (s *setup) startArgs(args []string, env ...string) *daemon {
	s.t.Helper()
	logf, err := os.CreateTemp(s.t.TempDir(), "daemon-*.log")
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(binary(s.t), args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	d := &daemon{t: s.t, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	go func() { d.err = cmd.Wait(); logf.Close(); close(d.done) }()
	s.t.Cleanup(func() {
		d.cmd.Process.Kill()
		<-d.done
		if s.t.Failed() {
			s.t.Logf("daemon log %s (tail):\n%s", d.log, tail(d.log, 40))
		}
	})
	return d
}

// statusAt fetches a status document as text.
func (d *daemon) statusAt(url string) string {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return string(body)
			}
			err = fmt.Errorf("status %d, %v", resp.StatusCode, rerr)
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHANameservice: store.url names an HA nameservice of hadoop.conf.dir;
// its one NameNode is the test NameNode. The same hdfs-site.xml lists a
// second nameservice, whose NameNode (a listener here) must never be
// dialled. Every record is on HDFS exactly once.
func TestHANameservice(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	s.produce(counts, 2000)
	remote, dials := countingListener(t)
	confDir := t.TempDir()
	site := fmt.Sprintf(`<?xml version="1.0"?>
<configuration>
  <property><name>dfs.nameservices</name><value>sinkha,remote</value></property>
  <property><name>dfs.ha.namenodes.sinkha</name><value>nn1</value></property>
  <property><name>dfs.namenode.rpc-address.sinkha.nn1</name><value>%s</value></property>
  <property><name>dfs.ha.namenodes.remote</name><value>r1</value></property>
  <property><name>dfs.namenode.rpc-address.remote.r1</name><value>%s</value></property>
</configuration>
`, itest.NameNodeAddr(), remote)
	if err := os.WriteFile(filepath.Join(confDir, "hdfs-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	conn := s.connector("ha", map[string]string{"hdfs.url": "", "store.url": "hdfs://sinkha" + s.base, "hadoop.conf.dir": confDir})
	cmd := exec.Command(binary(t), "check", "--config", conn)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nameservice sinkha: NameNodes nn1="+itest.NameNodeAddr()) {
		t.Fatalf("check: %v\n%s", err, out)
	}
	d := s.start(conn)
	s.waitCommitted(total(counts), 3*time.Minute)
	d.stop()
	s.check(counts)
	if n := dials.Load(); n != 0 {
		t.Fatalf("the other nameservice's NameNode was dialled %d times", n)
	}
}

// countingListener accepts and drops connections, counting them.
func countingListener(t *testing.T) (string, *atomic.Int64) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}
