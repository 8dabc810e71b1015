package configs

import (
	"os"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

func TestRedactor(t *testing.T) {
	c, _ := connectorWith(t, workerOf(t, "bootstrap.servers=w:9092\nvalue.converter.schema.registry.url=http://w:8081"),
		`,"value.converter.basic.auth.credentials.source":"USER_INFO","value.converter.basic.auth.user.info":"svc:Passw0rd-x",
		"consumer.override.sasl.jaas.config":"org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"jaas-pw-1\";"`)
	r := NewRedactor(nil, c)
	in := `401 for svc:Passw0rd-x at http://svc:Passw0rd-x@reg:8081; retry with Passw0rd-x; jaas-pw-1 refused; user svc`
	got := r.Text(in)
	for _, leak := range []string{"Passw0rd-x", "jaas-pw-1"} {
		if strings.Contains(got, leak) {
			t.Errorf("Text leaks %q: %s", leak, got)
		}
	}
	if !strings.Contains(got, "user svc") {
		t.Errorf("Text hid more than secrets: %s", got)
	}
	shown := r.ShowMap(map[string]string{"sasl.jaas.config": "x", "sasl.mechanism": "PLAIN"})
	if shown["sasl.jaas.config"] != secret.Hidden || shown["sasl.mechanism"] != "PLAIN" {
		t.Errorf("ShowMap = %v", shown)
	}
	if got := r.Show("value.converter.schema.registry.url", "http://u:pw@reg"); got != "http://[hidden]@reg" {
		t.Errorf("Show of a URL with user info = %q", got)
	}
}

// TestRedactorHidesOnlySecrets: a value a provider resolved is hidden
// when its key is a secret, not for coming from a provider. An address
// resolved from a file (bootstrap servers, the registry URL) is shown, and
// log text that merely contains it, or a number that is also its port, is
// left as it is; only URL passwords and secret values are replaced.
func TestRedactorHidesOnlySecrets(t *testing.T) {
	dir := t.TempDir()
	props := dir + "/addr.properties"
	if err := os.WriteFile(props, []byte("brokers=kafka-1:9092\nregistry=http://registry:8081\nuserinfo=svc:pw-4567\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w := workerOf(t, "config.providers=file\nconfig.providers.file.class=FileConfigProvider\n"+
		"bootstrap.servers=${file:"+props+":brokers}\nvalue.converter.schema.registry.url=${file:"+props+":registry}")
	c, _ := connectorWith(t, w, `,"value.converter.basic.auth.credentials.source":"USER_INFO",
		"value.converter.basic.auth.user.info":"${file:`+props+`:userinfo}"`)
	if got := c.Show("bootstrap.servers"); got != "kafka-1:9092" {
		t.Errorf("Show(bootstrap.servers) = %q, want the address", got)
	}
	if got := w.Show("value.converter.schema.registry.url"); got != "http://registry:8081" {
		t.Errorf("worker Show(registry url) = %q, want the URL", got)
	}
	r := NewRedactor(w, c)
	for in, want := range map[string]string{
		"fetching from kafka-1:9092 at offset 9092":             "fetching from kafka-1:9092 at offset 9092",
		"GET http://registry:8081/subjects: 8081 bytes":         "GET http://registry:8081/subjects: 8081 bytes",
		"401 for svc:pw-4567 (pw-4567)":                         "401 for [hidden] ([hidden])",
		"dial http://svc:pw-4567@registry:8081 and pw-4567 too": "dial http://[hidden]@registry:8081 and [hidden] too",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
