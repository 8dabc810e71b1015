package wiring

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
	"github.com/hdfs-sink/hdfs-sink/kerberos"
	"github.com/hdfs-sink/hdfs-sink/oauth"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/schema/registry"
	"github.com/hdfs-sink/hdfs-sink/tlsprops"
)

// kafkaProps are the security properties of the connector's Kafka client,
// the consumer, which also produces to the dead-letter topic: the
// security keys of the consumer's properties as configs resolved them with
// Connect's precedence (worker consumer.*, then the connector's
// consumer.override.*). The namer gives each key as the file spells it,
// and which file, for errors.
func kafkaProps(c *configs.Connector) (kafkaclient.Props, tlsprops.Namer) {
	props := kafkaclient.Props{}
	for k, v := range c.Kafka.Consumer {
		if kafkaclient.IsSecurityKey(k) {
			props[k] = v
		}
	}
	return props, func(k string) string { return c.Kafka.KeyOf("consumer", k) }
}

// KafkaSecurity parses the connector's Kafka security settings; an error
// names the connector and every key that cannot be honoured. A GSSAPI
// client logs in through logins (nil: it cannot, as when checking) with
// the connector's hdfs.sink.krb5.conf.
func KafkaSecurity(c *configs.Connector, logins *kerberos.Logins) (*kafkaclient.Security, error) {
	props, name := kafkaProps(c)
	sec, err := kafkaclient.ParseWith(props, name, kafkaclient.Kerberos{Krb5Conf: hostPath(kerberos.Krb5ConfPath(c.Kerberos.Krb5Conf)), Logins: logins})
	if err != nil {
		return nil, eachPrefixed(fmt.Sprintf("connector %q (%s): ", c.Name, c.Source), err)
	}
	return sec, nil
}

// producerSecurity refuses producer.* and producer.override.* security
// keys that differ from the consumer's: the dead-letter producer is the
// consumer's client and can only connect as the consumer does.
func producerSecurity(c *configs.Connector) error {
	props, _ := kafkaProps(c)
	var errs []error
	for _, name := range sortedKeys(c.Kafka.Producer) {
		v := c.Kafka.Producer[name]
		if !kafkaclient.IsSecurityKey(name) || v == props[name] {
			continue
		}
		errs = append(errs, fmt.Errorf("connector %q (%s): %s: differs from the consumer's %s: the dead-letter producer shares the consumer's client and connection settings",
			c.Name, c.Source, c.Kafka.KeyOf("producer", name), name))
	}
	return errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// eachPrefixed puts prefix before each of the joined errors of err.
func eachPrefixed(prefix string, err error) error {
	var list []error
	var flatten func(error)
	flatten = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				flatten(inner)
			}
			return
		}
		list = append(list, fmt.Errorf("%s%w", prefix, e))
	}
	flatten(err)
	return errors.Join(list...)
}

// kafkaFatal is sink.Config.KafkaFatal: the refusals of sec.
func kafkaFatal(sec *kafkaclient.Security) func(error) error {
	return func(err error) error {
		if ae := sec.Fatal(err); ae != nil {
			return ae
		}
		return nil
	}
}

// RegistryFor is the connector's schema registry client; nil for
// schemaless values, which need none.
func RegistryFor(c *configs.Connector, log *slog.Logger) (schema.Registry, error) {
	if !c.NeedsRegistry() {
		return nil, nil // values are not Avro: no registry
	}
	reg, err := RegistryWithin(c, log, 0)
	if err != nil {
		return nil, err
	}
	return reg, nil
}

// RegistryWithin is RegistryFor with each registry request bounded by
// bound (0: registry.DefaultTimeout): `hdfs-sink check --connect` reports
// a hung registry after its probe bound and leaves no request waiting much
// longer. Values not read through a registry: nil.
func RegistryWithin(c *configs.Connector, log *slog.Logger, bound time.Duration) (*registry.Client, error) {
	if !c.NeedsRegistry() {
		return nil, nil // values are not Avro: no registry
	}
	cfg, err := registryConfig(c, log)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = bound
	reg, err := registry.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("connector %q: schema registry: %w", c.Name, err)
	}
	return reg, nil
}

