package configs

import (
	"reflect"
	"testing"
	"time"
)

// TestCompletenessKeys reads every hdfs.sink.completeness.* key.
func TestCompletenessKeys(t *testing.T) {
	data := []byte(`{"name": "clicks", "config": {
		"connector.class": "io.confluent.connect.hdfs.HdfsSinkConnector", "topics": "clicks",
		"hdfs.url": "hdfs://127.0.0.1:8020", "flush.size": "1000", "bootstrap.servers": "127.0.0.1:9092",
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": "http://127.0.0.1:8081",
		"partitioner.class": "io.confluent.connect.storage.partitioner.HourlyPartitioner", "locale": "en", "timezone": "UTC",
		"hdfs.sink.completeness.enabled": "true", "hdfs.sink.completeness.lateness.ms": "600000",
		"hdfs.sink.completeness.marker.name": ".done", "hdfs.sink.completeness.interval.ms": "5000",
		"hdfs.sink.completeness.lookback.ms": "86400000"}}`)
	conns, _, err := ParseFile("clicks.json", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Completeness{Enabled: true, Lateness: 10 * time.Minute, MarkerName: ".done", Interval: 5 * time.Second, Lookback: 24 * time.Hour}
	if got := conns[0].Completeness; !reflect.DeepEqual(got, want) {
		t.Fatalf("Completeness = %+v, want %+v", got, want)
	}
}
