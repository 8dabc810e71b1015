package configs

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/provider"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// setting is one config value and where it came from.
type setting struct {
	value  string
	origin string // "" for the connector file itself; else "worker <file>" or "environment <VAR>"
	// unresolved: the value holds config provider placeholders left as
	// written, read offline (check --offline): it is not validated. (A
	// value a provider resolved is no secret for that alone: only its key
	// makes it one, secret.IsKey.)
	unresolved bool
}

// settings are config values by key.
type settings map[string]setting

func (s settings) values() map[string]string {
	out := make(map[string]string, len(s))
	for k, st := range s {
		out[k] = st.value
	}
	return out
}

// Worker is a Kafka Connect worker configuration (connect-distributed.properties
// and the like, or the Confluent image's CONNECT_* environment): the
// settings connector files do not carry, such as bootstrap.servers, the
// converters and their registry, and consumer.* / producer.* client
// properties. Connector keys win over worker keys, as in Connect.
type Worker struct {
	// Source names where the settings came from, for messages.
	Source string
	// HTTPAddr is the address of the HTTP endpoint, from listeners (the
	// first HTTP listener) or else rest.host.name / rest.port; "" when the
	// worker sets none of them.
	HTTPAddr string
	// HTTPOrigin says where HTTPAddr was set, for messages: "listeners in
	// worker file /etc/kafka/connect.properties", "CONNECT_REST_PORT in
	// the environment".
	HTTPOrigin string
	// NotApplicable are the keys that describe a Connect cluster (group.id,
	// offset.storage.*, plugin.path, ...) and mean nothing to hdfs-sink.
	NotApplicable []string
	// OverridePolicy is connector.client.config.override.policy: All, None
	// or Principal.
	OverridePolicy string

	set       settings
	providers provider.Set
	offline   bool // placeholders are checked, not resolved (ReadOptions)
}

// ReadOptions change how a worker, and the connectors read with it, are
// read.
type ReadOptions struct {
	// Offline reads the files away from the daemon's host (check
	// --offline): config provider placeholders are checked (the provider
	// is declared, the path's form, allowed.paths as written) but not
	// resolved, since the files and the environment they name are the
	// host's; the keys holding them are not validated and
	// Connector.Unresolved lists them.
	Offline bool
}

// Worker sources.
const (
	envPrefix = "CONNECT_"
	envSource = "the environment (CONNECT_*)"
)

// LoadWorker reads a worker properties file and resolves its config
// provider placeholders (KIP-421).
func LoadWorker(path string) (*Worker, []Warning, error) {
	return LoadWorkerWith(path, ReadOptions{})
}

// LoadWorkerWith is LoadWorker with options.
func LoadWorkerWith(path string, o ReadOptions) (*Worker, []Warning, error) {
	data, err := syntax.ReadFile(path)
	if err != nil {
		return nil, nil, &FileError{Source: path, Err: err}
	}
	props, err := syntax.ParseProperties(path, data)
	if err != nil {
		return nil, nil, err
	}
	m := make(map[string]string, len(props))
	for _, p := range props {
		m[p.Key] = p.Value
	}
	return newWorker(path, m, func(string) string { return "worker " + path }, o)
}

// WorkerFromEnv builds a worker from CONNECT_* variables, as Confluent's
// cp-kafka-connect image does: CONNECT_ dropped, lower case, "___" → "_",
// "__" → "-", "_" → "." (CONNECT_BOOTSTRAP_SERVERS → bootstrap.servers).
// It returns nil when no such variable is set.
func WorkerFromEnv(environ []string) (*Worker, []Warning, error) {
	return WorkerFromEnvWith(environ, ReadOptions{})
}

// WorkerFromEnvWith is WorkerFromEnv with options.
func WorkerFromEnvWith(environ []string, o ReadOptions) (*Worker, []Warning, error) {
	m := map[string]string{}
	vars := map[string]string{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) || len(name) == len(envPrefix) {
			continue
		}
		k := EnvToProperty(name)
		m[k], vars[k] = val, name
	}
	if len(m) == 0 {
		return nil, nil, nil
	}
	return newWorker(envSource, m, func(k string) string { return "environment " + vars[k] }, o)
}

// EnvToProperty maps a CONNECT_* variable to its property name.
func EnvToProperty(name string) string {
	s := strings.ToLower(strings.TrimPrefix(name, envPrefix))
	const us, dash = "\x00", "\x01"
	s = strings.ReplaceAll(s, "___", us)
	s = strings.ReplaceAll(s, "__", dash)
	s = strings.ReplaceAll(s, "_", ".")
	return strings.NewReplacer(us, "_", dash, "-").Replace(s)
}

func newWorker(source string, props map[string]string, origin func(string) string, o ReadOptions) (*Worker, []Warning, error) {
	w := &Worker{Source: source, set: settings{}, offline: o.Offline}
	var errs []error
	var perrs []error
	w.providers, perrs = provider.Parse(props, lookupEnv)
	for _, e := range perrs {
		errs = append(errs, workerErr(source, e))
	}
	for _, k := range sortedKeys(props) {
		st, err := w.resolveOne(k, props[k], origin(k))
		if err != nil {
			errs = append(errs, err)
		}
		w.set[k] = st
	}
	warns := w.classify()
	if err := w.readHTTP(); err != nil {
		errs = append(errs, err)
	}
	if err := w.readPolicy(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, w.hiddenValueErrors()...)
	if len(errs) > 0 {
		return nil, warns, errors.Join(errs...)
	}
	return w, warns, nil
}

