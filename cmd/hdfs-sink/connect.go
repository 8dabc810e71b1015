package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// wantsConnect reports whether `check` was asked to connect (--connect).
func wantsConnect(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == "--connect" || a == "-connect" })
}

// cmdCheckConnect is `hdfs-sink check --connect`: the usual check, then
// for each connector a connection to every service it needs, made through
// the daemon's own wiring (internal/wiring: OpenStore, RegistryFor,
// KafkaOpts, HiveDialOptions) so that it tests the settings the daemon
// would use. Each service is OK or
// FAILED with the exact error; the exit status is 1 if any failed.
func cmdCheckConnect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	rest := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--connect" || a == "-connect" })
	fs := flag.NewFlagSet("check --connect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf configFlags
	cf.register(fs)
	timeout := fs.Duration("timeout", 15*time.Second, "how long each service may take to answer")
	if err := fs.Parse(rest); err != nil {
		return exitUsage
	}
	if code := cmdCheck([]string{"--config", cf.Config, "--worker", cf.Worker}, stdout, stderr); code != 0 {
		return code
	}
	conns, redact, err := loadConnectors(cf)
	if err != nil { // cmdCheck accepted them: only a file changed meanwhile
		fmt.Fprintln(stderr, "hdfs-sink check --connect:", redact.Text(err.Error()))
		return exitUsage
	}
	failed := false
	for _, c := range conns {
		for _, r := range connectChecks(ctx, c, *timeout) {
			fmt.Fprintln(stdout, r)
			failed = failed || r.err != nil
		}
	}
	if failed {
		return exitFinding
	}
	return exitOK
}

// serviceResult is one line of the report.
type serviceResult struct {
	connector, service, addr string
	err                      error
	skipped                  string // why the service is not needed
}

func (r serviceResult) String() string {
	head := fmt.Sprintf("connector %q: %s %s: ", r.connector, r.service, r.addr)
	switch {
	case r.skipped != "":
		return head + "not used (" + r.skipped + ")"
	case r.err != nil:
		return head + "FAILED: " + r.err.Error()
	}
	return head + "OK"
}

// connectChecks runs each service's check with its own time limit, so one
// service hanging cannot hide the state of the others.
func connectChecks(ctx context.Context, c *configs.Connector, timeout time.Duration) []serviceResult {
	checks := []struct {
		service, addr string
		run           func(context.Context, *configs.Connector) (skip string, err error)
	}{
		{"Kafka", strings.Join(c.Consumer.BootstrapServers, ","), checkKafka},
		{"Schema Registry", redactedURLs(c.Registry.URLs), checkRegistry},
		{"store", c.Store.Raw, checkStore},
		{"Hive Metastore", metastoreAddr(c), checkMetastore},
	}
	var out []serviceResult
	for _, ch := range checks {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		skip, err := ch.run(cctx, c)
		cancel()
		out = append(out, serviceResult{connector: c.Name, service: ch.service, addr: ch.addr, err: err, skipped: skip})
	}
	return out
}

// checkKafka asks for the cluster's metadata and the connector's topics,
// and checks the topics' committed file names at their highest partition
// number, which only Kafka knows (wiring.CheckPartitionNames).
func checkKafka(ctx context.Context, c *configs.Connector) (string, error) {
	kt, err := newKafkaTool(c, toolLogger(io.Discard))
	if err != nil {
		return "", err
	}
	defer kt.close()
	md, err := kt.adm.BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("metadata: %w", err)
	}
	if len(md.Brokers) == 0 {
		return "", errors.New("metadata lists no broker")
	}
	key, highest, err := highestPartitions(ctx, kt.adm, c)
	if err != nil {
		return "", err
	}
	f, err := wiring.OutputFormat(c)
	if err != nil {
		return "", err
	}
	return "", wiring.CheckPartitionNames(c, key, f.Extension(), highest)
}

// highestPartitions is the highest partition number of each of the
// connector's topics: the listed ones, each of which must exist, or those
// topics.regex matches. key is the setting that names them.
func highestPartitions(ctx context.Context, adm *kadm.Client, c *configs.Connector) (key string, highest map[string]int32, err error) {
	key, listed := "topics", kadm.TopicDetails{}
	if c.TopicsRegex != nil {
		key = "topics.regex"
		listed, err = adm.ListTopics(ctx)
	} else {
		listed, err = adm.ListTopics(ctx, c.Topics...)
	}
	if err != nil {
		return "", nil, fmt.Errorf("list topics: %w", err)
	}
	for _, t := range c.Topics {
		if d, ok := listed[t]; !ok || d.Err != nil {
			return "", nil, fmt.Errorf("topic %q: %v", t, topicErr(d.Err))
		}
	}
	highest = map[string]int32{}
	for t, d := range listed {
		if d.Err != nil || (c.TopicsRegex != nil && !c.TopicsRegex.MatchString(t)) || len(d.Partitions) == 0 {
			continue
		}
		highest[t] = slices.Max(d.Partitions.Numbers())
	}
	return key, highest, nil
}