// registryConfig is the registry client's configuration from the
// converter's keys: URLs, basic auth (user info, URL or SASL_INHERIT),
// TLS (schema.registry.ssl.*) and bearer tokens.
func registryConfig(c *configs.Connector, log *slog.Logger) (registry.ClientConfig, error) {
	r := c.Registry
	cfg := registry.ClientConfig{URLs: r.URLs, Logger: log.With("connector", c.Name), CacheSize: c.SchemaCacheSize}
	var errs []error
	if err := basicAuth(c, &cfg); err != nil {
		errs = append(errs, err)
	}
	if len(r.Security.SSL) > 0 {
		tlsCfg, err := tlsprops.Config(r.Security.SSL, tlsprops.Prefix("value.converter.schema.registry."))
		if err != nil {
			errs = append(errs, err)
		}
		cfg.TLS = tlsCfg
	}
	if err := bearer(c, &cfg, log); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return cfg, eachPrefixed(fmt.Sprintf("connector %q (%s): ", c.Name, c.Source), errors.Join(errs...))
	}
	return cfg, nil
}

func basicAuth(c *configs.Connector, cfg *registry.ClientConfig) error {
	r := c.Registry
	if r.CredentialsSource == configs.CredentialsSASLInherit {
		jaas := r.Security.InheritJAAS
		if jaas == "" {
			props, _ := kafkaProps(c)
			jaas = props["sasl.jaas.config"]
		}
		u, p, ok := kafkaclient.UserPassword(kafkaclient.Props{"sasl.jaas.config": jaas})
		if !ok {
			return errors.New(`value.converter.basic.auth.credentials.source = "SASL_INHERIT": needs a PLAIN or SCRAM sasl.jaas.config with username and password (value.converter.sasl.jaas.config, else the consumer's)`)
		}
		cfg.Username, cfg.Password = u, p
		return nil
	}
	if r.UserInfo == "" {
		return nil
	}
	u, p, err := registry.ParseUserInfo(r.UserInfo)
	cfg.Username, cfg.Password = u, p
	return err
}

// bearer sets the bearer token: a static one, or OAuth client credentials
// renewed bearer.auth.cache.expiry.buffer.seconds before expiry. A refused
// grant is a refusal of the registry client (schema.ErrRegistryRefused).
func bearer(c *configs.Connector, cfg *registry.ClientConfig, log *slog.Logger) error {
	s := c.Registry.Security
	cfg.Headers = map[string]string{}
	if s.LogicalCluster != "" {
		cfg.Headers["target-sr-cluster"] = s.LogicalCluster
	}
	if s.IdentityPoolID != "" {
		cfg.Headers["Confluent-Identity-Pool-Id"] = s.IdentityPoolID
	}
	switch s.Bearer {
	case configs.BearerStaticToken:
		tok := s.BearerToken
		cfg.BearerToken = func(context.Context) (string, error) { return tok, nil }
	case configs.BearerOAuth:
		o := s.OAuth
		src, err := oauth.ClientCredentials(oauth.Request{Endpoint: o.IssuerURL, ClientID: o.ClientID,
			ClientSecret: o.ClientSecret, Scope: o.Scope, SubClaim: o.SubClaim, TLS: cfg.TLS, Buffer: o.ExpiryBuffer},
			log.With("connector", c.Name, "component", "registry"))
		if err != nil {
			return fmt.Errorf("value.converter.bearer.auth.issuer.endpoint.url: %w", err)
		}
		cfg.BearerToken = func(ctx context.Context) (string, error) {
			tok, err := src.Token(ctx)
			if re := new(oauth.RefusedError); errors.As(err, &re) {
				return "", fmt.Errorf("%w: %w", schema.ErrRegistryRefused, err)
			}
			return tok, err
		}
	}
	return nil
}
