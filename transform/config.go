package transform

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// props reads one transform's or predicate's keys and collects what is
// wrong with them, each naming its full key.
type props struct {
	prefix string
	m      map[string]string
	errs   *[]error
}

func (p props) get(k string) string { return strings.TrimSpace(p.m[k]) }

func (p props) getDefault(k, def string) string {
	if v, ok := p.m[k]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

// list reads a comma-separated list; later names are Connect's older
// aliases (blacklist for exclude).
func (p props) list(keys ...string) []string {
	for _, k := range keys {
		if v := p.get(k); v != "" {
			var out []string
			for _, s := range strings.Split(v, ",") {
				if s = strings.TrimSpace(s); s != "" {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}

func (p props) required(k string) []string {
	l := p.list(k)
	if len(l) == 0 {
		p.fail(k, "is required")
	}
	return l
}

func (p props) fail(k, reason string) {
	*p.errs = append(*p.errs, fmt.Errorf("%s%s: %s", p.prefix, k, reason))
}

func (p props) err() error { return errors.Join(*p.errs...) }

var transformers = map[string]func(key bool, p props) (transformer, error){
	"InsertField": newInsertField, "ReplaceField": newReplaceField, "MaskField": newMaskField, "Cast": newCast,
	"TimestampConverter": newTimestampConverter, "ExtractField": newExtractField, "Flatten": newFlatten,
	"HoistField": newHoistField, "SetSchemaMetadata": newSetSchemaMetadata, "HeaderFrom": newHeaderFrom,
	"ValueToKey": newValueToKey, "RegexRouter": newRegexRouter, "TimestampRouter": newTimestampRouter,
	"Filter":       func(bool, props) (transformer, error) { return filter{}, nil },
	"InsertHeader": newInsertHeader, "DropHeaders": newDropHeaders,
}

var predicates = map[string]func(p props) (predicate, error){
	"TopicNameMatches": newTopicNameMatches, "HasHeaderKey": newHasHeaderKey,
	"RecordIsTombstone": func(props) (predicate, error) { return recordIsTombstone{}, nil },
}

// New builds a connector's chain from its configuration (configs resolved
// the class names); nil when there are no transforms. Every key that is
// wrong is reported, by its full name. Values are taken to have a schema;
// NewForValues says what they are.
func New(ts []configs.TransformSpec, ps []configs.PredicateSpec) (*Chain, error) {
	return NewForValues(ts, ps, WithSchema)
}

// NewForValues is New for a connector whose values are of form values:
// only values with a schema have schema ids, so only they need a value
// transform's predicate to hold for a whole topic (checkSchemas).
func NewForValues(ts []configs.TransformSpec, ps []configs.PredicateSpec, values Form) (*Chain, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	var errs []error
	preds := map[string]predicate{}
	for _, s := range ps {
		mk, ok := predicates[s.Class]
		if !ok {
			errs = append(errs, fmt.Errorf("predicates.%s.type: %s is not implemented", s.Alias, s.Class))
			continue
		}
		pr, err := mk(props{prefix: "predicates." + s.Alias + ".", m: s.Props, errs: new([]error)})
		if err != nil {
			errs = append(errs, err)
		}
		preds[s.Alias] = pr
	}
	c := &Chain{}
	for _, s := range ts {
		st, err := newStep(s, preds)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.steps = append(c.steps, st)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := c.checkSchemas(values); err != nil {
		return nil, err
	}
	c.steps = fuseSteps(c.steps)
	return c, nil
}

func newStep(s configs.TransformSpec, preds map[string]predicate) (step, error) {
	base, variant, _ := strings.Cut(s.Class, "$")
	mk, ok := transformers[base]
	if !ok {
		return step{}, fmt.Errorf("transforms.%s.type: %s is not implemented", s.Alias, s.Class)
	}
	t, err := mk(variant == "Key", props{prefix: "transforms." + s.Alias + ".", m: s.Props, errs: new([]error)})
	if err != nil {
		return step{}, err
	}
	st := step{name: s.Alias, class: s.Class, t: t, negate: s.Negate}
	if s.Predicate != "" {
		if st.pred, ok = preds[s.Predicate]; !ok {
			return step{}, fmt.Errorf("transforms.%s.predicate: %q names no predicate", s.Alias, s.Predicate)
		}
	}
	return st, nil
}

// schemaMapper is a transform that changes the value's (or key's) schema.
type schemaMapper interface {
	outSchema(in *schema.Schema) (*schema.Schema, error)
	onKey() bool
}

// checkSchemas refuses a value-schema change gated by a predicate that
// differs between records of one topic (HasHeaderKey): records of one
// registry id would then be written with two schemas under that id, and
// schema.compatibility and recovery know a schema by its id. Schemaless
// values have no schema id: any predicate may gate their transforms.
func (c *Chain) checkSchemas(values Form) error {
	for _, s := range c.steps {
		if _, ok := s.pred.(*topicNameMatches); ok || s.pred == nil || values != WithSchema {
			continue
		}
		if m, ok := s.t.(schemaMapper); ok && !m.onKey() {
			return fmt.Errorf("transforms.%s.predicate: a predicate on headers or tombstones cannot choose whether %s changes the value's schema: "+
				"records of one schema id would be written with two schemas (use TopicNameMatches, or no predicate)", s.name, s.class)
		}
	}
	for _, s := range c.steps {
		switch s.t.(type) {
		case *regexRouter, *timestampRouter:
			c.changesTopic = true
		}
	}
	return nil
}

// ValueSchema is the schema values of s on topic have after the chain:
// what the files of records of that registry id are written with.
func (c *Chain) ValueSchema(topic string, s *schema.Schema) (*schema.Schema, error) {
	if c == nil {
		return s, nil
	}
	r := &Record{Topic: topic}
	for _, st := range c.steps {
		if st.pred != nil && st.pred.test(r) == st.negate {
			continue
		}
		if rr, ok := st.t.(*regexRouter); ok {
			_, _ = rr.apply(r) // a TopicNameMatches further on sees the routed name, as in Apply
			continue
		}
		m, ok := st.t.(schemaMapper)
		if !ok || m.onKey() {
			continue
		}
		var err error
		if s, err = m.outSchema(s); err != nil {
			return nil, &Error{Transform: st.name, Class: st.class, Err: err}
		}
	}
	return s, nil
}

// Form is what a connector's keys or values are when the transforms get
// them, by their converter.
type Form int

const (
	// WithSchema: a converter that gives a schema (AvroConverter,
	// JsonConverter with schemas.enable=true, …): Avro datums.
	WithSchema Form = iota
	// SchemalessJSON: JsonConverter with schemas.enable=false: JSON text,
	// which the transforms with a schemaless branch work on (Connect's
	// applySchemaless on a Map).
	SchemalessJSON
	// RawBytes: StringConverter, ByteArrayConverter: no fields at all.
	RawBytes
)

// needs names the transform of step s that cannot work on a side (key
// or value) of form f; "": it can (or it does not touch that side).
func needs(s step, onKey bool, f Form) string {
	if f == WithSchema {
		return ""
	}
	switch t := s.t.(type) {
	case *valueRewriter:
		if t.key == onKey && (f == RawBytes || t.json == nil) {
			return s.name
		}
	case *fused:
		if !onKey {
			if f == RawBytes {
				return s.name
			}
			return t.withoutJSON()
		}
	case *valueToKey:
		if !onKey && f == RawBytes {
			return s.name
		}
	case *headerFrom:
		if t.key == onKey && f == RawBytes {
			return s.name
		}
	}
	return ""
}

// NeedsKeySchemas names the first $Key transform that cannot work on the
// connector's keys (of form keys; ValueToKey makes them the value's form):
// on keys a converter leaves as bytes every one but the header transforms
// would fail every record with a key; on schemaless JSON keys, those
// without a schemaless branch. "": none.
func (c *Chain) NeedsKeySchemas(keys, values Form) string {
	if c == nil {
		return ""
	}
	for _, s := range c.steps {
		if _, ok := s.t.(*valueToKey); ok {
			keys = values
			continue
		}
		if name := needs(s, true, keys); name != "" {
			return name
		}
	}
	return ""
}

// NeedsSchemas names the first transform that cannot work on the
// connector's values of form values: on raw bytes every one but Filter,
// the header transforms and the routers; on schemaless JSON those without
// a schemaless branch. It would fail every record. "": none.
func (c *Chain) NeedsSchemas(values Form) string {
	if c == nil {
		return ""
	}
	for _, s := range c.steps {
		if name := needs(s, false, values); name != "" {
			return name
		}
	}
	return ""
}
