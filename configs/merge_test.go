package configs

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

const mergeWorker = `bootstrap.servers=w:9092
security.protocol=PLAINTEXT
request.timeout.ms=1000
retry.backoff.ms=10
consumer.max.poll.records=100
consumer.client.rack=r1
producer.acks=all
admin.retries=5
value.converter=io.confluent.connect.avro.AvroConverter
value.converter.schema.registry.url=http://w:8081
value.converter.basic.auth.credentials.source=USER_INFO
value.converter.basic.auth.user.info=u:pw-from-worker`

func connectorWith(t *testing.T, w *Worker, extra string) (*Connector, []Warning) {
	t.Helper()
	body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"` + extra + `}}`
	conns, warns, err := ParseFile("c.json", []byte(body), w)
	if err != nil {
		t.Fatal(err)
	}
	return conns[0], warns
}

// TestKafkaClientPrecedence: Connect's layering for each client, and what
// reaches the security code (Connector.Kafka, SchemaRegistry.Props).
func TestKafkaClientPrecedence(t *testing.T) {
	w := workerOf(t, mergeWorker)
	c, warns := connectorWith(t, w, `,"consumer.override.max.poll.records":"500","producer.override.linger.ms":"5","admin.override.retries":"7"`)
	for _, want := range []string{
		`connector "c": producer.override.linger.ms: not applied: hdfs-sink's dead-letter producer and admin requests use the consumer's client`,
		`connector "c": producer.acks: not applied: hdfs-sink's dead-letter producer and admin requests use the consumer's client (set in worker w.properties)`,
	} {
		if !slices.Contains(warnStrings(warns), want) {
			t.Errorf("warnings lack %q: %q", want, warnStrings(warns))
		}
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"Consumer", c.Kafka.Consumer, map[string]string{"bootstrap.servers": "w:9092", "max.poll.records": "500", "client.rack": "r1"}},
		{"Producer", c.Kafka.Producer, map[string]string{"bootstrap.servers": "w:9092", "acks": "all", "linger.ms": "5"}},
		{"Admin", c.Kafka.Admin, map[string]string{"bootstrap.servers": "w:9092", "security.protocol": "PLAINTEXT",
			"request.timeout.ms": "1000", "retry.backoff.ms": "10", "retries": "7"}},
		{"Overrides", c.Consumer.Overrides, map[string]string{"max.poll.records": "500", "client.rack": "r1"}},
		{"Registry.Props", c.Registry.Props, map[string]string{"schema.registry.url": "http://w:8081",
			"basic.auth.credentials.source": "USER_INFO", "basic.auth.user.info": "u:pw-from-worker"}},
		{"UserInfo", c.Registry.UserInfo, "u:pw-from-worker"},
		// The worker's top-level retry.backoff.ms is a client setting, not
		// the connector's retry.backoff.ms.
		{"RetryBackoff", c.RetryBackoff, 5 * time.Second},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s = %#v, want %#v", ch.name, ch.got, ch.want)
		}
	}
}

func TestConnectorKeysWinOverWorker(t *testing.T) {
	w := workerOf(t, mergeWorker)
	c, _ := connectorWith(t, w, `,"bootstrap.servers":"c:9092","consumer.max.poll.records":"7"`)
	if c.Consumer.BootstrapServers[0] != "c:9092" || c.Kafka.Consumer["max.poll.records"] != "7" || c.Kafka.Admin["bootstrap.servers"] != "c:9092" {
		t.Fatalf("connector settings lost: %v / %v", c.Consumer.BootstrapServers, c.Kafka)
	}
}

// TestConverterPrecedence follows Connect: a connector that names a value
// converter uses only its own value.converter.* settings; one that does
// not gets the worker's converter with the worker's settings, and its own
// value.converter.* settings are ignored (with a warning).
func TestConverterPrecedence(t *testing.T) {
	w := workerOf(t, mergeWorker)
	own, _ := connectorWith(t, w, `,"value.converter":"io.confluent.connect.avro.AvroConverter","value.converter.schema.registry.url":"http://c:8081"`)
	if own.Registry.URLs[0] != "http://c:8081" || own.Registry.UserInfo != "" || own.Registry.CredentialsSource != CredentialsURL {
		t.Errorf("connector converter: %+v", own.Registry)
	}
	inherited, warns := connectorWith(t, w, `,"value.converter.schema.registry.url":"http://c:8081"`)
	want := `connector "c": value.converter.schema.registry.url: ignored: the connector file sets no value.converter, so the worker's value.converter applies with the worker's value.converter.* settings, as in Kafka Connect (set value.converter here to use this file's settings)`
	if inherited.Registry.URLs[0] != "http://w:8081" || !slices.Contains(warnStrings(warns), want) {
		t.Errorf("inherited converter: %v, warnings %q", inherited.Registry.URLs, warnStrings(warns))
	}
	bare := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\nvalue.converter.basic.auth.credentials.source=USER_INFO")
	merged, _ := connectorWith(t, bare, `,"value.converter.basic.auth.user.info":"u:p"`)
	if merged.Registry.URLs[0] != "http://w:8081" || merged.Registry.UserInfo != "u:p" {
		t.Errorf("no converter class anywhere: settings merged as %+v", merged.Registry)
	}
}

