package sink

import (
	"context"

	"github.com/twmb/franz-go/pkg/kadm"
)

// LogEnds asks Kafka for the end offset (high watermark) of every partition
// of the topics the connector consumes, owned or not. It is how the daemon
// knows Kafka answers even while nothing is fetched (a pause, a broken
// partition), and what keeps lag growing then. With no topic consumed yet
// (a topics.regex matching nothing) it only asks for the brokers.
func (c *Connector) LogEnds(ctx context.Context) (map[string]map[int32]int64, error) {
	adm := kadm.NewClient(c.cl) // borrows the client: not closed here
	topics := c.cl.GetConsumeTopics()
	if len(topics) == 0 {
		_, err := adm.ListBrokers(ctx)
		return nil, err
	}
	listed, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		if out[o.Topic] == nil {
			out[o.Topic] = map[int32]int64{}
		}
		out[o.Topic][o.Partition] = o.Offset
	})
	return out, listed.Error()
}
