package main

import (
	"errors"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// hidden replaces a secret wherever a config value is shown.
const hidden = configs.Hidden

// redact is the one function every config value goes through on its way
// into a REST answer (/config, /connectors?expand=info, GET
// /connectors/<n>): configs' Redactor, which hides values by their key
// (passwords, JAAS configs, registry user info, secrets, tokens, SSL keys),
// every value a config provider resolved, and credentials written into
// URLs. A nil Redactor hides by key and URL only.
func redact(r *configs.Redactor, key, value string) string { return r.Show(key, value) }

// redactConfig is redact applied to a whole connector config.
func redactConfig(r *configs.Redactor, raw map[string]string) map[string]string {
	return r.ShowMap(raw)
}

// scrub hides every known secret value and URL credential in free text
// (error texts: a client library may quote the URL it dialled).
func scrub(r *configs.Redactor, s string) string { return r.Text(s) }

// redactedErrors lists the errors in err (a tree of errors.Join) with the
// value of every configs.FieldError passed through redact: a refused
// sasl.jaas.config must not come back in the answer that refuses it.
func redactedErrors(r *configs.Redactor, err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, redactedErrors(r, e)...)
		}
		return out
	}
	var fe *configs.FieldError
	if errors.As(err, &fe) {
		c := *fe
		c.Value = redact(r, fe.Key, fe.Value)
		return []string{scrub(r, c.Error())}
	}
	return []string{scrub(r, err.Error())}
}