func TestOverridePolicyPrincipal(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\nconnector.client.config.override.policy=org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy")
	connectorWith(t, w, `,"consumer.override.security.protocol":"PLAINTEXT"`)
	_, _, err := ParseFile("c.json", []byte(`{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1","consumer.override.max.poll.records":"5"}}`), w)
	want := `connector "c" (c.json): consumer.override.max.poll.records = "5": the worker's connector.client.config.override.policy (Principal) does not allow a connector to set this client property`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}

// TestWorkerTopLevelSecurityIsNotTheConsumers: as in Kafka Connect, the
// worker's top-level security settings are for its own connections, not
// the connector's consumer (consumer.* is); hdfs-sink says so, naming
// where each came from. (A SASL or TLS setting the consumer's protocol
// does not use is a check error, in cmd: kafkaclient.)
func TestWorkerTopLevelSecurityIsNotTheConsumers(t *testing.T) {
	w := workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081\nsecurity.protocol=SASL_SSL\nconsumer.security.protocol=SSL")
	c, warns := connectorWith(t, w, "")
	got := strings.Join(warnStrings(warns), "\n")
	want := `security.protocol: not applied to the connector's consumer, as in Kafka Connect (it is for the worker's own connections): set consumer.security.protocol in the worker file (set in worker w.properties)`
	if !strings.Contains(got, want) {
		t.Errorf("warnings lack %q:\n%s", want, got)
	}
	if p := c.Kafka.Consumer["security.protocol"]; p != "SSL" {
		t.Errorf("consumer security.protocol = %q, want the worker's consumer.security.protocol SSL", p)
	}
}

// TestTopLevelClientKeyEqualToConsumers: a top-level client property equal
// to what the connector's consumer uses (a file exported with the worker's
// security.protocol in it) is accepted without a word; a different
// security.protocol is still an error, anything else different a warning.
func TestTopLevelClientKeyEqualToConsumers(t *testing.T) {
	const base = "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081"
	for _, tc := range []struct {
		name, worker, extra string
		err, warn           string // substrings; "" for none
	}{
		{"equal to the worker's consumer", "\nconsumer.security.protocol=SASL_SSL\nconsumer.sasl.mechanism=PLAIN",
			`,"security.protocol":"SASL_SSL","sasl.mechanism":"PLAIN"`, "", ""},
		{"equal in another case", "\nconsumer.security.protocol=SASL_SSL", `,"security.protocol":"sasl_ssl"`, "", ""},
		{"equal to the connector's own override", "", `,"consumer.override.security.protocol":"SSL","security.protocol":"SSL"`, "", ""},
		{"PLAINTEXT, the consumer's default", "", `,"security.protocol":"PLAINTEXT"`, "", ""},
		{"the consumer has none", "", `,"security.protocol":"SASL_SSL"`,
			`security.protocol = "SASL_SSL": a Kafka client property at the top level of a connector file reaches no client`, ""},
		{"the worker's top level only", "\nsecurity.protocol=SASL_SSL", `,"security.protocol":"SASL_SSL"`,
			`(the consumer's security.protocol is PLAINTEXT)`, ""},
		{"a different mechanism", "\nconsumer.security.protocol=SASL_SSL\nconsumer.sasl.mechanism=PLAIN",
			`,"security.protocol":"SASL_SSL","sasl.mechanism":"SCRAM-SHA-512"`, "", "sasl.mechanism: ignored: a Kafka client property at the top level"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1"` + tc.extra + `}}`
			_, warns, err := ParseFile("c.json", []byte(body), workerOf(t, base+tc.worker))
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
			got := strings.Join(warnStrings(warns), "\n")
			if tc.warn == "" && strings.Contains(got, "top level") || tc.warn != "" && !strings.Contains(got, tc.warn) {
				t.Errorf("warnings:\n%s\nwant %q", got, tc.warn)
			}
		})
	}
}
