package wiring

import (
	"errors"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
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
		if got := Redact(nil, key, value); got != configs.Hidden {
			t.Errorf("Redact(%q) = %q, want %q", key, got, configs.Hidden)
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
