package wiring

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// KafkaAdmin is a client of one connector's cluster that joins no group,
// so it never disturbs the connector's consumer group: what the operator
// tools and the REST API's offsets routes ask Kafka (the connector's
// topics, log ranges, offsets by time, the cluster id). It is built from
// the same KafkaOpts the daemon's consumer uses: every consumer.override.*
// and security setting the daemon honours, it does.
type KafkaAdmin struct {
	c      *configs.Connector
	sec    *kafkaclient.Security
	cl     *kgo.Client
	adm    *kadm.Client
	logins *kerberos.Logins // its own, closed with it; nil: the caller's
}

// NewKafkaAdmin is a KafkaAdmin of connector c named clientID. logins are
// the process's Kerberos logins (the daemon's); nil: the admin logs in on
// its own (a tool runs beside the daemon, not in it). extra are further
// client options.
func NewKafkaAdmin(c *configs.Connector, logins *kerberos.Logins, log *slog.Logger, clientID string, extra ...kgo.Opt) (*KafkaAdmin, error) {
	var own *kerberos.Logins
	if logins == nil {
		own = kerberos.NewLogins(log)
		logins = own
	}
	closeOwn := func() {
		if own != nil {
			own.Close()
		}
	}
	sec, err := KafkaSecurity(c, logins)
	if err != nil {
		closeOwn()
		return nil, err
	}
	mem := NewProcessMemory(0, 1, log).Connector(c)
	opts := append([]kgo.Opt{kgo.SeedBrokers(c.Consumer.BootstrapServers...)}, KafkaOpts(c, mem, sec, log)...)
	opts = append(opts, kgo.ClientID(clientID), kgo.RequestRetries(2), kgo.RetryTimeout(10*time.Second))
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		closeOwn()
		return nil, fmt.Errorf("connector %q: Kafka client: %w", c.Name, err)
	}
	return &KafkaAdmin{c: c, sec: sec, cl: cl, adm: kadm.NewClient(cl), logins: own}, nil
}

// Client and Admin are the admin's Kafka clients, for requests of its
// callers' own.
func (k *KafkaAdmin) Client() *kgo.Client { return k.cl }
func (k *KafkaAdmin) Admin() *kadm.Client { return k.adm }

// Security is the connector's Kafka security settings the admin connects
// with (a probe of each broker uses them too).
func (k *KafkaAdmin) Security() *kafkaclient.Security { return k.sec }

// Close closes the client (and the admin's own logins).
func (k *KafkaAdmin) Close() {
	k.cl.Close()
	if k.logins != nil {
		k.logins.Close()
	}
}

// Where names the cluster in errors.
func (k *KafkaAdmin) Where() string {
	return "Kafka at " + strings.Join(k.c.Consumer.BootstrapServers, ",")
}

// Topics are the connector's topics: the listed ones, or those Kafka has
// that match topics.regex.
func (k *KafkaAdmin) Topics(ctx context.Context) ([]string, error) {
	if k.c.TopicsRegex == nil {
		return k.c.Topics, nil
	}
	listed, err := k.adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: list topics for topics.regex: %w", k.Where(), err)
	}
	var out []string
	for _, t := range listed.Names() {
		if k.c.TopicsRegex.MatchString(t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// LogRange is what a partition's log holds: offsets from Start up to,
// not including, End (the high watermark).
type LogRange struct{ Start, End int64 }

// LogRanges is every partition's log range of topic.
func (k *KafkaAdmin) LogRanges(ctx context.Context, topic string) (map[int32]LogRange, error) {
	starts, err := k.adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: log start offsets of %s: %w", k.Where(), topic, err)
	}
	ends, err := k.adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: log end offsets of %s: %w", k.Where(), topic, err)
	}
	out := map[int32]LogRange{}
	for p, s := range starts[topic] {
		out[p] = LogRange{Start: s.Offset, End: ends[topic][p].Offset}
	}
	return out, nil
}

// OffsetAt resolves an offsets reset target that is not a number:
// earliest, latest, or an RFC 3339 time (the first offset whose record
// timestamp is at or after it, through Kafka's ListOffsets).
func (k *KafkaAdmin) OffsetAt(ctx context.Context, topic string, p int32, to string) (int64, error) {
	var listed kadm.ListedOffsets
	var err error
	switch to {
	case "earliest":
		listed, err = k.adm.ListStartOffsets(ctx, topic)
	case "latest":
		listed, err = k.adm.ListEndOffsets(ctx, topic)
	default:
		t, perr := time.Parse(time.RFC3339Nano, to)
		if perr != nil {
			return 0, fmt.Errorf("--to %q: want an offset, earliest, latest, or an RFC 3339 time such as 2026-12-01T09:00:00Z", to)
		}
		listed, err = k.adm.ListOffsetsAfterMilli(ctx, t.UnixMilli(), topic)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: list offsets of %s: %w", k.Where(), topic, err)
	}
	o, ok := listed.Lookup(topic, p)
	if !ok {
		return 0, fmt.Errorf("%s: topic %s has no partition %d", k.Where(), topic, p)
	}
	if o.Err != nil {
		return 0, fmt.Errorf("%s: offsets of %s partition %d: %w", k.Where(), topic, p, o.Err)
	}
	return o.Offset, nil
}

// ClusterID is the cluster's id as its metadata states it; "" when the
// broker does not say (before Kafka 0.10.1).
func (k *KafkaAdmin) ClusterID(ctx context.Context) (string, error) {
	md, err := k.adm.BrokerMetadata(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: metadata: %w", k.Where(), err)
	}
	return md.Cluster, nil
}
