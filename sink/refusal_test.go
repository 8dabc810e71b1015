package sink

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// deniedRegistry refuses every lookup, as a registry with the wrong
// credentials does.
type deniedRegistry struct{ calls int }

func (r *deniedRegistry) SchemaByID(context.Context, int32) (*schema.Schema, error) {
	r.calls++
	return nil, fmt.Errorf("schema: registry https://sr:8443: id 1: %w: HTTP 401", schema.ErrRegistryRefused)
}

// TestRegistryRefusalStopsConnector: a registry that refuses the client
// stops the connector with the reason, instead of breaking the partition
// and retrying it forever; nothing is committed.
func TestRegistryRefusalStopsConnector(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.produce(k.good(0, 0))
	cfg := k.config("refused")
	reg := &deniedRegistry{}
	cfg.Registry = reg
	err, stopped := start(t, cfg).wait(30 * time.Second)
	if !stopped || !errors.Is(err, schema.ErrRegistryRefused) {
		t.Fatalf("stopped=%v err=%v; want the connector stopped by the refusal", stopped, err)
	}
	if !strings.Contains(err.Error(), `connector "refused": topic orders partition 0 offset 0: schema: registry https://sr:8443`) {
		t.Errorf("error does not say where: %v", err)
	}
	if reg.calls != 1 || committedRecords(k.fs) != 0 {
		t.Errorf("%d registry calls, %d records committed; want 1 and 0", reg.calls, committedRecords(k.fs))
	}
}

// groupRefused is KafkaFatal for a broker refusing the group.
func groupRefused(err error) error {
	if errors.Is(err, kerr.GroupAuthorizationFailed) {
		return err
	}
	return nil
}

// TestKafkaRefusalStopsConnector: a poll error KafkaFatal calls final (the
// broker refuses the group) stops the connector within seconds.
func TestKafkaRefusalStopsConnector(t *testing.T) {
	k := newKafkaFixture(t, 1, testTopic)
	k.cluster.ControlKey(int16(kmsg.FindCoordinator), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.cluster.KeepControl()
		resp := req.(*kmsg.FindCoordinatorRequest).ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.Version = req.GetVersion()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		for _, key := range req.(*kmsg.FindCoordinatorRequest).CoordinatorKeys {
			resp.Coordinators = append(resp.Coordinators, kmsg.FindCoordinatorResponseCoordinator{Key: key, ErrorCode: kerr.GroupAuthorizationFailed.Code})
		}
		return resp, nil, true
	})
	cfg := k.config("unauthorized")
	cfg.KafkaFatal = groupRefused
	start := time.Now()
	err, stopped := startConnector(t, cfg).wait(30 * time.Second)
	if !stopped || !errors.Is(err, kerr.GroupAuthorizationFailed) || !strings.Contains(err.Error(), `connector "unauthorized"`) {
		t.Fatalf("stopped=%v err=%v", stopped, err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v to stop", took)
	}
}

// TestDeadLetterRefusalStopsConnector: a dead-letter topic the broker
// refuses to take records for is final, not retried until shutdown.
func TestDeadLetterRefusalStopsConnector(t *testing.T) {
	const dlq = "orders-dlq"
	k := newKafkaFixture(t, 1, testTopic, dlq)
	k.produce(k.good(0, 0), &kgo.Record{Partition: 0, Value: []byte("not framed")})
	k.cluster.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		k.cluster.KeepControl()
		preq := req.(*kmsg.ProduceRequest)
		resp := preq.ResponseKind().(*kmsg.ProduceResponse)
		resp.Version = preq.Version
		for _, tp := range preq.Topics {
			rt := kmsg.ProduceResponseTopic{Topic: tp.Topic, TopicID: tp.TopicID}
			for _, p := range tp.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.ProduceResponseTopicPartition{Partition: p.Partition, ErrorCode: kerr.TopicAuthorizationFailed.Code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, nil, true
	})
	cfg := k.config("dlq-refused")
	cfg.Tolerance, cfg.DLQTopic = ToleranceAll, dlq
	cfg.KafkaFatal = func(err error) error {
		if errors.Is(err, kerr.TopicAuthorizationFailed) {
			return err
		}
		return nil
	}
	err, stopped := startConnector(t, cfg).wait(30 * time.Second)
	if !stopped || !errors.Is(err, kerr.TopicAuthorizationFailed) || !strings.Contains(err.Error(), `the dead-letter topic "orders-dlq" refused it`) {
		t.Fatalf("stopped=%v err=%v", stopped, err)
	}
}

// startConnector is start, named apart from the local start variables.
func startConnector(t *testing.T, cfg Config) *running { return start(t, cfg) }
