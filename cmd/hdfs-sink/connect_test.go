package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// serviceConnector writes a connector whose four services (Kafka, the
// registry, an HDFS store, the metastore) are all at addr.
func serviceConnector(t *testing.T, addr string) string {
	cfg := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(cfg, []byte(`{"name":"c","config":{"topics":"t","store.url":"hdfs://`+addr+`/data","flush.size":"10",
		"bootstrap.servers":"`+addr+`","value.converter":"io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":"http://`+addr+`","hive.integration":"true","hive.metastore.uris":"thrift://`+addr+`","schema.compatibility":"BACKWARD"}}`), 0o644)
	return cfg
}

// stalledListener accepts connections and never answers on them.
func stalledListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// serviceLines are the report's lines of each service, by service name.
func serviceLines(out string) map[string]string {
	lines := map[string]string{}
	for line := range strings.Lines(out) {
		for _, s := range []string{"Kafka", "Schema Registry", "store", "Hive Metastore"} {
			if strings.HasPrefix(line, `connector "c": `+s+" ") {
				lines[s] = strings.TrimSpace(line)
			}
		}
	}
	return lines
}

// TestCheckConnectBoundsAHang: services that accept connections and never
// answer are each reported as timed out after --timeout, not waited for.
func TestCheckConnectBoundsAHang(t *testing.T) {
	cfg := serviceConnector(t, stalledListener(t))
	code, out, stderr := runTool("check", "--connect", "--config", cfg, "--timeout", "300ms")
	if code != exitFinding {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	lines := serviceLines(out)
	for _, s := range []string{"Kafka", "Schema Registry", "store", "Hive Metastore"} {
		if !strings.Contains(lines[s], ": FAILED: timed out after 300ms") {
			t.Errorf("%s: %q, want FAILED: timed out after 300ms\n%s", s, lines[s], out)
		}
	}
}

// TestCheckConnectRefusalAnswersAtOnce: a service that refuses connections
// is reported with the refusal, not retried until the bound: with a bound
// of 20 s, no line says it timed out or ran out of time.
func TestCheckConnectRefusalAnswersAtOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := serviceConnector(t, addr)
	code, out, stderr := runTool("check", "--connect", "--config", cfg, "--timeout", "20s")
	if code != exitFinding {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	lines := serviceLines(out)
	for _, s := range []string{"Kafka", "Schema Registry", "store", "Hive Metastore"} {
		if l := lines[s]; !strings.Contains(l, "FAILED: ") || !strings.Contains(l, "connection refused") ||
			strings.Contains(l, "timed out") || strings.Contains(l, "deadline exceeded") {
			t.Errorf("%s: %q, want FAILED with the refusal\n%s", s, l, out)
		}
	}
}

// TestCheckConnectAsksAllAtOnce: every service of every connector is asked
// at once. Each check here answers only once all of them have started, so
// checks asked one after another would each time out instead.
func TestCheckConnectAsksAllAtOnce(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b"} {
		os.WriteFile(filepath.Join(dir, name+".json"), []byte(`{"name":"`+name+`","config":{"topics":"`+name+`","store.url":"file://`+dir+`/data",
			"flush.size":"10","bootstrap.servers":"127.0.0.1:1","value.converter":"io.confluent.connect.avro.AvroConverter",
			"value.converter.schema.registry.url":"http://127.0.0.1:1","schema.compatibility":"BACKWARD"}}`), 0o644)
	}
	var started sync.WaitGroup
	started.Add(4)
	waitForAll := func(ctx context.Context, _ *configs.Connector, _ time.Duration) (string, error) {
		started.Done()
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		select {
		case <-all:
			return "", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	saved := serviceChecks
	t.Cleanup(func() { serviceChecks = saved })
	name := func(*configs.Connector) string { return "here" }
	serviceChecks = []serviceCheck{{"one", name, waitForAll}, {"two", name, waitForAll}}
	code, out, stderr := runTool("check", "--connect", "--config", dir, "--timeout", "5s")
	want := "connector \"a\": one here: OK\nconnector \"a\": two here: OK\nconnector \"b\": one here: OK\nconnector \"b\": two here: OK\n"
	if code != exitOK || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d, want 0 and, in this order:\n%s\ngot:\n%s%s", code, want, out, stderr)
	}
}

// TestCheckHelpListsConnect: `check -h` shows --connect and its bound.
func TestCheckHelpListsConnect(t *testing.T) {
	_, _, stderr := runTool("check", "-h")
	for _, want := range []string{"-connect", "-timeout duration", fmt.Sprintf("(default %v)", defaultProbeBound)} {
		if !strings.Contains(stderr, want) {
			t.Errorf("check -h lacks %q:\n%s", want, stderr)
		}
	}
	if defaultProbeBound != 10*time.Second {
		t.Errorf("the default bound is %v; the issue asks a hang to be reported within 10 s", defaultProbeBound)
	}
}

// TestCheckConnectAndOfflineExclude: --connect reaches the services from
// this host, --offline reads nothing of it: both at once is a usage error.
func TestCheckConnectAndOfflineExclude(t *testing.T) {
	cfg, _ := toolConnector(t)
	code, _, stderr := runTool("check", "--connect", "--offline", "--config", cfg)
	if code != exitUsage || !strings.Contains(stderr, "--connect and --offline exclude each other") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
