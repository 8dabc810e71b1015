//go:build integration

package exactlyonce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// TestControlPlaneSecurity (issue 22): a Connect worker file whose
// listeners=http://0.0.0.0:<port> opens the REST API to every interface
// makes the daemon refuse to start (exit 2, saying where the address came
// from and the ways out) and check fail. With a basic-auth file it serves:
// unauthenticated PUT and POST get 401, a cross-origin POST gets 403. The
// connector's Kafka password is a ${file:} reference; a GET -> edit -> PUT
// of its config leaves the reference on disk, the connector
// authenticates with it again after the restart the PUT causes, and every
// record is committed exactly once.
func TestControlPlaneSecurity(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	s.produce(counts, 1000)
	secrets := s.writeLocalFile("kafka.properties", "jaas="+
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="`+itest.SASLUser+`" password="`+itest.SASLPassword+`";`+"\n")
	ref := "${file:" + secrets + ":jaas}"
	_, port, _ := net.SplitHostPort(freeAddr(t))
	worker := s.writeLocalFile("connect-distributed.properties", fmt.Sprintf(`bootstrap.servers=%s
group.id=connect-cluster
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=%s
config.providers=file
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
listeners=http://0.0.0.0:%s
`, itest.KafkaSASLPlaintextAddr, itest.RegistryURL(), port))
	dir := t.TempDir() // a writable config directory: PUT may change it
	conn := s.bareConnector("secure", map[string]string{"consumer.override.security.protocol": "SASL_PLAINTEXT",
		"consumer.override.sasl.mechanism": "PLAIN", "consumer.override.sasl.jaas.config": ref})
	file := filepath.Join(dir, "secure.json")
	if err := os.Rename(conn, file); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--worker", worker, "--config", dir, "--watch-interval", "0"}

	// 1. No authentication: refused, by run and by check.
	want := "the REST API would listen on 0.0.0.0:" + port + " (from listeners in worker file " + worker + "), which other hosts can reach, without authentication"
	d := s.startArgs(args)
	err, exited := d.wait(30 * time.Second)
	var exit *exec.ExitError
	if !exited || !errors.As(err, &exit) || exit.ExitCode() != 2 || !d.logContains(want) || !d.logContains("--rest-basic-auth-file FILE") {
		t.Fatalf("run with an open listener: exited %v (%v), want exit 2 with %q\n%s", exited, err, want, tail(d.log, 10))
	}
	if out, err := s.checkCmd(worker, dir); err == nil || !strings.Contains(out, want) {
		t.Fatalf("check with an open listener: %v\n%s", err, out)
	}

	// 2. With a basic-auth file it serves; the connector consumes.
	users := s.writeLocalFile("users", "ops:ops-pw\n")
	d = s.startArgs(append(args, "--rest-basic-auth-file", users))
	s.waitCommitted(total(counts), 3*time.Minute)
	api := "http://127.0.0.1:" + port
	for _, tt := range []struct {
		name, method, path, origin, body string
		auth                             bool
		want                             int
	}{
		{"unauthenticated PUT", "PUT", "/connectors/secure/pause", "", "", false, 401},
		{"unauthenticated PUT config", "PUT", "/connectors/secure/config", "", `{"topics":"x"}`, false, 401},
		{"unauthenticated POST", "POST", "/connectors/secure/restart", "", "", false, 401},
		{"unauthenticated POST /connectors", "POST", "/connectors", "", `{"name":"x","config":{}}`, false, 401},
		{"cross-origin POST", "POST", "/connectors/secure/restart", "http://evil.example", "", true, 403},
		{"authenticated GET", "GET", "/connectors/secure/status", "", "", true, 200},
		{"probe without credentials", "GET", "/readyz", "", "", false, 200},
	} {
		if code, body := httpCall(t, tt.method, api+tt.path, tt.origin, tt.body, tt.auth); code != tt.want {
			t.Fatalf("%s: %s %s: %d %s, want %d", tt.name, tt.method, tt.path, code, body, tt.want)
		}
	}

	// 3. GET -> edit -> PUT: the reference stays, the connector works.
	code, body := httpCall(t, "GET", api+"/connectors/secure/config", "", "", true)
	var cfg map[string]string
	if err := json.Unmarshal([]byte(body), &cfg); code != 200 || err != nil || cfg["consumer.override.sasl.jaas.config"] != ref {
		t.Fatalf("GET config: %d %s (%v); want the reference %s as written", code, body, err, ref)
	}
	if strings.Contains(body, itest.SASLPassword) {
		t.Fatalf("GET config shows the password: %s", body)
	}
	cfg["flush.size"] = "300"
	edited, _ := json.Marshal(cfg)
	if code, body := httpCall(t, "PUT", api+"/connectors/secure/config", "", string(edited), true); code != 200 {
		t.Fatalf("PUT the edited config back: %d %s", code, body)
	}
	disk, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(disk), ref) || strings.Contains(string(disk), "[hidden]") || !strings.Contains(string(disk), `"flush.size": "300"`) {
		t.Fatalf("the connector file after GET -> edit -> PUT (%v):\n%s", err, disk)
	}
	until(t, "the connector restarted with flush.size=300 and running", time.Minute, func() bool {
		_, b := httpCall(t, "GET", api+"/connectors/secure/config", "", "", true)
		_, st := httpCall(t, "GET", api+"/connectors/secure/status", "", "", true)
		return strings.Contains(b, `"flush.size":"300"`) && strings.Contains(st, `"state":"RUNNING"`)
	})
	s.produce(counts, 1000)
	s.waitCommitted(total(counts), 3*time.Minute)
	d.stop()
	s.check(counts)
	if d.logContains(itest.SASLPassword) {
		t.Fatalf("the daemon logged the password")
	}
}

// httpCall sends one request as an operator's client would (JSON body,
// basic credentials when auth), with an Origin when origin is set.
func httpCall(t *testing.T, method, url, origin, body string, auth bool) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if auth {
		req.SetBasicAuth("ops", "ops-pw")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
