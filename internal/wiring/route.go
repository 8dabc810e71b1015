package wiring

import (
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// TopicRoute is the rename connector c's RegexRouter makes of every
// consumed topic (sink.WriteSettings.Route); nil without a router. Check
// (transformChain) refuses a chain that would not fail to build here and
// every router whose name is not one per topic, so on a connector loaded
// through it each topic has its one routed name.
func TopicRoute(c *configs.Connector) func(topic string) string {
	chain, err := transform.New(c.Transforms, c.Predicates)
	if err != nil || !chain.ChangesTopic() {
		return nil
	}
	return chain.Route
}

// RoutedTopic is the name topic's files, WAL and Hive table are kept under.
func RoutedTopic(c *configs.Connector, topic string) string {
	if route := TopicRoute(c); route != nil {
		return route(topic)
	}
	return topic
}

// TopicLayout is where connector c keeps the consumed topic's files and WALs:
// under its routed name, topics.dir and logs.dir expanded for that name, as
// the sink lays them out (sink.WriteSettings.Layout).
func TopicLayout(c *configs.Connector, topic string) layout.Topic {
	return sink.WriteSettings{TopicsDir: c.TopicsDir, LogsDir: c.LogsDir, Route: TopicRoute(c)}.Layout(topic)
}

// routesLine is what check says of a RegexRouter: where each listed topic
// is written; "" without a router.
func routesLine(c *configs.Connector) string {
	route := TopicRoute(c)
	if route == nil {
		return ""
	}
	var pairs []string
	for _, t := range c.Topics {
		pairs = append(pairs, t+" → "+route(t))
	}
	if c.TopicsRegex != nil {
		pairs = append(pairs, "the topics of topics.regex, each checked when assigned")
	}
	return "routed (RegexRouter; files, WAL and Hive table under the routed name): " + strings.Join(pairs, ", ")
}
