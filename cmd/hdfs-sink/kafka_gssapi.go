package main

// Kafka GSSAPI until the Kafka client-properties package of the TLS/SASL
// work (issue 13) lands. The seam is kerberosSASL: it takes one client's
// properties (without the consumer./consumer.override. prefix) and the
// process's logins, and returns franz-go's GSSAPI mechanism. That package
// keeps a table of mechanisms; GSSAPI becomes one entry there, whose
// builder calls kerberos.KafkaLoginConfig with the Krb5LoginModule options
// its own JAAS parser produced and kerberos.KafkaMechanism with the
// process's logins. This file, parseKrb5JAAS included, is then deleted.

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
)

// gssapiKeys are the client properties this file consumes.
var gssapiKeys = []string{"security.protocol", "sasl.mechanism", "sasl.jaas.config", "sasl.kerberos.service.name"}

// kerberosSASL is the GSSAPI mechanism of one Kafka client's properties;
// nil (and no error) when they ask for no SASL at all. krb5Conf is the
// connector's hdfs.sink.krb5.conf ("" = $KRB5_CONFIG, else /etc/krb5.conf):
// a JAAS line cannot name one, and Java takes it from the JVM's flags.
func kerberosSASL(props map[string]string, logins *kerberos.Logins, krb5Conf string) (sasl.Mechanism, error) {
	cfg, service, on, err := kafkaGSSAPIConfig(props)
	if err != nil || !on {
		return nil, err
	}
	cfg.Krb5Conf = krb5Conf
	return kerberos.KafkaMechanism(logins, cfg, service), nil
}

// kafkaGSSAPIConfig reads the login a GSSAPI client asks for. Only
// SASL_PLAINTEXT with GSSAPI is this file's; TLS and the other mechanisms
// are the TLS/SASL package's, so until it lands they are refused here rather
// than connected without.
func kafkaGSSAPIConfig(props map[string]string) (kerberos.Config, string, bool, error) {
	proto := strings.ToUpper(strings.TrimSpace(props["security.protocol"]))
	mech := strings.ToUpper(strings.TrimSpace(props["sasl.mechanism"]))
	switch {
	case proto == "" || proto == "PLAINTEXT":
		if mech != "" || props["sasl.jaas.config"] != "" {
			return kerberos.Config{}, "", false, errors.New("sasl.* is set but security.protocol is not SASL_PLAINTEXT")
		}
		return kerberos.Config{}, "", false, nil
	case proto != "SASL_PLAINTEXT":
		return kerberos.Config{}, "", false, fmt.Errorf("security.protocol=%s is not supported by this build (SASL_PLAINTEXT with GSSAPI is)", proto)
	case mech != "" && mech != "GSSAPI":
		return kerberos.Config{}, "", false, fmt.Errorf("sasl.mechanism=%s is not supported by this build (GSSAPI is)", mech)
	}
	opts, err := parseKrb5JAAS(props["sasl.jaas.config"])
	if err != nil {
		return kerberos.Config{}, "", false, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	cfg, service, err := kerberos.KafkaLoginConfig(opts, props["sasl.kerberos.service.name"])
	if err != nil {
		return kerberos.Config{}, "", false, fmt.Errorf("sasl.jaas.config: %w", err)
	}
	return cfg, service, true, nil
}

var jaasOption = regexp.MustCompile(`^\s*([A-Za-z0-9_.]+)\s*=\s*("([^"]*)"|'([^']*)'|([^\s;"']+))`)

// parseKrb5JAAS reads "<Krb5LoginModule> required k=v ...;". Errors never
// quote the text.
func parseKrb5JAAS(s string) (map[string]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("must be set for GSSAPI (com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab=\"…\" principal=\"…\";)")
	}
	fields := strings.Fields(s)
	if len(fields) < 2 || fields[0] != kerberos.Krb5LoginModule {
		return nil, fmt.Errorf("GSSAPI needs the login module %s", kerberos.Krb5LoginModule)
	}
	if !strings.EqualFold(fields[1], "required") {
		return nil, errors.New("the login module's control flag must be required")
	}
	rest := strings.TrimSpace(s[len(fields[0]):])
	rest = strings.TrimSpace(rest[len(fields[1]):])
	if !strings.HasSuffix(rest, ";") {
		return nil, errors.New("the entry is not terminated by ';'")
	}
	return jaasOptions(strings.TrimSuffix(rest, ";"))
}

func jaasOptions(rest string) (map[string]string, error) {
	opts := map[string]string{}
	for rest = strings.TrimSpace(rest); rest != ""; rest = strings.TrimSpace(rest) {
		m := jaasOption.FindStringSubmatch(rest)
		if m == nil {
			return nil, errors.New("expected key=value options")
		}
		opts[m[1]] = m[3] + m[4] + m[5]
		rest = rest[len(m[0]):]
	}
	return opts, nil
}

// kafkaSecurityOpts are the franz-go options for the consumer's security
// properties (worker-level consumer.* and connector-level
// consumer.override.*, already merged, the connector's winning).
func kafkaSecurityOpts(over map[string]string, logins *kerberos.Logins, krb5Conf string) ([]kgo.Opt, error) {
	mech, err := kerberosSASL(over, logins, krb5Conf)
	if err != nil || mech == nil {
		return nil, err
	}
	return []kgo.Opt{kgo.SASL(mech)}, nil
}

// checkKafkaLogin is what `check` can know of the consumer's GSSAPI login
// without a KDC: the JAAS entry, the keytab and the principal in it.
func checkKafkaLogin(c *configs.Connector) error {
	cfg, _, on, err := kafkaGSSAPIConfig(c.Consumer.Overrides)
	if err != nil || !on {
		return err
	}
	cfg.Krb5Conf = c.Kerberos.Krb5Conf
	_, err = kerberos.Prepare(cfg)
	return err
}
