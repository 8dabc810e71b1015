package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// RecoveredSec is restart → every partition recovered (its "start
	// position from HDFS" or "nothing committed" line); 0: not seen.
	RecoveredSec float64 `json:"start_to_all_recovered_seconds,omitempty"`
	Topics       int     `json:"topics,omitempty"`
	FlushSize    int     `json:"flush_size"`
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
		topics, perPart, ceiling := e.memTopics, o.memRecords, int64(0)
		if parts != o.memParts || len(topics) == 0 {
			perPart = max(200, 100_000/parts)
			fmt.Fprintf(os.Stderr, "bench: recovery %dp: producing %d records\n", parts, perPart*parts)
			topic, _, err := e.topic("1KB", parts, perPart*parts)
			if err != nil {
				return out, err
			}
			topics = []string{topic}
		} else {
			ceiling = o.memMemoryMax // the memory case's topics: its ceiling too
		}
		for _, static := range o.recovMembership {
			dir := e.dir(fmt.Sprintf("recovery-%d-static-%v", parts, static))
			rc, err := recoverOnce(bin, tmp, dir, topics, parts, max(10, perPart/10), static, ceiling)
			if err != nil {
				return out, fmt.Errorf("%d partitions (static membership %v): %w", parts, static, err)
			}
			fmt.Fprintf(os.Stderr, "bench: recovery %dp static=%v: first commit %.2f s after restart\n", parts, static, rc.FirstCommitSec)
			out = append(out, rc)
		}
	}
	return out, nil
}

func recoverOnce(bin, tmp, hdfsDir string, topics []string, parts, flush int, static bool, ceiling int64) (recoveryCase, error) {
	rc := recoveryCase{Partitions: parts, FlushSize: flush, Static: static, Topics: len(topics)}
	topic := topics[0]
	cfgPath := filepath.Join(tmp, fmt.Sprintf("%s-%v.json", topic, static))
	if err := writeConnector(cfgPath, hdfsDir, topics, flush, static, ceiling); err != nil {
		return rc, err
	}
	logA := filepath.Join(tmp, fmt.Sprintf("%s-%v-1.log", topic, static))
	first, err := startDaemon(bin, cfgPath, logA)
	if err != nil {
		return rc, err
	}
	limit := waitLimit(parts)
	_, err = waitLog(logA, "files committed", min(parts, 20), limit)
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
	if t, err := waitLog(logB, "partitions assigned", 1, limit); err == nil {
		rc.AssignedSec = t.Sub(start).Seconds()
	}
	t, err := waitLog(logB, "files committed", 1, limit)
	if err != nil {
		return rc, fmt.Errorf("after restart: %w (log %s)", err, tail(logB))
	}
	rc.FirstCommitSec = t.Sub(start).Seconds()
	if t, err := waitRecovered(logB, parts, limit); err == nil {
		rc.RecoveredSec = t.Sub(start).Seconds()
	} else {
		fmt.Fprintf(os.Stderr, "bench: recovery %dp: %v\n", parts, err)
	}
	return rc, nil
}

// waitLimit is how long a recovery step may take with parts partitions:
// 3 minutes, or 30 ms a partition (10,000: 5 minutes).
func waitLimit(parts int) time.Duration {
	return max(3*time.Minute, time.Duration(parts)*30*time.Millisecond)
}

// recoveredLines are the daemon's log lines for a partition whose recovery
// returned where to start (sink.Connector.startOffset).
var recoveredLines = []string{"start position from HDFS", "nothing committed in HDFS for this partition"}

// waitRecovered polls the log until parts partitions logged their start.
func waitRecovered(path string, parts int, limit time.Duration) (time.Time, error) {
	deadline := time.Now().Add(limit)
	n := 0
	for time.Now().Before(deadline) {
		n = 0
		for _, msg := range recoveredLines {
			n += countLog(path, msg)
		}
		if n >= parts {
			return time.Now(), nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("%d of %d partitions recovered in %s after %v", n, parts, path, limit)
}

// writeConnector writes the connector file; with static set it has its own
// group (a killed member of the other variant must not linger in it) and
// a group.instance.id.
func writeConnector(path, hdfsDir string, topics []string, flush int, static bool, ceiling int64) error {
	name := "bench-" + topics[0]
	if static {
		name += "-static"
	}
	cfg := map[string]string{
		"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "topics": strings.Join(topics, ","),
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
	if ceiling > 0 {
		cfg["hdfs.sink.memory.max.bytes"] = fmt.Sprint(ceiling)
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
