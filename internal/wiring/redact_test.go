package wiring

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

func TestRedactHidesSecretsByKeyAndInURLs(t *testing.T) {
	for key, value := range map[string]string{
		"consumer.override.sasl.jaas.config":               `org.apache.kafka.common.security.plain.PlainLoginModule required password="p";`,
		"ssl.keystore.password":                            "p",
		"value.converter.basic.auth.user.info":             "u:p",
		"value.converter.bearer.auth.token":                "t",
		"hive.metastore.client.secret":                     "s",
		"consumer.override.ssl.key.password":               "p",
		"value.converter.schema.registry.ssl.keystore.key": "k",
	} {
		if got := Redact(nil, key, value); got != secret.Hidden {
			t.Errorf("Redact(%q) = %q, want %q", key, got, secret.Hidden)
		}
	}
	if got := Redact(nil, "topics", "orders"); got != "orders" {
		t.Errorf("Redact of a plain key changed it: %q", got)
	}
	got := Redact(nil, "value.converter.schema.registry.url", "https://user:pw@reg:8081,http://other:1")
	if got != "https://[hidden]@reg:8081,http://other:1" {
		t.Errorf("credentials in a URL: %q", got)
	}
}

func TestRedactedErrorsHideFieldValues(t *testing.T) {
	err := errors.Join(&configs.FieldError{Connector: "c", Source: "f", Key: "consumer.override.sasl.jaas.config", Value: "password=s3cret", Set: true, Reason: "bad"},
		errors.New("registry https://u:pw@r:1 refused"))
	got := strings.Join(RedactedErrors(nil, err), "\n")
	if strings.Contains(got, "s3cret") || strings.Contains(got, "pw@") || !strings.Contains(got, "sasl.jaas.config") {
		t.Fatalf("RedactedErrors: %s", got)
	}
}

// TestRedactWrittenAndRestore: the config as the REST API shows it keeps
// placeholders, hides literal secrets and URL credentials; a client that
// sends back what it was shown gets the stored values back, and one that
// changed a value keeps its own.
func TestRedactWrittenAndRestore(t *testing.T) {
	r := conftest.Redactor(t, "known-s3cret")
	stored := map[string]string{
		"name":                                 "orders",
		"topics":                               "orders",
		"value.converter.basic.auth.user.info": "${file:/etc/secrets/registry.properties:user.info}",
		"consumer.override.sasl.jaas.config":   `PlainLoginModule required username="u" password="literal-pw";`,
		"value.converter.schema.registry.url":  "https://svc:url-pw@reg:8081",
		"ssl.truststore.password":              "${env:TRUST_PW}",
		"hdfs.url":                             "hdfs://${env:NN}:8020/data",
		"errors.log.include.messages":          "known-s3cret",
	}
	shown := RedactWritten(r, stored)
	want := map[string]string{
		"name":                                 "orders",
		"topics":                               "orders",
		"value.converter.basic.auth.user.info": "${file:/etc/secrets/registry.properties:user.info}",
		"consumer.override.sasl.jaas.config":   secret.Hidden,
		"value.converter.schema.registry.url":  "https://[hidden]@reg:8081",
		"ssl.truststore.password":              "${env:TRUST_PW}",
		"hdfs.url":                             "hdfs://${env:NN}:8020/data",
		"errors.log.include.messages":          secret.Hidden,
	}
	if !maps.Equal(shown, want) {
		t.Fatalf("RedactWritten = %v\nwant %v", shown, want)
	}
	for _, tt := range []struct {
		name     string
		edit     func(map[string]any)
		want     map[string]string
		restored []string
	}{
		{"unchanged", func(map[string]any) {}, stored,
			[]string{"consumer.override.sasl.jaas.config", "errors.log.include.messages", "value.converter.schema.registry.url"}},
		{"one key edited", func(m map[string]any) { m["topics"] = "orders,returns" },
			with(stored, "topics", "orders,returns"),
			[]string{"consumer.override.sasl.jaas.config", "errors.log.include.messages", "value.converter.schema.registry.url"}},
		{"a secret replaced", func(m map[string]any) { m["consumer.override.sasl.jaas.config"] = "new" },
			with(stored, "consumer.override.sasl.jaas.config", "new"),
			[]string{"errors.log.include.messages", "value.converter.schema.registry.url"}},
		{"a reference replaced", func(m map[string]any) { m["ssl.truststore.password"] = "${file:/x:y}" },
			with(stored, "ssl.truststore.password", "${file:/x:y}"),
			[]string{"consumer.override.sasl.jaas.config", "errors.log.include.messages", "value.converter.schema.registry.url"}},
		{"[hidden] for a key not stored stays", func(m map[string]any) { m["ssl.keystore.password"] = secret.Hidden },
			with(stored, "ssl.keystore.password", secret.Hidden),
			[]string{"consumer.override.sasl.jaas.config", "errors.log.include.messages", "value.converter.schema.registry.url"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := map[string]any{}
			for k, v := range shown {
				body[k] = v
			}
			tt.edit(body)
			restored := RestoreHidden(r, stored, body)
			got := map[string]string{}
			for k, v := range body {
				got[k] = v.(string)
			}
			if !maps.Equal(got, tt.want) || !slices.Equal(restored, tt.restored) {
				t.Fatalf("restored %v to %v\nwant %v to %v", restored, got, tt.restored, tt.want)
			}
		})
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	out[k] = v
	return out
}
