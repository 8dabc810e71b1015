package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/secret"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// configInfos is Connect's ConfigInfos, the answer of
// PUT /connector-plugins/<class>/config/validate.
type configInfos struct {
	Name       string       `json:"name"`
	ErrorCount int          `json:"error_count"`
	Groups     []string     `json:"groups"`
	Configs    []configInfo `json:"configs"`
}

type configInfo struct {
	Definition configKeyInfo   `json:"definition"`
	Value      configValueInfo `json:"value"`
}

type configKeyInfo struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"`
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"`
	Documentation string   `json:"documentation"`
	Group         string   `json:"group"`
	Order         int      `json:"order"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

type configValueInfo struct {
	Name              string   `json:"name"`
	Value             *string  `json:"value"`
	RecommendedValues []string `json:"recommended_values"`
	Errors            []string `json:"errors"`
	Visible           bool     `json:"visible"`
}

// wholeConnector is the entry for errors that belong to no one key (the
// wiring: format, partitioner, name lengths).
const wholeConnector = "connector"

func validateConfig(worker *configs.Worker, class string, cfg map[string]any) configInfos {
	byKey := map[string][]string{}
	errs, redact := checkConfig(worker, cfg)
	for _, err := range errs {
		var fe *configs.FieldError
		key := wholeConnector
		if errors.As(err, &fe) {
			key = fe.Key
		}
		byKey[key] = append(byKey[key], wiring.RedactedErrors(redact, err)...)
	}
	keys := make([]string, 0, len(cfg)+len(byKey))
	for k := range cfg {
		keys = append(keys, k)
	}
	for k := range byKey {
		if _, given := cfg[k]; !given {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := configInfos{Name: class, Groups: []string{"Common"}, Configs: []configInfo{}}
	for i, k := range keys {
		out.ErrorCount += len(byKey[k])
		out.Configs = append(out.Configs, configEntry(redact, k, cfg, byKey[k], i))
	}
	return out
}

// checkConfig runs configs (with the worker run loaded) and the wiring on
// cfg, as check would, and lists every error; the Redactor hides the
// secrets of cfg and the worker in what is shown.
func checkConfig(worker *configs.Worker, cfg map[string]any) ([]error, *secret.Redactor) {
	name := "request"
	if n, ok := cfg["name"].(string); ok && n != "" {
		name = n
	}
	data, err := json.Marshal(map[string]any{"name": name, "config": cfg})
	if err != nil {
		return []error{err}, nil
	}
	conns, _, err := configs.ParseFile("request", data, worker)
	redact := configs.NewRedactor(worker, conns...)
	if err == nil {
		err = wiring.CheckWiring(conns, redact)
	}
	if err == nil {
		return nil, redact
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap(), redact
	}
	return []error{err}, redact
}

func configEntry(r *secret.Redactor, key string, cfg map[string]any, errs []string, order int) configInfo {
	var value *string
	if v, ok := cfg[key]; ok && v != nil {
		s := wiring.Redact(r, key, fmt.Sprint(v))
		value = &s
	}
	if errs == nil {
		errs = []string{}
	}
	return configInfo{
		Definition: configKeyInfo{Name: key, Type: "STRING", Importance: "MEDIUM", Group: "Common", Order: order,
			Width: "NONE", DisplayName: key, Dependents: []string{}},
		Value: configValueInfo{Name: key, Value: value, RecommendedValues: []string{}, Errors: errs, Visible: true},
	}
}
