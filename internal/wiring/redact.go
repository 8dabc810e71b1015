package wiring

import (
	"errors"
	"sort"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/provider"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// Redact is the one function every config value goes through on its way
// into a REST answer (/config, /connectors?expand=info, GET
// /connectors/<n>): configs' Redactor, which hides values by their key
// (passwords, JAAS configs, registry user info, secrets, tokens, SSL keys),
// whether written or resolved by a config provider, and credentials
// written into URLs; an address a provider resolved is shown. A nil
// Redactor hides by key and URL only.
func Redact(r *secret.Redactor, key, value string) string { return r.Show(key, value) }

// RedactConfig is Redact applied to a whole connector config.
func RedactConfig(r *secret.Redactor, raw map[string]string) map[string]string {
	return r.ShowMap(raw)
}

// RedactWritten is a connector's config as its file states it
// (configs.Connector.Written) as the REST API shows it, the way Kafka
// Connect does: a config provider placeholder as written (a reference is
// not a secret), a literal value of a secret-typed key as Hidden, and
// every other value through Scrub (credentials in URLs, a known secret
// quoted elsewhere). RestoreHidden undoes what it hid.
func RedactWritten(r *secret.Redactor, written map[string]string) map[string]string {
	out := make(map[string]string, len(written))
	for k, v := range written {
		out[k] = showWritten(r, k, v)
	}
	return out
}

func showWritten(r *secret.Redactor, key, value string) string {
	switch {
	case provider.IsReference(value):
		return value
	case secret.IsKey(key):
		return secret.Hidden
	}
	return r.Text(value)
}

// RestoreHidden puts the stored value (the file's literal or placeholder)
// back where a config a REST client sends (cfg, changed in place) holds
// exactly what RedactWritten shows for it, and that differs from it: a
// GET → edit → PUT keeps the secrets it could not see. It returns the keys
// restored. A value the client changed keeps the client's value; a
// [hidden] left anywhere is then refused by configs.
func RestoreHidden(r *secret.Redactor, stored map[string]string, cfg map[string]any) []string {
	var restored []string
	for k, v := range cfg {
		s, isString := v.(string)
		old, had := stored[k]
		if !isString || !had || s == old {
			continue
		}
		if shown := showWritten(r, k, old); s == shown {
			cfg[k] = old
			restored = append(restored, k)
		}
	}
	sort.Strings(restored)
	return restored
}

// Scrub hides every known secret value and URL credential in free text
// (error texts: a client library may quote the URL it dialled).
func Scrub(r *secret.Redactor, s string) string { return r.Text(s) }

// RedactedErrors lists the errors in err (a tree of errors.Join) with the
// value of every configs.FieldError passed through Redact: a refused
// sasl.jaas.config must not come back in the answer that refuses it.
func RedactedErrors(r *secret.Redactor, err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, RedactedErrors(r, e)...)
		}
		return out
	}
	var fe *configs.FieldError
	if errors.As(err, &fe) {
		c := *fe
		c.Value = Redact(r, fe.Key, fe.Value)
		return []string{Scrub(r, c.Error())}
	}
	return []string{Scrub(r, err.Error())}
}