func topicErr(err error) error {
	if err == nil {
		return errors.New("not in the cluster's metadata")
	}
	return err
}

// checkRegistry looks up a schema id no registry hands out: "not found"
// is an answer, so the registry is reachable and the credentials work.
func checkRegistry(ctx context.Context, c *configs.Connector) (string, error) {
	reg, err := wiring.RegistryFor(c, toolLogger(io.Discard))
	if err != nil {
		return "", err
	}
	if reg == nil {
		return "schemaless values", nil
	}
	_, err = reg.SchemaByID(ctx, math.MaxInt32)
	if err == nil || errors.Is(err, schema.ErrUnknownSchema) {
		return "", nil
	}
	return "", err
}

// checkStore connects and, in the directories the sink writes, creates,
// renames and removes a probe: the operations a commit needs.
func checkStore(ctx context.Context, c *configs.Connector) (string, error) {
	done := make(chan error, 1)
	go func() { done <- storeProbe(c) }()
	select {
	case err := <-done:
		return "", err
	case <-ctx.Done():
		return "", fmt.Errorf("no answer: %w", ctx.Err())
	}
}

func storeProbe(c *configs.Connector) error {
	store, err := openToolStore(c)
	if err != nil {
		return err
	}
	defer store.Close()
	topic := "hdfs-sink-check"
	if len(c.Topics) > 0 {
		topic = c.Topics[0]
	}
	var id [6]byte
	rand.Read(id[:])
	name := ".check-" + hex.EncodeToString(id[:])
	temp := layout.Topic{TopicsDir: c.TopicsDir(topic), Name: topic}.TopicTempDir()
	for _, dir := range []string{path.Join(temp, name), path.Join(c.LogsDir(topic), name)} {
		if err := probeDir(store, dir); err != nil {
			return err
		}
	}
	return nil
}

// probeDir creates dir/probe, renames it and removes dir.
func probeDir(store storage.FS, dir string) error {
	f, err := store.Create(path.Join(dir, "probe"))
	if err != nil {
		return fmt.Errorf("create in %s: %w", path.Dir(dir), err)
	}
	_, werr := f.Write([]byte("hdfs-sink check --connect\n"))
	if err := errors.Join(werr, f.Close()); err != nil {
		store.RemoveAll(dir)
		return fmt.Errorf("write %s (is a DataNode live?): %w", path.Join(dir, "probe"), err)
	}
	if err := store.Rename(path.Join(dir, "probe"), path.Join(dir, "renamed")); err != nil {
		store.RemoveAll(dir)
		return fmt.Errorf("rename in %s: %w", dir, err)
	}
	if err := store.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// metastoreAddr is where the metastore is looked for: the connector's URIs,
// else hive-site.xml's.
func metastoreAddr(c *configs.Connector) string {
	if uris, err := wiring.MetastoreURIs(c); err == nil {
		return uris
	}
	return strings.Join(c.Hive.MetastoreURIs, ",")
}

// checkMetastore dials as the daemon does (the URIs of the connector or of
// hive-site.xml, its timeout, SASL with a login of the check's own) and
// asks for the first topic's table: "not found" is an answer too.
func checkMetastore(ctx context.Context, c *configs.Connector) (string, error) {
	if !c.Hive.Enabled {
		return "hive.integration=false", nil
	}
	uris, err := wiring.MetastoreURIs(c)
	if err != nil {
		return "", err
	}
	logins := kerberos.NewLogins(slog.New(slog.DiscardHandler))
	defer logins.Close()
	opts, err := wiring.HiveDialOptions(c, logins)
	if err != nil {
		return "", err
	}
	ms, err := hive.Dial(ctx, uris, opts...)
	if err != nil {
		return "", err
	}
	defer ms.Close()
	topic := "hdfs_sink_check"
	if len(c.Topics) > 0 {
		topic = c.Topics[0]
	}
	_, err = ms.GetTable(ctx, c.Hive.Database, c.HiveTable(topic))
	if err == nil || errors.Is(err, hive.ErrNotFound) {
		return "", nil
	}
	return "", err
}

// redactedURLs hides passwords in user-info URLs.
func redactedURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, raw := range urls {
		out[i] = raw
		if u, err := url.Parse(raw); err == nil {
			out[i] = u.Redacted()
		}
	}
	return strings.Join(out, ",")
}