// lookupEnv is how the worker's EnvVarConfigProvider reads a variable
// (os.LookupEnv); tests replace it.
var lookupEnv = os.LookupEnv

// workerErr names the worker in an error about one of its providers.
func workerErr(source string, err error) error {
	var pe *provider.ParamError
	if errors.As(err, &pe) {
		return &FieldError{Source: source, Key: pe.Key, Value: pe.Value, Set: pe.Set, Reason: pe.Reason}
	}
	return fmt.Errorf("%s: %w", source, err)
}

func (w *Worker) resolveOne(k, v, origin string) (setting, error) {
	st := setting{value: v, origin: origin}
	if provider.IsKey(k) {
		return st, nil
	}
	var err error
	st.value, st.unresolved, err = w.resolve(v)
	if err != nil {
		key := k
		if note := originNote(w.Source, origin); note != "" {
			key += " (" + note + ")"
		}
		return st, &ResolveError{Source: w.Source, Key: key, Err: err}
	}
	return st, nil
}

// resolve replaces the placeholders of v with the worker's providers, or,
// offline, only checks them (unresolved: v holds some, kept as written).
// A nil worker has no providers.
func (w *Worker) resolve(v string) (out string, unresolved bool, err error) {
	var ps provider.Set
	if w != nil {
		ps = w.providers
	}
	if w != nil && w.offline {
		found, err := ps.CheckOffline(v)
		return v, found, err
	}
	out, _, err = ps.Resolve(v)
	return out, false, err
}

// originNote is the origin to print next to a key of source: for a worker
// file the file itself says it, for the environment the variable does.
func originNote(source, origin string) string {
	if source == envSource {
		return origin
	}
	return ""
}

// classify sorts the worker's keys, listing those with no meaning here and
// warning of unknown ones.
func (w *Worker) classify() []Warning {
	var warns []Warning
	for _, k := range sortedKeys(w.set) {
		switch workerKind(k) {
		case workerNotApplicable:
			w.NotApplicable = append(w.NotApplicable, k)
		case workerUnknown:
			msg := "unknown worker key, ignored"
			if s := closest(k, workerKeys()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			warns = append(warns, Warning{Source: w.Source, Key: k, Message: msg})
		}
	}
	return warns
}

func (w *Worker) get(k string) string { return strings.TrimSpace(w.set[k].value) }

func (w *Worker) fail(k, reason string) error {
	return &FieldError{Source: w.Source, Key: k, Value: w.Show(k), Set: true, Reason: reason, Origin: originNote(w.Source, w.set[k].origin)}
}

// readHTTP reads listeners (Connect's REST listeners), else the older
// rest.host.name / rest.port, into HTTPAddr.
func (w *Worker) readHTTP() error {
	if ls := splitList(w.get("listeners")); len(ls) > 0 {
		return w.readListeners(ls)
	}
	host, port := w.get("rest.host.name"), w.get("rest.port")
	if host == "" && port == "" {
		return nil
	}
	if port == "" {
		port = "8083" // Connect's default rest.port
	}
	if !validPort(port) {
		return w.fail("rest.port", "must be a port number (1-65535)")
	}
	w.HTTPAddr = net.JoinHostPort(host, port)
	w.HTTPOrigin = w.keyOrigin("rest.host.name", "rest.port")
	return nil
}

func (w *Worker) readListeners(ls []string) error {
	for _, l := range ls {
		u, err := url.Parse(l)
		if err != nil || u.Port() == "" || !validPort(u.Port()) {
			return w.fail("listeners", fmt.Sprintf("%q must be HTTP://host:port (the host may be empty)", l))
		}
		if strings.EqualFold(u.Scheme, "http") {
			w.HTTPAddr = net.JoinHostPort(u.Hostname(), u.Port())
			w.HTTPOrigin = w.keyOrigin("listeners")
			return nil
		}
	}
	return w.fail("listeners", "needs an http:// listener for the address: hdfs-sink serves HTTPS with run --rest-tls-cert and --rest-tls-key, not with listeners.https.* stores")
}

// Override policies (connector.client.config.override.policy).
const (
	PolicyAll       = "All"
	PolicyNone      = "None"
	PolicyPrincipal = "Principal"
)

const policyPackage = "org.apache.kafka.connect.connector.policy."

func (w *Worker) readPolicy() error {
	v := w.get("connector.client.config.override.policy")
	w.OverridePolicy = PolicyAll // Connect's default since Kafka 3.0
	if v == "" {
		return nil
	}
	name := strings.TrimSuffix(strings.TrimPrefix(v, policyPackage), "ConnectorClientConfigOverridePolicy")
	switch name {
	case PolicyAll, PolicyNone, PolicyPrincipal:
		w.OverridePolicy = name
		return nil
	}
	return w.fail("connector.client.config.override.policy", "must be All, None or Principal (or "+policyPackage+"<name>ConnectorClientConfigOverridePolicy)")
}

// Show prints the value of key with secrets hidden.
func (w *Worker) Show(key string) string {
	if secret.IsKey(key) {
		return secret.Hidden
	}
	return secret.URL(w.set[key].value)
}

// PropertyToEnv is the CONNECT_* variable that sets property k (the
// inverse of EnvToProperty).
func PropertyToEnv(k string) string {
	r := strings.NewReplacer("_", "___", "-", "__", ".", "_")
	return envPrefix + strings.ToUpper(r.Replace(k))
}
