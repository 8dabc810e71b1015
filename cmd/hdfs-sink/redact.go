package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// hidden replaces a secret wherever a config value is shown.
const hidden = "[hidden]"

// redact is the one function every config value goes through on its way
// into a REST answer (/config, /connectors?expand=info, GET
// /connectors/<n>). It hides passwords, JAAS configs, registry user info,
// secrets and tokens by key, and credentials written into URLs.
func redact(key, value string) string {
	k := strings.ToLower(key)
	switch {
	case strings.HasSuffix(k, ".password") || k == "password",
		strings.HasSuffix(k, "sasl.jaas.config"),
		strings.HasSuffix(k, "basic.auth.user.info") || strings.HasSuffix(k, ".user.info"),
		strings.HasSuffix(k, ".secret") || strings.Contains(k, "secret."),
		strings.Contains(k, "token"),
		strings.Contains(k, "ssl") && (strings.HasSuffix(k, ".key") || strings.Contains(k, ".key.")):
		return hidden
	}
	return scrubURLs(value)
}

// redactConfig is redact applied to a whole connector config.
func redactConfig(raw map[string]string) map[string]string {
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = redact(k, v)
	}
	return out
}

var userInfoInURL = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://)[^/\s@]+@`)

// scrubURLs hides the user info of every URL in s (error texts too: a
// client library may quote the URL it dialled).
func scrubURLs(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	return userInfoInURL.ReplaceAllString(s, "${1}"+hidden+"@")
}

// redactedErrors lists the errors in err (a tree of errors.Join) with the
// value of every configs.FieldError passed through redact: a refused
// sasl.jaas.config must not come back in the answer that refuses it.
func redactedErrors(err error) []string {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, redactedErrors(e)...)
		}
		return out
	}
	var fe *configs.FieldError
	if errors.As(err, &fe) {
		c := *fe
		c.Value = redact(fe.Key, fe.Value)
		return []string{scrubURLs(c.Error())}
	}
	return []string{scrubURLs(err.Error())}
}
