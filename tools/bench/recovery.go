package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// recoveryCase is the daemon's restart after SIGKILL with Partitions assigned.
type recoveryCase struct {
	Partitions        int     `json:"partitions"`
	Static            bool    `json:"static_membership"` // consumer.override.group.instance.id set
	CommitsBeforeKill int     `json:"commits_before_kill"`
	AssignedSec       float64 `json:"start_to_assigned_seconds"`
	FirstCommitSec    float64 `json:"start_to_first_commit_seconds"`
	FlushSize         int     `json:"flush_size"`
}

// runRecovery builds the daemon and, for each partition count, runs it on a
// backlog, kills it with SIGKILL mid-way, restarts it and times the restart
// to its first "files committed" log line.
func (e *env) runRecovery(o options) ([]recoveryCase, error) {
	tmp, err := os.MkdirTemp("", "hdfs-sink-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "hdfs-sink")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/hdfs-sink").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build daemon: %v: %s", err, out)
	}
	var out []recoveryCase
	for _, parts := range o.recovParts {
		topic, perPart := e.memTopic, o.memRecords
		if parts != o.memParts || topic == "" {
			perPart = max(200, 100_000/parts)
			fmt.Fprintf(os.Stderr, "bench: recovery %dp: producing %d records\n", parts, perPart*parts)
			if topic, _, err = e.topic("1KB", parts, perPart*parts); err != nil {
				return out, err
			}
		}
		for _, static := range []bool{false, true} {
			dir := e.dir(fmt.Sprintf("recovery-%d-static-%v", parts, static))
			rc, err := recoverOnce(bin, tmp, dir, topic, parts, max(10, perPart/10), static)
			if err != nil {
				return out, fmt.Errorf("%d partitions (static membership %v): %w", parts, static, err)
			}
			fmt.Fprintf(os.Stderr, "bench: recovery %dp static=%v: first commit %.2f s after restart\n", parts, static, rc.FirstCommitSec)
			out = append(out, rc)
		}
	}
	return out, nil
}

func recoverOnce(bin, tmp, hdfsDir, topic string, parts, flush int, static bool) (recoveryCase, error) {
	rc := recoveryCase{Partitions: parts, FlushSize: flush, Static: static}
	cfgPath := filepath.Join(tmp, fmt.Sprintf("%s-%v.json", topic, static))
	if err := writeConnector(cfgPath, hdfsDir, topic, flush, static); err != nil {
		return rc, err
	}
	logA := filepath.Join(tmp, fmt.Sprintf("%s-%v-1.log", topic, static))
	first, err := startDaemon(bin, cfgPath, logA)
	if err != nil {
		return rc, err
	}
	_, err = waitLog(logA, "files committed", min(parts, 20), 3*time.Minute)
	time.Sleep(2 * time.Second) // let more partitions get open, uncommitted files
	_ = first.Process.Kill()    // SIGKILL
	_ = first.Wait()
	if err != nil {
		return rc, fmt.Errorf("first run: %w (log %s)", err, tail(logA))
	}
	rc.CommitsBeforeKill = countLog(logA, "files committed")
	logB := filepath.Join(tmp, fmt.Sprintf("%s-%v-2.log", topic, static))
	start := time.Now()
	second, err := startDaemon(bin, cfgPath, logB)
	if err != nil {
		return rc, err
	}
	defer func() { _ = second.Process.Kill(); _ = second.Wait() }()
	if t, err := waitLog(logB, "partitions assigned", 1, 3*time.Minute); err == nil {
		rc.AssignedSec = t.Sub(start).Seconds()
	}
	t, err := waitLog(logB, "files committed", 1, 3*time.Minute)
	if err != nil {
		return rc, fmt.Errorf("after restart: %w (log %s)", err, tail(logB))
	}
	rc.FirstCommitSec = t.Sub(start).Seconds()
	return rc, nil
}

// writeConnector writes the connector file; with static set it has its own
// group (a killed member of the other variant must not linger in it) and
// a group.instance.id.
func writeConnector(path, hdfsDir, topic string, flush int, static bool) error {
	name := "bench-" + topic
	if static {
		name += "-static"
	}
	cfg := map[string]string{
		"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "topics": topic,
		"hdfs.url": itest.HDFSURI() + hdfsDir, "topics.dir": "topics", "logs.dir": "logs",
		"flush.size": fmt.Sprint(flush), "rotate.interval.ms": "600000",
		"format.class": "io.confluent.connect.hdfs.avro.AvroFormat", "avro.codec": "snappy",
		"hive.integration": "false", "value.converter": "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url": itest.RegistryURL(),
		"consumer.override.bootstrap.servers": itest.KafkaAddr(), "consumer.override.auto.offset.reset": "earliest",
	}
	if static {
		cfg["consumer.override.group.instance.id"] = name + "-1"
	}
	b, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func startDaemon(bin, cfg, logPath string) (*exec.Cmd, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--config", cfg)
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Start()
	f.Close() // the daemon holds its own descriptor
	if err != nil {
		return nil, fmt.Errorf("start daemon: %w", err)
	}
	return cmd, nil
}

// waitLog polls the log until it holds n lines containing msg and returns
// when the n-th was seen (50 ms resolution).
func waitLog(path, msg string, n int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if countLog(path, msg) >= n {
			return time.Now(), nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("no %d×%q in %s after %v", n, msg, path, limit)
}

func countLog(path, msg string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte(msg))
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}
