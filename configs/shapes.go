package configs

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// rawConnector is one connector as a file states it, before any worker
// setting or default is applied.
type rawConnector struct {
	name   string
	raw    map[string]string
	warns  []Warning
	nameOK bool // false when no name could be found at all
}

// splitConnectors reads every connector a file holds, in any shape Kafka
// Connect users have: a standalone-mode .properties file; a POST /connectors
// body {"name", "config"} (also a GET /connectors/<name> answer, with
// "tasks" and "type"); a PUT /connectors/<name>/config body (a flat map,
// named by its "name" key or else by the file name, as the PUT URL names
// it); or an export of GET /connectors?expand=info holding several.
func splitConnectors(source string, data []byte) ([]rawConnector, []Warning, error) {
	if strings.EqualFold(filepath.Ext(source), ".properties") {
		rcs, err := propertiesConnector(source, data)
		return rcs, nil, err
	}
	top, err := syntax.DecodeJSON(source, data)
	if err != nil && syntax.LooksLikeProperties(data) {
		return nil, nil, &SyntaxError{Source: source, Line: 1, Col: 1, Msg: "not JSON: this looks like a Java .properties file (key=value lines); name it " +
			fileName(source) + ".properties to load it as one"}
	}
	if err != nil {
		return nil, nil, err
	}
	if isExport(top) {
		return exportConnectors(source, top)
	}
	rc, err := jsonConnector(source, top, fileName(source))
	if err != nil {
		return nil, nil, err
	}
	return []rawConnector{rc}, nil, nil
}

func propertiesConnector(source string, data []byte) ([]rawConnector, error) {
	props, err := syntax.ParseProperties(source, data)
	if err != nil {
		return nil, err
	}
	raw := make(map[string]string, len(props))
	for _, p := range props {
		raw[p.Key] = p.Value
	}
	name := strings.TrimSpace(raw["name"])
	if name == "" {
		name = fileName(source)
	}
	return []rawConnector{{name: name, raw: raw, nameOK: name != ""}}, nil
}

// fileName is the base name without extension: what a PUT URL would say.
func fileName(source string) string {
	base := filepath.Base(source)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// isExport reports the GET /connectors?expand=info shape: every member is
// an object holding "info" (or, with expand=status alone, "status").
func isExport(top *syntax.Object) bool {
	if len(top.Keys) == 0 {
		return false
	}
	for _, k := range top.Keys {
		o, ok := top.Vals[k].(*syntax.Object)
		if !ok {
			return false
		}
		_, info := o.Get("info")
		_, status := o.Get("status")
		if !info && !status {
			return false
		}
	}
	return true
}

// exportConnectors reads an export connector by connector. An export of
// a Connect cluster holds its other connectors too (JDBC, S3, sources):
// those are skipped with a warning naming them, the HDFS sinks loaded. A
// file left with none is an error: loading nothing from it cannot be
// what was meant.
func exportConnectors(source string, top *syntax.Object) ([]rawConnector, []Warning, error) {
	var out []rawConnector
	var warns []Warning
	var skipped []string
	var errs []error
	for _, k := range top.Keys {
		entry := top.Vals[k].(*syntax.Object)
		info, ok := entry.Vals["info"].(*syntax.Object)
		if !ok {
			errs = append(errs, top.ErrAt(source, k, fmt.Sprintf("connector %q: the export has no \"info\" object: export with GET /connectors?expand=info", k)))
			continue
		}
		rc, err := jsonConnector(source, info, k)
		if err == nil && rc.name != k {
			err = top.ErrAt(source, k, fmt.Sprintf("connector %q: info.name is %q", k, rc.name))
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if class := strings.TrimSpace(rc.raw["connector.class"]); class != "" && !connectorClasses[class] {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", k, class))
			warns = append(warns, Warning{Connector: k, Key: "connector.class",
				Message: "skipped: " + class + " is not an HDFS sink connector; the export's HDFS sink connectors are loaded"})
			continue
		}
		out = append(out, rc)
	}
	if len(out) == 0 && len(skipped) > 0 && len(errs) == 0 {
		errs = append(errs, &FileError{Source: source, Err: fmt.Errorf("the export holds no HDFS sink connector (skipped: %s)", strings.Join(skipped, ", "))})
	}
	return out, warns, errors.Join(errs...)
}

// jsonConnector reads the {"name", "config"} shape or a flat map; fallback
// names the connector when the file does not.
func jsonConnector(source string, top *syntax.Object, fallback string) (rawConnector, error) {
	cfg := top
	var rc rawConnector
	if v, ok := top.Get("config"); ok {
		inner, isObj := v.(*syntax.Object)
		if !isObj {
			return rc, top.ErrAt(source, "config", "\"config\" must be a JSON object of connector settings, not "+syntax.Kind(v))
		}
		cfg = inner
		rc.warns = restMembers(top)
	}
	raw, err := configValues(source, cfg)
	if err != nil {
		return rc, err
	}
	name, err := connectorName(source, top, cfg, raw)
	if err != nil {
		return rc, err
	}
	if name == "" {
		name = fallback
	}
	rc.name, rc.raw, rc.nameOK = name, raw, name != ""
	return rc, nil
}

// restMembers warns of top-level members a REST body does not have.
func restMembers(top *syntax.Object) []Warning {
	var out []Warning
	for _, k := range top.Keys {
		if k != "name" && k != "config" && k != "tasks" && k != "type" {
			out = append(out, Warning{Key: k, Message: "top-level member ignored (only \"name\" and \"config\" are read)"})
		}
	}
	return out
}

// configValues turns the config object into strings. Values may be JSON
// strings, numbers, booleans or lists of those (joined with ","); null
// means "not set".
func configValues(source string, cfg *syntax.Object) (map[string]string, error) {
	raw := make(map[string]string, len(cfg.Keys))
	var errs []error
	for _, k := range cfg.Keys {
		s, ok, err := scalarString(cfg.Vals[k])
		if err != nil {
			errs = append(errs, cfg.ErrAt(source, k, k+": "+err.Error()))
		} else if ok {
			raw[k] = s
		}
	}
	return raw, errors.Join(errs...)
}

// connectorName takes the top-level name of the REST shape, else the config
// "name"; when both are present they must agree.
func connectorName(source string, top, cfg *syntax.Object, raw map[string]string) (string, error) {
	inner := strings.TrimSpace(raw["name"])
	if top == cfg {
		return inner, nil
	}
	v, _ := top.Get("name")
	outer, isStr := v.(string)
	if v != nil && !isStr {
		return "", top.ErrAt(source, "name", "\"name\" must be a string, not "+syntax.Kind(v))
	}
	outer = strings.TrimSpace(outer)
	switch {
	case outer == "":
		return inner, nil
	case inner != "" && inner != outer:
		return "", top.ErrAt(source, "name", fmt.Sprintf("name %q differs from config name %q", outer, inner))
	}
	return outer, nil
}

func scalarString(v any) (string, bool, error) {
	switch x := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return x, true, nil
	case json.Number:
		return x.String(), true, nil
	case bool:
		if x {
			return "true", true, nil
		}
		return "false", true, nil
	case []any:
		return listString(x)
	}
	return "", false, errors.New("value must be a string, number, boolean or list, not an object")
}

func listString(x []any) (string, bool, error) {
	parts := make([]string, 0, len(x))
	for _, e := range x {
		s, ok, err := scalarString(e)
		if _, nested := e.([]any); err != nil || nested || !ok {
			return "", false, errors.New("list elements must be strings, numbers or booleans")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ","), true, nil
}

// sortedKeys returns m's keys in order, for reproducible output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
