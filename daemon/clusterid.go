package daemon

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
)

// learnClusterID asks connector c's cluster for its id once per process
// (per bootstrap.servers), with the connector's security settings, right
// after Kafka answered the readiness probe. A failure only leaves the id
// unknown.
func (d *Daemon) learnClusterID(ctx context.Context, c *configs.Connector, sec *kafkaclient.Security) {
	key := bootstrapKey(c)
	d.mu.Lock()
	_, known := d.clusterIDs[key]
	d.mu.Unlock()
	if known {
		return
	}
	log := d.log.With("connector", c.Name)
	cl, err := kgo.NewClient(append(sec.Opts(log), kgo.SeedBrokers(c.Consumer.BootstrapServers...), kgo.ClientID("hdfs-sink-"+c.Name),
		kgo.RequestRetries(1))...)
	if err != nil {
		log.Debug("Kafka cluster id not asked", "err", err)
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil || md.Cluster == "" {
		log.Debug("Kafka cluster id not known", "err", err)
		return
	}
	d.mu.Lock()
	d.clusterIDs[key] = md.Cluster
	d.mu.Unlock()
}

// bootstrapKey names a connector's cluster by its bootstrap servers.
func bootstrapKey(c *configs.Connector) string {
	servers := append([]string(nil), c.Consumer.BootstrapServers...)
	sort.Strings(servers)
	return strings.Join(servers, ",")
}
