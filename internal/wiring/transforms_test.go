package wiring

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
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
			"transforms.r.regex": "(.*)", "transforms.r.replacement": "x-$1"}, "RegexRouter and TimestampRouter are refused"},
		{"timestamp router", map[string]string{"transforms": "r", "transforms.r.type": "org.apache.kafka.connect.transforms.TimestampRouter"},
			"RegexRouter and TimestampRouter are refused"},
		{"bad key", map[string]string{"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
			"transforms.c.spec": "f:int128"}, "transforms.c.spec"},
		{"schemaless values", map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.InsertField$Value",
			"transforms.a.topic.field": "src", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
			"format.class": "io.confluent.connect.hdfs.string.StringFormat"}, "transforms.a needs values with a schema"},
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
