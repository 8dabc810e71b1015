package configs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOverlappingConnectorsAreAnError (m6): two connectors writing one
// topic into the same directories of one store would fence each other or
// replace each other's files.
func TestOverlappingConnectorsAreAnError(t *testing.T) {
	const common = `"hdfs.url":"hdfs://nn:8020","flush.size":"10","bootstrap.servers":"k:9092",` +
		`"value.converter":"io.confluent.connect.avro.AvroConverter","value.converter.schema.registry.url":"http://sr:8081"`
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"same topic, same dirs", `"topics":"orders"`, `"topics":"orders,payments"`, `both write topic "orders" into logs.dir /logs of hdfs://nn:8020: give one of them another logs.dir`},
		{"regex matches a listed topic", `"topics.regex":"ord.*"`, `"topics":"orders"`, `both write topic "orders" into logs.dir`},
		{"own logs.dir, same topics.dir", `"topics":"orders"`, `"topics":"orders","logs.dir":"other-logs"`, `both write topic "orders" into topics.dir /topics`},
		{"other topics.dir and logs.dir", `"topics":"orders"`, `"topics":"orders","logs.dir":"l2","topics.dir":"t2"`, ``},
		{"other store", `"topics":"orders"`, `"topics":"orders","hdfs.url":"hdfs://other:8020"`, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"name":"a","config":{`+common+`,`+tc.a+`}}`), 0o644)
			b := common
			if strings.Contains(tc.b, "hdfs.url") {
				b = strings.Replace(common, `"hdfs.url":"hdfs://nn:8020",`, ``, 1)
			}
			os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"name":"b","config":{`+b+`,`+tc.b+`}}`), 0o644)
			_, _, err := LoadPath(dir)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v; want it to say %q", err, tc.want)
			}
		})
	}
}
