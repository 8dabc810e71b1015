// Package transform owns Kafka Connect's single message transforms (SMTs)
// and predicates as hdfs-sink applies them: after the value is decoded,
// before the record is partitioned, as Connect does. A record here is
// Connect's ConnectRecord in hdfs-sink's own form: a key and a value are an
// Avro writer schema plus its binary datum, or schemaless bytes, or nil.
// Schemaless bytes that are JSON text (JsonConverter without schemas) are
// what the transforms' schemaless branches work on, as Connect's
// applySchemaless works on a Map (jsontext.go, schemaless.go).
//
// Transforms that change a value's shape compile one plan per input schema
// (cached by schema pointer: the registry's cache hands out one *Schema per
// id, and every plan's output schema is itself cached) which rewrites the
// datum by copying the encodings of the top-level fields it keeps
// (schema.FieldSpans) and encoding only what it adds or converts: no record
// is decoded into Go values. An output schema keeps its input's registry
// id, as the extra columns do, so schema.compatibility and recovery see one
// schema per id (the sink's SchemaForFiles applies the chain again).
package transform

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Value is a record's key or value.
type Value struct {
	Schema *schema.Schema // nil: schemaless, Bytes are the raw bytes
	Bytes  []byte         // the Avro datum of Schema, or the raw bytes; nil: null
}

// IsNull reports a null (a tombstone's value, an absent key).
func (v Value) IsNull() bool { return v.Bytes == nil }

// Record is one Kafka record as transforms see and change it.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp time.Time // zero: none
	Key       Value
	Value     Value
	Headers   []kgo.RecordHeader
	// Scratch, when the caller gives one (non-nil), is where a rewrite builds its
	// output (at most one per Apply); afterwards it holds that buffer,
	// grown, for the next record. Value.Bytes (or Key.Bytes) may alias it
	// until the caller reuses it: a buffer per record was most of a
	// chain's cost on 1 KB records.
	Scratch      []byte
	scratchTaken bool
}

// buffer is an empty buffer of capacity n at least for a rewrite's
// output: the scratch the first time, a new one after.
func (r *Record) buffer(n int) []byte {
	if r.scratchTaken || r.Scratch == nil {
		return make([]byte, 0, n)
	}
	r.scratchTaken = true
	if cap(r.Scratch) < n {
		r.Scratch = make([]byte, 0, n+n/4)
	}
	return r.Scratch[:0]
}

// keep records that out, the output of buffer, is the scratch's buffer
// now (append may have moved it).
func (r *Record) keep(out []byte) {
	if r.scratchTaken && cap(out) >= cap(r.Scratch) {
		r.Scratch = out[:0]
	}
}

// ErrTransform marks a record a transform could not handle: a record's own
// fault (errors.tolerance applies), never a passing failure.
var ErrTransform = errors.New("transform failed")

// Error names the transform that failed on a record and why.
type Error struct {
	Transform string // the alias in the transforms list
	Class     string
	Err       error
}

func (e *Error) Error() string {
	return fmt.Sprintf("transform %q (%s): %v", e.Transform, e.Class, e.Err)
}

// Unwrap exposes ErrTransform and the cause.
func (e *Error) Unwrap() []error { return []error{ErrTransform, e.Err} }

// transformer is one configured transform: it rewrites r in place and
// reports false when the record is dropped (Filter).
type transformer interface {
	apply(r *Record) (keep bool, err error)
}

// Predicate is one configured predicate.
type predicate interface {
	test(r *Record) bool
}

type step struct {
	name, class string
	t           transformer
	pred        predicate // nil: always applies
	negate      bool
}

// Chain is a connector's transforms in order, with their predicates. A nil
// *Chain applies nothing. It is safe for concurrent use.
type Chain struct {
	steps []step
	// changesTopic is set when a router transform is in the chain.
	changesTopic bool
}

// Apply runs the chain on r. false: a transform dropped the record (Filter),
// which is then not written. An error is an *Error (ErrTransform).
func (c *Chain) Apply(r *Record) (bool, error) {
	if c == nil {
		return true, nil
	}
	for i := range c.steps {
		s := &c.steps[i]
		if s.pred != nil && s.pred.test(r) == s.negate {
			continue
		}
		keep, err := s.t.apply(r)
		if err != nil {
			return false, &Error{Transform: s.name, Class: s.class, Err: err}
		}
		if !keep {
			return false, nil
		}
	}
	return true, nil
}

// Len is the number of transforms in the chain.
func (c *Chain) Len() int {
	if c == nil {
		return 0
	}
	return len(c.steps)
}

// ChangesTopic reports a transform that may rename a record's topic
// (RegexRouter, TimestampRouter).
func (c *Chain) ChangesTopic() bool { return c != nil && c.changesTopic }

// Validates reports that Apply checks every non-null value with a schema
// as schema.Validate does (the first transform rewrites every value, and
// a rewrite scans its input fully), so the caller need not scan it first.
func (c *Chain) Validates() bool {
	if c == nil || len(c.steps) == 0 || c.steps[0].pred != nil {
		return false
	}
	switch t := c.steps[0].t.(type) {
	case *fused:
		return true
	case *valueRewriter:
		return !t.key
	}
	return false
}
