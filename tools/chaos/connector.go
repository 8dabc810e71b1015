package chaos

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// sessionTimeout is the connectors' Kafka group session timeout; a frozen
// broker must outlast it.
const sessionTimeout = 10 * time.Second

// connectorConfig is the connector file a Kafka Connect user would write
// for the run: Avro, Hive on, files rotated every few seconds and never by
// size, so files are always open when a fault strikes.
func (r *faultRun) connectorConfig() map[string]string {
	cfg := map[string]string{
		"connector.class":                         "io.confluent.connect.hdfs.HdfsSinkConnector",
		"tasks.max":                               "1",
		"topics":                                  r.topic,
		"hdfs.url":                                "hdfs://" + r.cfg.NameNode + r.base,
		"flush.size":                              "1000000",
		"rotate.interval.ms":                      "5000",
		"retry.backoff.ms":                        strconv.Itoa(r.opts.RetryBackoffMs),
		"format.class":                            "io.confluent.connect.hdfs.avro.AvroFormat",
		"value.converter":                         "io.confluent.connect.avro.AvroConverter",
		"value.converter.schema.registry.url":     r.cfg.Registry,
		"key.converter":                           "org.apache.kafka.connect.storage.StringConverter",
		"bootstrap.servers":                       r.cfg.Kafka,
		"hdfs.sink.hdfs.user":                     r.cfg.HDFSUser,
		"schema.compatibility":                    "BACKWARD",
		"hive.integration":                        "true",
		"hive.metastore.uris":                     r.cfg.Metastore,
		"hive.database":                           r.db,
		"consumer.override.session.timeout.ms":    strconv.Itoa(int(sessionTimeout.Milliseconds())),
		"consumer.override.heartbeat.interval.ms": "1000",
	}
	if r.f.HA {
		cfg["hdfs.url"] = "hdfs://" + r.cfg.HA.Nameservice + r.base
		cfg["hadoop.conf.dir"] = r.cfg.HA.ConfDir
	}
	return cfg
}

func (r *faultRun) writeConnector() (string, error) {
	return writeConnectorFile(r.opts.Dir, "chaos-"+r.f.Name, r.connectorConfig())
}

// writeConnectorFile writes {"name": name, "config": cfg} into dir.
func writeConnectorFile(dir, name string, cfg map[string]string) (string, error) {
	b, err := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".json")
	return p, os.WriteFile(p, b, 0o644)
}
