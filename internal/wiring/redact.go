package wiring

import (
	"errors"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// Redact is the one function every config value goes through on its way
// into a REST answer (/config, /connectors?expand=info, GET
// /connectors/<n>): configs' Redactor, which hides values by their key
// (passwords, JAAS configs, registry user info, secrets, tokens, SSL keys),
// whether written or resolved by a config provider, and credentials
// written into URLs; an address a provider resolved is shown. A nil
// Redactor hides by key and URL only.
func Redact(r *configs.Redactor, key, value string) string { return r.Show(key, value) }

// RedactConfig is Redact applied to a whole connector config.
func RedactConfig(r *configs.Redactor, raw map[string]string) map[string]string {
	return r.ShowMap(raw)
}

// Scrub hides every known secret value and URL credential in free text
// (error texts: a client library may quote the URL it dialled).
func Scrub(r *configs.Redactor, s string) string { return r.Text(s) }

// RedactedErrors lists the errors in err (a tree of errors.Join) with the
// value of every configs.FieldError passed through Redact: a refused
// sasl.jaas.config must not come back in the answer that refuses it.
func RedactedErrors(r *configs.Redactor, err error) []string {
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
