package configs

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// parser reads typed values out of one connector's settings (its own over
// the worker's), collecting every error and warning instead of stopping at
// the first.
type parser struct {
	name, source string
	raw          map[string]string // effective values
	set          settings          // the same, with origins and secrecy
	own          map[string]string // the connector file's own keys
	w            *Worker           // nil without one
	errs         []error
	warns        []Warning
}

// Reasons shared by several keys.
const (
	reasonPositive    = "must be an integer > 0"
	reasonNonNegative = "must be an integer >= 0"
	reasonAnyInt      = "must be an integer (a value <= 0 disables it)"
	reasonBool        = "must be true or false"
)

// maxMillis keeps millisecond values convertible to time.Duration.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// fail records a bad value of key. A secret is never quoted: the value is
// Hidden when the key is password-typed (secret.IsKey).
func (p *parser) fail(key, value, reason string) { p.failOrigin(key, value, p.set[key].origin, reason) }

// failOrigin is fail for a value that came from origin (the worker's
// top-level client properties are not among the connector's settings).
func (p *parser) failOrigin(key, value, origin, reason string) {
	if p.set[key].unresolved {
		return // read offline: the placeholder is not the value (Connector.Unresolved)
	}
	if secret.IsKey(key) {
		value = secret.Hidden
	}
	p.errs = append(p.errs, &FieldError{Connector: p.name, Source: p.source, Key: key, Value: value, Set: true,
		Reason: reason, Origin: origin})
}

func (p *parser) missing(key, reason string) {
	p.errs = append(p.errs, &FieldError{Connector: p.name, Source: p.source, Key: key, Reason: reason})
}

func (p *parser) warn(key, msg string) { p.warnOrigin(key, p.set[key].origin, msg) }

// warnOrigin warns of key, naming where its value came from when that is
// not the connector file.
func (p *parser) warnOrigin(key, origin, msg string) {
	if origin != "" {
		msg += " (set in " + origin + ")"
	}
	p.warns = append(p.warns, Warning{Key: key, Message: msg})
}

// whereFrom ends a "not set" message with the places a worker setting may
// come from: the worker file, the environment, the connector file.
func whereFrom(keys ...string) string {
	env := make([]string, len(keys))
	for i, k := range keys {
		env[i] = PropertyToEnv(k)
	}
	return "set " + strings.Join(keys, " or ") + " in the worker file (--worker), as " + strings.Join(env, " or ") +
		" in the environment, or in the connector file"
}

// get returns the trimmed value of key; Connect trims values too.
func (p *parser) get(key string) (string, bool) {
	v, ok := p.raw[key]
	return strings.TrimSpace(v), ok
}

// has reports whether key is set to a non-empty value.
func (p *parser) has(key string) bool {
	v, _ := p.get(key)
	return v != ""
}

// pick returns the first of keys set to a non-empty value; later keys are
// lower-precedence aliases.
func (p *parser) pick(keys ...string) (key, value string, ok bool) {
	for _, k := range keys {
		if v, _ := p.get(k); v != "" {
			return k, v, true
		}
	}
	return keys[0], "", false
}

func (p *parser) str(key, def string) string {
	if v, ok := p.get(key); ok {
		return v
	}
	return def
}

func (p *parser) integer(key string, def, lowest int64, reason string) int64 {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lowest {
		p.fail(key, v, reason)
		return def
	}
	return n
}

// millis reads a millisecond key; values <= 0 become 0 (off).
func (p *parser) millis(key string, def, lowest int64, reason string) time.Duration {
	n := p.integer(key, def, lowest, reason)
	if n > maxMillis {
		p.fail(key, p.raw[key], "must be at most "+strconv.FormatInt(maxMillis, 10))
		return 0
	}
	return time.Duration(max(n, 0)) * time.Millisecond
}

func (p *parser) boolean(key string, def bool) bool {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true":
		return true
	case "false":
		return false
	}
	p.fail(key, v, reasonBool)
	return def
}

// list splits a comma list, trimming items and dropping empty ones.
func (p *parser) list(key string) []string {
	v, _ := p.get(key)
	return splitList(v)
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// choice maps a value to an enum through table (keys in lower case).
// unsupported holds values the reference accepts and hdfs-sink does not,
// with their own reason.
func choice[T ~string](p *parser, key string, def T, table map[string]T, unsupported map[string]string, reason string) T {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	if t, ok := table[strings.ToLower(v)]; ok {
		return t
	}
	if why, ok := unsupported[strings.ToLower(v)]; ok {
		p.fail(key, v, why)
	} else {
		p.fail(key, v, reason)
	}
	return def
}
