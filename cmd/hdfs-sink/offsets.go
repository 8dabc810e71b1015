package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/sink"
)

// cmdOffsets is `hdfs-sink offsets reset`: make one partition resume at an
// offset, through a fenced WAL claim (sink.ResetOffset).
func cmdOffsets(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "reset" {
		fmt.Fprintln(stderr, "hdfs-sink offsets: want `offsets reset --config … --connector … --topic … --partition … --to …`")
		return 2
	}
	r, err := parseReset(args[1:], stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink offsets reset:", err)
		return 2
	}
	if err := r.run(ctx, stderr); err != nil {
		fmt.Fprintln(stderr, "hdfs-sink offsets reset:", err)
		return 1
	}
	fmt.Fprintf(stdout, "ok: connector %q topic %s partition %d resumes at offset %d\n", r.connector, r.topic, r.partition, r.to)
	return 0
}

type resetArgs struct {
	config, connector, topic string
	partition                int
	to                       int64
}

func parseReset(args []string, stderr io.Writer) (resetArgs, error) {
	var r resetArgs
	fs := flag.NewFlagSet("offsets reset", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&r.config, "config", "", "connector file or directory")
	fs.StringVar(&r.connector, "connector", "", "connector name (may be left out when the config holds one connector)")
	fs.StringVar(&r.topic, "topic", "", "topic")
	fs.IntVar(&r.partition, "partition", -1, "Kafka partition")
	fs.Int64Var(&r.to, "to", -1, "the offset to resume at")
	if err := fs.Parse(args); err != nil {
		return r, err
	}
	if r.config == "" || r.topic == "" || r.partition < 0 || r.to < 0 {
		return r, errors.New("--config, --topic, --partition and --to are required")
	}
	return r, nil
}

func (r resetArgs) run(ctx context.Context, stderr io.Writer) error {
	conns, _, err := configs.LoadPath(r.config)
	if err != nil {
		return err
	}
	c, err := pickConnector(conns, r.connector)
	if err != nil {
		return err
	}
	lf := logFlags{level: "info", format: "text"}
	log, _ := lf.logger(stderr)
	logins := kerberos.NewLogins(log)
	defer logins.Close()
	store, err := openStore(c, logins)
	if err != nil {
		return err
	}
	defer store.Close()
	s := sink.WriteSettings{FS: store, TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Now: time.Now}
	return sink.ResetOffset(ctx, s, r.topic, int32(r.partition), r.to, log.With("connector", c.Name))
}

// pickConnector is the named connector, or the only one.
func pickConnector(conns []*configs.Connector, name string) (*configs.Connector, error) {
	for _, c := range conns {
		if c.Name == name || (name == "" && len(conns) == 1) {
			return c, nil
		}
	}
	if name == "" {
		return nil, fmt.Errorf("the config holds %d connectors: name one with --connector", len(conns))
	}
	return nil, fmt.Errorf("no connector %q in the config", name)
}
