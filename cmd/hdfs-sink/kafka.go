package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
)

// The operator tools ask Kafka what the daemon's consumer would see, so
// they build their clients as wiring.KafkaAdmin does for the daemon: every
// consumer.override.* and security setting the daemon honours, they do.

// kafkaTool is a client of one connector's cluster for the tools: no
// group, so it never joins or disturbs the connector's consumer group.
type kafkaTool struct {
	c     *configs.Connector
	cl    *kgo.Client
	adm   *kadm.Client
	sec   *kafkaclient.Security // the connector's Kafka security, for the probes of check --connect
	admin *wiring.KafkaAdmin    // with Kerberos logins of its own: it runs beside the daemon, not in it
}

func newKafkaTool(c *configs.Connector, log *slog.Logger, extra ...kgo.Opt) (*kafkaTool, error) {
	admin, err := wiring.NewKafkaAdmin(c, nil, log, "hdfs-sink-tool-"+c.Name, extra...)
	if err != nil {
		return nil, err
	}
	return &kafkaTool{c: c, cl: admin.Client(), adm: admin.Admin(), sec: admin.Security(), admin: admin}, nil
}

// openTopics is a kafkaTool and the connector's topics (the caller closes
// the tool).
func openTopics(ctx context.Context, c *configs.Connector) (*kafkaTool, []string, error) {
	kt, err := newKafkaTool(c, toolLogger(io.Discard))
	if err != nil {
		return nil, nil, err
	}
	topics, err := kt.topics(ctx)
	if err != nil {
		kt.close()
		return nil, nil, err
	}
	return kt, topics, nil
}

func (k *kafkaTool) close() { k.admin.Close() }

// where names the cluster in errors.
func (k *kafkaTool) where() string { return k.admin.Where() }

// topics are the connector's topics: the listed ones, or those Kafka has
// that match topics.regex.
func (k *kafkaTool) topics(ctx context.Context) ([]string, error) { return k.admin.Topics(ctx) }

// logOffsets is every partition's log start and end offset.
func (k *kafkaTool) logOffsets(ctx context.Context, topic string) (map[int32]verify.LogOffsets, error) {
	ranges, err := k.admin.LogRanges(ctx, topic)
	if err != nil {
		return nil, err
	}
	out := make(map[int32]verify.LogOffsets, len(ranges))
	for p, r := range ranges {
		out[p] = verify.LogOffsets{Start: r.Start, End: r.End}
	}
	return out, nil
}

// groupOffsets is the connector group's committed (advisory) offsets.
func (k *kafkaTool) groupOffsets(ctx context.Context) (kadm.OffsetResponses, error) {
	offs, err := k.adm.FetchOffsets(ctx, k.c.Consumer.GroupID)
	if err != nil {
		return nil, fmt.Errorf("%s: offsets of group %s: %w", k.where(), k.c.Consumer.GroupID, err)
	}
	return offs, nil
}

// owner names the live group member assigned topic/p, "" if none. A
// member is live in the group coordinator's eyes: it joined and its
// session has not expired.
func (k *kafkaTool) owner(ctx context.Context, topic string, p int32) (string, error) {
	groups, err := k.adm.DescribeGroups(ctx, k.c.Consumer.GroupID)
	if err == nil {
		err = groups.Error()
	}
	if err != nil {
		return "", fmt.Errorf("%s: describe group %s: %w", k.where(), k.c.Consumer.GroupID, err)
	}
	for _, g := range groups {
		for _, m := range g.Members {
			if assignedTo(m, topic, p) {
				return fmt.Sprintf("member %s (client %s on %s)", m.MemberID, m.ClientID, m.ClientHost), nil
			}
		}
	}
	return "", nil
}

func assignedTo(m kadm.DescribedGroupMember, topic string, p int32) bool {
	a, ok := m.Assigned.AsConsumer()
	if !ok {
		return false
	}
	for _, t := range a.Topics {
		for _, q := range t.Partitions {
			if t.Topic == topic && q == p {
				return true
			}
		}
	}
	return false
}

// offsetAt resolves an offsets reset target: earliest, latest, or an
// RFC 3339 time.
func (k *kafkaTool) offsetAt(ctx context.Context, topic string, p int32, to string) (int64, error) {
	return k.admin.OffsetAt(ctx, topic, p, to)
}

// kafkaProber asks Kafka, as the sink reads it (read_committed), for the
// first record at or after an offset: verify's test of a hole.
type kafkaProber struct {
	c    *configs.Connector
	log  *slog.Logger
	ends map[string]map[int32]int64
}

func (k *kafkaProber) FirstRecord(ctx context.Context, topic string, p int32, from int64) (int64, error) {
	end := k.ends[topic][p]
	if from >= end {
		return end, nil
	}
	t, err := newKafkaTool(k.c, k.log, kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}}))
	if err != nil {
		return 0, err
	}
	defer t.close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		fetches := t.cl.PollFetches(ctx)
		if err := fetches.Err0(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return 0, fmt.Errorf("%s: no record of %s partition %d at or after %d within 30s", t.where(), topic, p, from)
			}
			return 0, fmt.Errorf("%s: fetch %s partition %d at %d: %w", t.where(), topic, p, from, err)
		}
		if recs := fetches.Records(); len(recs) > 0 {
			return recs[0].Offset, nil
		}
	}
}
