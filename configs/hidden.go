package configs

import (
	"fmt"
	"maps"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/secret"
)

// What the REST API shows of a connector, and why it can come back: Kafka
// Connect's UIs read GET /connectors/<n>/config, change a key and PUT the
// whole map back. The map they read is the file as written (Written), with
// config provider placeholders intact and a literal secret as Hidden; a
// Hidden that comes back is the stored value (the daemon restores it). A
// Hidden that is not restored would become the credential itself, so a
// value holding it is refused everywhere (refuseHidden).

// reasonHidden is why a value holding Hidden is refused.
const reasonHidden = "holds " + secret.Hidden + ", which is how a hidden secret is shown, never a credential: give the value itself, or a config provider placeholder such as ${file:/path:key}"

// NewRedactor collects the secrets of a worker (may be nil) and connectors.
func NewRedactor(w *Worker, conns ...*Connector) *secret.Redactor {
	var all []map[string]string
	if w != nil {
		all = append(all, w.set.values())
	}
	for _, c := range conns {
		all = append(all, c.set.values())
	}
	return secret.NewRedactor(all...)
}

// writtenConfig is a connector's own keys as its file states them, with
// the connector's name, as Kafka Connect returns a config.
func writtenConfig(name string, raw map[string]string) map[string]string {
	out := make(map[string]string, len(raw)+1)
	for k, v := range raw {
		out[k] = v
	}
	if _, ok := out["name"]; !ok && name != "" {
		out["name"] = name
	}
	return out
}

// refuseHidden refuses every setting whose value, placeholders resolved,
// holds Hidden: the connector's own (own), even one the worker's settings
// make it ignore (it is written back and would count once they change),
// and the worker's under them.
func (p *parser) refuseHidden(own settings) {
	all := settings{}
	maps.Copy(all, own)
	maps.Copy(all, p.set)
	for _, k := range sortedKeys(all) {
		if strings.Contains(all[k].value, secret.Hidden) {
			p.fail(k, all[k].value, reasonHidden)
		}
	}
}

// hiddenValueErrors are the worker's settings holding Hidden.
func (w *Worker) hiddenValueErrors() []error {
	var errs []error
	for _, k := range sortedKeys(w.set) {
		if strings.Contains(w.set[k].value, secret.Hidden) {
			errs = append(errs, w.fail(k, reasonHidden))
		}
	}
	return errs
}

// keyOrigin says where the worker set those of keys it sets, for
// messages: "listeners in worker file /etc/connect.properties",
// "CONNECT_REST_PORT in the environment".
func (w *Worker) keyOrigin(keys ...string) string {
	var set []string
	for _, k := range keys {
		if _, ok := w.set[k]; !ok {
			continue
		}
		if v, ok := strings.CutPrefix(w.set[k].origin, "environment "); ok {
			set = append(set, v)
		} else {
			set = append(set, k)
		}
	}
	if w.Source == envSource {
		return fmt.Sprintf("%s in the environment", strings.Join(set, " and "))
	}
	return fmt.Sprintf("%s in worker file %s", strings.Join(set, " and "), w.Source)
}
