package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// defaultProbeBound is how long `check --connect` waits for each service
// (--timeout): a refused connection answers at once, a hung service is
// reported after it.
const defaultProbeBound = 10 * time.Second

// cmdCheckConnect is `hdfs-sink check --connect`, after the usual check:
// for each connector a connection to every service it needs, made through
// the daemon's own wiring (internal/wiring: OpenStore, RegistryFor,
// KafkaOpts, HiveDialOptions) so that it tests the settings the daemon
// would use. Every connector's services are asked at once, each bounded by
// bound, so the answer takes one bound at most however many connectors and
// services are down. Each service is OK or FAILED with the exact error
// (secrets hidden); the exit status is 1 if any failed.
func cmdCheckConnect(ctx context.Context, cf configFlags, bound time.Duration, stdout, stderr io.Writer) int {
	conns, redact, err := loadConnectors(cf)
	if err != nil { // cmdCheck accepted them: only a file changed meanwhile
		fmt.Fprintln(stderr, "hdfs-sink check --connect:", redact.Text(err.Error()))
		return exitUsage
	}
	failed := false
	for _, results := range checkAll(ctx, conns, serviceChecks, bound) {
		for _, r := range results {
			fmt.Fprintln(stdout, redact.Text(r.String()))
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

// serviceCheck is how one service of a connector is checked: run answers
// why the service is not needed, or its error; it is given the probe
// bound, which its own clients' timeouts follow.
type serviceCheck struct {
	service string
	addr    func(*configs.Connector) string
	run     func(ctx context.Context, c *configs.Connector, bound time.Duration) (skip string, err error)
}

// serviceChecks are the services every connector is checked against, in
// the order of the report (tests replace them).
var serviceChecks = []serviceCheck{
	{"Kafka", func(c *configs.Connector) string { return strings.Join(c.Consumer.BootstrapServers, ",") }, checkKafka},
	{"Schema Registry", func(c *configs.Connector) string { return redactedURLs(c.Registry.URLs) }, checkRegistry},
	{"store", func(c *configs.Connector) string { return c.Store.Raw }, checkStore},
	{"Hive Metastore", metastoreAddr, checkMetastore},
}

// checkAll runs every check of every connector at once and returns the
// results by connector, in the order of conns and checks.
func checkAll(ctx context.Context, conns []*configs.Connector, checks []serviceCheck, bound time.Duration) [][]serviceResult {
	out := make([][]serviceResult, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		out[i] = make([]serviceResult, len(checks))
		for j, ch := range checks {
			wg.Go(func() { out[i][j] = checkBounded(ctx, c, ch, bound) })
		}
	}
	wg.Wait()
	return out
}

// checkBounded runs one check with bound as its time limit: one service
// hanging cannot hide the state of the others, nor hold the report. A
// check that has not answered by then is reported as timed out and left to
// end in the background, its clients bounded by bound too.
func checkBounded(ctx context.Context, c *configs.Connector, ch serviceCheck, bound time.Duration) serviceResult {
	r := serviceResult{connector: c.Name, service: ch.service, addr: ch.addr(c)}
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	type answer struct {
		skip string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		skip, err := ch.run(cctx, c, bound)
		done <- answer{skip, err}
	}()
	select {
	case a := <-done:
		r.skipped, r.err = a.skip, a.err
		// The check's clients are bounded by bound too, from after start:
		// an error once bound has passed is theirs running out of time,
		// whichever timer fired first.
		if a.err != nil && ctx.Err() == nil && (cctx.Err() != nil || time.Since(start) >= bound) {
			r.err = fmt.Errorf("timed out after %v: %w", bound, a.err)
		}
	case <-cctx.Done():
		r.err = fmt.Errorf("timed out after %v: no answer", bound)
		if ctx.Err() != nil {
			r.err = fmt.Errorf("interrupted: %w", ctx.Err())
		}
	}
	return r
}

// checkKafka asks the seed brokers for metadata once, as the daemon's
// readiness probe does (a refusal answers at once, where a client would
// retry), then for the cluster's metadata and the connector's topics, and
// checks the topics' committed file names at their highest partition
// number, which only Kafka knows (wiring.CheckPartitionNames).
func checkKafka(ctx context.Context, c *configs.Connector, _ time.Duration) (string, error) {
	kt, err := newKafkaTool(c, toolLogger(io.Discard))
	if err != nil {
		return "", err
	}
	defer kt.close()
	if err := kt.sec.Probe(ctx, c.Consumer.BootstrapServers, kgo.ClientID("hdfs-sink-tool-"+c.Name)); err != nil {
		return "", err
	}
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

// checkRegistry asks for the global compatibility level, as the daemon's
// health check does (no retry: a refusal answers at once), then looks up
// a schema id no registry hands out: "not found" is an answer, so the
// registry is reachable and the credentials work.
func checkRegistry(ctx context.Context, c *configs.Connector, bound time.Duration) (string, error) {
	reg, err := wiring.RegistryWithin(c, toolLogger(io.Discard), bound)
	if err != nil {
		return "", err
	}
	if reg == nil {
		return "schemaless values", nil
	}
	if err := reg.Ping(ctx); err != nil {
		return "", err
	}
	_, err = reg.SchemaByID(ctx, math.MaxInt32)
	if err == nil || errors.Is(err, schema.ErrUnknownSchema) {
		return "", nil
	}
	return "", err
}

// checkStore connects and, in the directories the sink writes, creates,
// renames and removes a probe: the operations a commit needs. Every HDFS
// call is bounded by bound.
func checkStore(ctx context.Context, c *configs.Connector, bound time.Duration) (string, error) {
	return "", storeProbe(ctx, c, bound)
}

func storeProbe(ctx context.Context, c *configs.Connector, bound time.Duration) error {
	logins := kerberos.NewLogins(slog.New(slog.DiscardHandler))
	defer logins.Close()
	store, err := wiring.OpenStoreWithin(c, logins, bound)
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
	temp := wiring.TopicLayout(c, topic).TopicTempDir()
	for _, dir := range []string{path.Join(temp, name), path.Join(wiring.TopicLayout(c, topic).LogsDir, name)} {
		if err := probeDir(ctx, store, dir); err != nil {
			return err
		}
	}
	return nil
}

// probeDir creates dir/probe, renames it and removes dir.
func probeDir(ctx context.Context, store storage.FS, dir string) error {
	f, err := store.Create(ctx, path.Join(dir, "probe"))
	if err != nil {
		return fmt.Errorf("create in %s: %w", path.Dir(dir), err)
	}
	_, werr := f.Write([]byte("hdfs-sink check --connect\n"))
	if err := errors.Join(werr, f.Close()); err != nil {
		store.RemoveAll(ctx, dir)
		return fmt.Errorf("write %s (is a DataNode live?): %w", path.Join(dir, "probe"), err)
	}
	if err := store.Rename(ctx, path.Join(dir, "probe"), path.Join(dir, "renamed")); err != nil {
		store.RemoveAll(ctx, dir)
		return fmt.Errorf("rename in %s: %w", dir, err)
	}
	if err := store.RemoveAll(ctx, dir); err != nil {
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
// hive-site.xml, SASL with a login of the check's own), bounded by bound,
// and asks for the first topic's table: "not found" is an answer too.
func checkMetastore(ctx context.Context, c *configs.Connector, bound time.Duration) (string, error) {
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
	ms, err := hive.Dial(ctx, uris, append(opts, hive.WithDialTimeout(bound), hive.WithCallTimeout(bound))...)
	if err != nil {
		return "", err
	}
	defer ms.Close()
	topic := "hdfs_sink_check"
	if len(c.Topics) > 0 {
		topic = c.Topics[0]
	}
	_, err = ms.GetTable(ctx, c.Hive.Database, c.HiveTable(wiring.RoutedTopic(c, topic)))
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
