// Package demo owns the embedded demo: the whole pipeline in one process,
// with an in-process Kafka (franz-go's kfake), the in-memory schema
// registry and the local-filesystem store, through the same sink code the
// daemon runs, followed by the exactly-once check. Only binaries built
// with the "demo" tag link it (make demo), so the production binary does
// not carry an embedded Kafka.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/format/avro"
	"github.com/hdfs-sink/hdfs-sink/internal/demodata"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/partitioner"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage/local"
)

const demoTopic = "orders"

// Run runs the demo: n records over parts partitions, written below dir
// (a new temporary directory when empty), and the exactly-once check.
func Run(ctx context.Context, n int, parts int32, dir string, out io.Writer, log *slog.Logger) error {
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "hdfs-sink-demo-"); err != nil {
			return err
		}
	}
	dir, _ = filepath.Abs(dir)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(parts, demoTopic))
	if err != nil {
		return fmt.Errorf("embedded kafka: %w", err)
	}
	defer cluster.Close()
	reg := registry.NewMemory()
	fmt.Fprintf(out, "embedded Kafka at %v, topic %q with %d partitions; writing to %s\n", cluster.ListenAddrs(), demoTopic, parts, dir)

	id, err := reg.Register(demodata.Schema)
	if err != nil {
		return err
	}
	perPart, err := demodata.Produce(ctx, cluster.ListenAddrs(), id, demoTopic, parts, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "produced %d Avro records (Confluent wire format)\n", n)

	conn, store, err := connector(cluster.ListenAddrs(), reg, dir, log)
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- conn.Run(runCtx) }()
	opts := verify.Options{TopicsDir: filepath.Join(dir, "topics"), Topic: demoTopic, Want: perPart, SeqField: "seq"}
	err = waitCommitted(ctx, store, opts, int64(n), done)
	stop()
	if runErr := <-done; runErr != nil && err == nil {
		err = runErr
	}
	if err != nil {
		return err
	}
	rep, err := verify.Check(ctx, store, opts)
	printReport(out, dir, rep)
	if err != nil {
		return fmt.Errorf("exactly-once check: %w", err)
	}
	if len(rep.TempFiles) > 0 {
		return fmt.Errorf("temp files left after a graceful stop: %v", rep.TempFiles)
	}
	fmt.Fprintf(out, "exactly-once check: OK — %d records in %d files; every offset of every partition present once, none twice, no temp files left\n", rep.Records, len(rep.Files))
	return nil
}

func connector(brokers []string, reg schema.Registry, dir string, log *slog.Logger) (*sink.Connector, *local.FS, error) {
	f, err := avro.New(avro.Options{Codec: "snappy"})
	if err != nil {
		return nil, nil, err
	}
	store := local.New("/")
	conn, err := sink.New(sink.Config{
		Name: "demo", Brokers: brokers, GroupID: "connect-demo", Topics: []string{demoTopic},
		WriteSettings: sink.WriteSettings{
			FS: store, Format: f, Partitioner: partitioner.Default{},
			TopicsDir: func(string) string { return filepath.Join(dir, "topics") },
			LogsDir:   func(string) string { return filepath.Join(dir, "logs") },
			Pad:       10, FlushSize: 1000, RotateInterval: 2 * time.Second,
		},
		Registry: reg, RetryBackoff: time.Second, Logger: log,
		TickInterval: 200 * time.Millisecond,
		KafkaOpts:    []kgo.Opt{kgo.FetchMaxWait(200 * time.Millisecond)},
	})
	return conn, store, err
}

// waitCommitted waits until the committed files hold n records.
func waitCommitted(ctx context.Context, store *local.FS, o verify.Options, n int64, done <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if rep, _ := verify.Check(ctx, store, o); rep.Records >= n {
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("connector stopped early: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("not all %d records committed after 2 minutes", n)
}

func printReport(out io.Writer, dir string, rep verify.Report) {
	fmt.Fprintln(out, "committed files:")
	for _, f := range rep.Files {
		rel, _ := filepath.Rel(dir, f.Path)
		fmt.Fprintf(out, "  %-60s %6d records\n", rel, f.Records)
	}
}
