package wiring

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
)

// TestTransformsWired: a connector's transforms reach the sink; routers
// and a transform's bad keys are refused when the connector is built,
// and by check (CheckWiring) too, naming the key.
func TestTransformsWired(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tt := range []struct {
		name  string
		extra map[string]string
		want  string // "": accepted, with a chain of one
	}{
		{"insert field", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
			"transforms.a.topic.field": "src"}, ""},
		{"regex router", map[string]string{"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.r.regex": "(.*)", "transforms.r.replacement": "x-$1"}, ""},
		{"regex router onto a consumed topic", map[string]string{"topics": "orders,orders-raw", "transforms": "r",
			"transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.r.regex": "(.*)-raw", "transforms.r.replacement": "$1"},
			`transforms.r.regex, transforms.r.replacement: topic "orders-raw" is routed to "orders", which this connector also consumes`},
		{"regex router, two topics onto one", map[string]string{"topics": "orders-eu,orders-us", "transforms": "r",
			"transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.r.regex": "orders-.*", "transforms.r.replacement": "orders"},
			`topics "orders-eu" and "orders-us" are both routed to "orders"`},
		{"regex router under a header predicate", map[string]string{"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.r.regex": "(.*)", "transforms.r.replacement": "x-$1", "transforms.r.predicate": "h",
			"predicates": "h", "predicates.h.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey", "predicates.h.name": "x"},
			"transforms.r: refused: its predicate does not depend on the topic name alone"},
		{"regex router under TopicNameMatches", map[string]string{"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
			"transforms.r.regex": "(.*)", "transforms.r.replacement": "x-$1", "transforms.r.predicate": "t",
			"predicates": "t", "predicates.t.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches", "predicates.t.pattern": ".*"}, ""},
		{"timestamp router", map[string]string{"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.TimestampRouter"},
			"transforms.r: refused: TimestampRouter names each record by its timestamp, so one source partition's records would land under many names"},
		{"bad key", map[string]string{"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
			"transforms.c.spec": "f:int128"}, "transforms.c.spec"},
		{"schemaless values", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
			"transforms.a.topic.field": "src", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
			"format.class": "io.confluent.connect.hdfs.string.StringFormat"}, "transforms.a needs values with a schema"},
		{"schemaless JSON values", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
			"transforms.a.topic.field": "src", "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
			"format.class": "io.confluent.connect.hdfs.json.JsonFormat"}, ""},
		{"schemaless JSON values, a transform without schemaless support", map[string]string{"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
			"transforms.c.schema.name": "n", "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
			"format.class": "io.confluent.connect.hdfs.json.JsonFormat"}, "transforms.c has no schemaless support in hdfs-sink yet, and this connector's values are schemaless JSON"},
		{"schemaless values, header transform", map[string]string{"transforms": "h", "transforms.h.type": "org.apache.kafka.connect.transforms.DropHeaders",
			"transforms.h.headers": "x", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
			"format.class": "io.confluent.connect.hdfs.string.StringFormat"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := conftest.Connector(t, t.TempDir(), "a", tt.extra)
			cfg, err := SinkConfig(c, ConnectorDeps{Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
			switch {
			case tt.want == "" && (err != nil || cfg.Transforms.Len() != 1):
				t.Fatalf("SinkConfig = %v, chain of %d", err, cfg.Transforms.Len())
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("SinkConfig err = %v, want %q", err, tt.want)
			}
			// check refuses what building the connector refuses (a
			// published file with a TimestampRouter passed check once).
			err = CheckWiring([]*configs.Connector{c}, secret.NewRedactor())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckWiring = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("CheckWiring err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestKeyTransformsNeedKeysWithSchema: a $Key transform that works on a
// key's fields fails every keyed record when key.converter leaves keys as
// their bytes, so check refuses it, naming the transform and the key
// converter; a key converter that reads keys, or ValueToKey before it,
// makes it acceptable.
func TestKeyTransformsNeedKeysWithSchema(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	const tr = "org.apache.kafka.connect.transforms."
	extract := map[string]string{"transforms": "k", "transforms.k.type": tr + "ExtractField$Key", "transforms.k.field": "id"}
	with := func(m map[string]string, more ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(more); i += 2 {
			out[more[i]] = more[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  string // "": accepted
	}{
		{"bytes keys (the default)", extract, "transforms.k works on keys with a schema, and key.converter (ByteArrayConverter, the default)"},
		{"ByteArrayConverter named", with(extract, "key.converter", "org.apache.kafka.connect.converters.ByteArrayConverter"), "key.converter org.apache.kafka.connect.converters.ByteArrayConverter leaves keys"},
		{"schemaless JSON keys", with(extract, "key.converter", "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable", "false"), ""},
		{"schemaless JSON keys, a transform without schemaless support", map[string]string{"transforms": "k", "transforms.k.type": tr + "SetSchemaMetadata$Key",
			"transforms.k.schema.name": "n", "key.converter": "org.apache.kafka.connect.json.JsonConverter", "key.converter.schemas.enable": "false"},
			"transforms.k works on keys with a schema (it has no schemaless support in hdfs-sink yet), and key.converter org.apache.kafka.connect.json.JsonConverter with schemas.enable=false"},
		{"an Avro key converter with a registry of its own", with(extract, "key.converter", "io.confluent.connect.avro.AvroConverter",
			"key.converter.schema.registry.url", "http://other:8081"), "with a registry of its own"},
		{"HeaderFrom$Key on bytes keys", map[string]string{"transforms": "h", "transforms.h.type": tr + "HeaderFrom$Key", "transforms.h.fields": "id",
			"transforms.h.headers": "id", "transforms.h.operation": "copy"}, "transforms.h works on keys with a schema"},
		{"string keys", with(extract, "key.converter", "org.apache.kafka.connect.storage.StringConverter"), ""},
		{"Protobuf keys", with(extract, "key.converter", "io.confluent.connect.protobuf.ProtobufConverter"), ""},
		{"JSON Schema keys", with(extract, "key.converter", "io.confluent.connect.json.JsonSchemaConverter"), ""},
		{"ValueToKey first", map[string]string{"transforms": "v,k", "transforms.v.type": tr + "ValueToKey", "transforms.v.fields": "id",
			"transforms.k.type": tr + "ExtractField$Key", "transforms.k.field": "id"}, ""},
		{"a header transform", map[string]string{"transforms": "d", "transforms.d.type": tr + "DropHeaders", "transforms.d.headers": "x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := conftest.Connector(t, t.TempDir(), "a", tc.extra)
			_, err := SinkConfig(c, ConnectorDeps{Registry: registry.NewMemory(), Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
			checkErr := CheckWiring([]*configs.Connector{c}, secret.NewRedactor())
			for what, err := range map[string]error{"SinkConfig": err, "CheckWiring": checkErr} {
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("%s = %v", what, err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("%s err = %v, want %q", what, err, tc.want)
				}
			}
		})
	}
}

// TestRegexRouterRoutesTheLayout: with a RegexRouter the sink, the tools
// and the per-topic jobs keep a consumed topic's files, WALs and Hive
// table under its routed name, and check judges file name lengths by it.
func TestRegexRouterRoutesTheLayout(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	router := map[string]string{"topics": "orders-raw", "transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.r.regex": "(.*)-raw", "transforms.r.replacement": "$1"}
	c := conftest.Connector(t, t.TempDir(), "a", router)
	cfg, err := SinkConfig(c, ConnectorDeps{Mem: NewProcessMemory(0, 1, log), Log: log, Security: kafkaSecurity(t, c)})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Layout("orders-raw"); got.Name != "orders" || got != TopicLayout(c, "orders-raw") || !strings.HasSuffix(got.Dir(), "/orders") {
		t.Errorf("sink layout %+v, tools' layout %+v: want both under orders", got, TopicLayout(c, "orders-raw"))
	}
	if got := c.HiveTable(RoutedTopic(c, "orders-raw")); got != "orders" {
		t.Errorf("Hive table %q, want orders", got)
	}

	long := map[string]string{"topics": "orders-raw", "transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.r.regex": "(.*)-raw", "transforms.r.replacement": strings.Repeat("o", 240)}
	c = conftest.Connector(t, t.TempDir(), "a", long)
	if err := CheckWiring([]*configs.Connector{c}, secret.NewRedactor()); err == nil || !strings.Contains(err.Error(), strings.Repeat("o", 240)) {
		t.Errorf("CheckWiring = %v, want the routed name's file names refused", err)
	}
}

// TestCheckConnectRoutesTopicsRegex: with topics.regex, check --connect
// checks the router over the topics Kafka lists that the regex matches,
// as the daemon does at assignment.
func TestCheckConnectRoutesTopicsRegex(t *testing.T) {
	c := conftest.Connector(t, t.TempDir(), "a", map[string]string{"topics": "", "topics.regex": "orders.*", "transforms": "r",
		"transforms.r.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.r.regex": "(.*)-raw", "transforms.r.replacement": "$1"})
	if err := CheckPartitionNames(c, "topics.regex", ".avro", map[string]int32{"orders-raw": 3, "payments": 0}); err != nil {
		t.Fatalf("one-to-one: %v", err)
	}
	err := CheckPartitionNames(c, "topics.regex", ".avro", map[string]int32{"orders-raw": 3, "orders": 0})
	if err == nil || !strings.Contains(err.Error(), `topics.regex: the topics it matches now: transforms.r.regex, transforms.r.replacement: topic "orders-raw" is routed to "orders"`) {
		t.Fatalf("CheckPartitionNames = %v, want the collision named", err)
	}
}
