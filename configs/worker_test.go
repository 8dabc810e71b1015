package configs

import (
	"reflect"
	"strings"
	"testing"
)

// TestCorpusWorkers: the reference distribution's worker files load; what
// they set for a Connect cluster is listed as not applicable, not warned.
func TestCorpusWorkers(t *testing.T) {
	tests := []struct {
		file, converter string
		notApplicable   int
	}{
		{"apache-kafka-connect-distributed.properties", "org.apache.kafka.connect.json.JsonConverter", 8},
		{"apache-kafka-connect-standalone.properties", "org.apache.kafka.connect.json.JsonConverter", 6},
		{"confluent-connect-avro-distributed.properties", avroConverter, 11},
		{"confluent-connect-avro-standalone.properties", avroConverter, 5},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			w, warns, err := LoadWorker("testdata/corpus/workers/" + tt.file)
			if err != nil || len(warns) != 0 {
				t.Fatalf("LoadWorker: %v, warnings %v", err, warns)
			}
			if got := w.get("value.converter"); got != tt.converter || w.get("bootstrap.servers") != "localhost:9092" {
				t.Errorf("value.converter %q, bootstrap.servers %q", got, w.get("bootstrap.servers"))
			}
			if len(w.NotApplicable) != tt.notApplicable || w.HTTPAddr != "" || w.OverridePolicy != PolicyAll {
				t.Errorf("not applicable %v, HTTP %q, policy %q", w.NotApplicable, w.HTTPAddr, w.OverridePolicy)
			}
		})
	}
}

func TestEnvToProperty(t *testing.T) {
	for env, prop := range map[string]string{
		"CONNECT_BOOTSTRAP_SERVERS":                   "bootstrap.servers",
		"CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL": "value.converter.schema.registry.url",
		"CONNECT_CONSUMER_SASL_JAAS_CONFIG":           "consumer.sasl.jaas.config",
		"CONNECT_CONFIG_PROVIDERS_FILE_CLASS":         "config.providers.file.class",
		"CONNECT_SOME__DASHED___UNDERSCORED":          "some-dashed_underscored",
		"CONNECT_REST_PORT":                           "rest.port",
	} {
		if got := EnvToProperty(env); got != prop {
			t.Errorf("EnvToProperty(%s) = %q, want %q", env, got, prop)
		}
		if got := PropertyToEnv(prop); got != env {
			t.Errorf("PropertyToEnv(%s) = %q, want %q", prop, got, env)
		}
	}
}

// TestWorkerFromEnv: the Confluent image's CONNECT_* convention is a worker.
func TestWorkerFromEnv(t *testing.T) {
	env := []string{"PATH=/bin", "CONNECT_BOOTSTRAP_SERVERS=kafka:9092", "CONNECT_GROUP_ID=compose-connect-group",
		"CONNECT_REST_PORT=28083", "CONNECT_VALUE_CONVERTER=io.confluent.connect.avro.AvroConverter",
		"CONNECT_VALUE_CONVERTER_SCHEMA_REGISTRY_URL=http://schema-registry:8081"}
	w, warns, err := WorkerFromEnv(env)
	if err != nil || len(warns) != 0 {
		t.Fatalf("WorkerFromEnv: %v %v", err, warns)
	}
	if w.Source != envSource || w.HTTPAddr != ":28083" || !reflect.DeepEqual(w.NotApplicable, []string{"group.id"}) {
		t.Fatalf("worker %+v", w)
	}
	c, _, err := Parse("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"}}`))
	if err == nil {
		t.Fatalf("without the worker the file misses bootstrap.servers, got %+v", c)
	}
	conns, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"}}`), w)
	if err != nil || conns[0].Consumer.BootstrapServers[0] != "kafka:9092" {
		t.Fatalf("with the env worker: %v", err)
	}
	if w, _, _ := WorkerFromEnv([]string{"PATH=/bin"}); w != nil {
		t.Fatalf("a worker from an environment without CONNECT_*: %+v", w)
	}
	_, _, err = ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1",
		"bootstrap.servers":"bad"}}`), w)
	if err == nil || !strings.Contains(err.Error(), `bootstrap.servers = "bad": "bad" must be host:port`) {
		t.Fatalf("connector key over the environment's: %v", err)
	}
	_, _, err = WorkerFromEnv([]string{"CONNECT_LISTENERS=https://:8443"})
	if want := envSource + `: listeners = "https://:8443" (from environment CONNECT_LISTENERS): needs an http:// listener for the address: hdfs-sink serves HTTPS with run --rest-tls-cert and --rest-tls-key, not with listeners.https.* stores`; err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}

func TestHTTPAddr(t *testing.T) {
	for props, want := range map[string]string{
		"listeners=HTTP://:8083":                        ":8083",
		"listeners=HTTPS://:8443,http://0.0.0.0:28083":  "0.0.0.0:28083",
		"listeners=http://myhost:8083,HTTP://other:80":  "myhost:8083",
		"rest.port=8084":                                ":8084",
		"rest.host.name=10.0.0.1":                       "10.0.0.1:8083",
		"rest.port=8084\nlisteners=HTTP://127.0.0.1:99": "127.0.0.1:99",
		"bootstrap.servers=k:9092":                      "",
	} {
		w := workerOf(t, props)
		if w.HTTPAddr != want {
			t.Errorf("%q: HTTPAddr %q, want %q", props, w.HTTPAddr, want)
		}
	}
}

func workerOf(t *testing.T, props string) *Worker {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(props, "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	w, _, err := newWorker("w.properties", m, func(string) string { return "worker w.properties" }, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWorkerUnknownKeyWarns(t *testing.T) {
	_, warns, err := newWorker("w.properties", map[string]string{"bootstrap.server": "k:9092", "plugin.path": "/x"},
		func(string) string { return "worker w.properties" }, ReadOptions{})
	got := warnStrings(warns)
	want := []string{`w.properties: bootstrap.server: unknown worker key, ignored (did you mean "bootstrap.servers"?)`}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings %q, %v; want %q", got, err, want)
	}
}
