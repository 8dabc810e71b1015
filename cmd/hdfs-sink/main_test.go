package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCheckReportsBadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"name":"orders","config":{"topics":"orders","hdfs.url":"hdfs://nn:8020","flush.size":"ten","bootstrap.servers":"k:9092","value.converter":"io.confluent.connect.avro.AvroConverter","value.converter.schema.registry.url":"http://sr:8081"}}`), 0o644)
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"check", "--config", bad}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for _, want := range []string{`connector "orders"`, "flush.size", `"ten"`} {
		if !strings.Contains(errOut.String(), want) {
			t.Fatalf("error output %q lacks %q", errOut.String(), want)
		}
	}
}

func TestRunRefusesBadWiringBeforeConsuming(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "de.json")
	// German month names are not built in: the partitioner refuses the
	// locale, and the daemon must say so before it connects to anything.
	os.WriteFile(f, []byte(`{"name":"de","config":{"topics":"t","store.url":"file://`+dir+`/data","flush.size":"10",
		"partitioner.class":"io.confluent.connect.storage.partitioner.TimeBasedPartitioner","path.format":"'month'=MMMM",
		"partition.duration.ms":"3600000","locale":"de-DE","timezone":"UTC",
		"bootstrap.servers":"127.0.0.1:1","value.converter":"io.confluent.connect.avro.AvroConverter","value.converter.schema.registry.url":"http://127.0.0.1:1"}}`), 0o644)
	var out, errOut bytes.Buffer
	code := dispatch([]string{"run", "--config", f, "--status-addr", ""}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "partitioner") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
	errOut.Reset()
	if code := dispatch([]string{"check", "--config", f}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "partitioner") {
		t.Fatalf("check: exit %d, stderr:\n%s", code, errOut.String())
	}
}

// TestCheckRefusesTopicsTooLongToWrite (F7): a listed topic whose committed
// file names can exceed the store's 255-byte limit is a check error.
func TestCheckRefusesTopicsTooLongToWrite(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "long.json")
	topic := strings.Repeat("t", 230)
	os.WriteFile(f, []byte(`{"name":"long","config":{"topics":"ok,`+topic+`","store.url":"file://`+dir+`/data","flush.size":"10",
		"bootstrap.servers":"127.0.0.1:1","value.converter":"io.confluent.connect.avro.AvroConverter","value.converter.schema.registry.url":"http://127.0.0.1:1"}}`), 0o644)
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"check", "--config", f}, &out, &errOut); code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, errOut.String())
	}
	want := `connector "long" (` + f + `): topics: topic "` + topic + `" partition 0: committed file names would be 259 bytes with offsets of 10 digits (filename.offset.zero.pad.width), more than the 255 the store allows in one name; topics of at most 226 characters can be written as partition 0 with this format`
	if strings.TrimSpace(errOut.String()) != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", errOut.String(), want)
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"frobnicate"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "frobnicate") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
}

// TestSignalsEndTheContextNamingThem: SIGTERM and SIGINT end the commands'
// context with a cause that names the signal, which `run` logs as the
// reason its graceful shutdown starts.
func TestSignalsEndTheContextNamingThem(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		ctx, stop := signalContext(context.Background())
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("%v did not end the context", sig)
		}
		want := map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM received", syscall.SIGINT: "SIGINT received"}[sig]
		if got := context.Cause(ctx).Error(); got != want {
			t.Errorf("cause %q, want %q", got, want)
		}
		stop()
	}
}
