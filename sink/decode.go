package sink

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/convert"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink/extras"
	"github.com/hdfs-sink/hdfs-sink/transform"
)

// The record pipeline, Kafka record to writable record, in Connect's order:
// the value and key converters, the extra columns, the transforms; and the
// schema a partition's committed files are written with (the same steps for
// a registry id).

// decode turns a Kafka record into a writable one: the value converter
// makes its value an Avro schema and datum (or bytes written as they
// are), the key converter its key; headers pass as they are; then the
// extra columns and the transforms apply. A nil record with a nil error is
// not written: a null value that behavior.on.null.values says to ignore,
// or a record a transform dropped. tr is the partition's, reused (see
// transform).
func (c *Connector) decode(ctx context.Context, kr *kgo.Record, tr *transform.Record) (*record, error) {
	r := new(record)
	if ok, err := c.decodeTo(ctx, kr, tr, r); !ok || err != nil {
		return nil, err
	}
	return r, nil
}

// decodeTo is decode into r, which the caller owns (writeRecord's is on
// its stack); ok false: r is not to be written.
func (c *Connector) decodeTo(ctx context.Context, kr *kgo.Record, tr *transform.Record, r *record) (ok bool, err error) {
	v, unchecked, err := c.convertValue(ctx, kr)
	if err != nil {
		return false, err
	}
	if v.IsNull() && c.cfg.Transforms == nil {
		return false, c.nullValue(kr)
	}
	key, err := c.convertKey(ctx, kr)
	if err != nil {
		return false, err
	}
	*r = record{Offset: kr.Offset, LeaderEpoch: kr.LeaderEpoch, Timestamp: kr.Timestamp, Schema: v.Schema, Datum: v.Datum,
		Key: key, Headers: kr.Headers}
	if c.extras != nil && r.Schema != nil {
		if r.Schema, r.Datum, err = c.extras.Apply(r.Schema, r.Datum, kr); err != nil {
			return false, err
		}
	}
	if c.cfg.Transforms == nil {
		return true, nil
	}
	// The transforms see null values too (Filter, RecordIsTombstone).
	ok, err = c.transform(kr, r, v.IsNull(), tr)
	if err != nil && unchecked {
		// The chain took the datum unchecked: its first step scans the
		// whole datum as Validate does (transform.Chain.Validates), so a
		// record it kept is valid. One it refused may be corrupt: that is
		// then the converter's error, as without the transforms (the same
		// message and dead-letter headers).
		if verr := v.Schema.Validate(v.Datum); verr != nil {
			return false, verr
		}
	}
	return ok, err
}

// uncheckedConverter is a value converter that can leave the datum's check
// against its schema to its caller (convert.Avro).
type uncheckedConverter interface {
	ConvertUnchecked(ctx context.Context, topic string, data []byte) (convert.Value, error)
}

// uncheckedValue is cfg's value converter if it can leave the datum's check
// to the transforms, and they check it in the scan that rewrites it (a
// second scan was a third of a chain's cost on 100 B records); else nil.
// Extra columns come between the two, so with them the converter checks.
func uncheckedValue(cfg Config, ext *extras.Columns) uncheckedConverter {
	if ext != nil || !cfg.Transforms.Validates() {
		return nil
	}
	u, _ := cfg.Value.(uncheckedConverter)
	return u
}

// convertValue is value.converter; without one the bytes are the value. A
// tombstone is the null Value. unchecked: the datum was not checked against
// its schema (uncheckedValue).
func (c *Connector) convertValue(ctx context.Context, kr *kgo.Record) (v convert.Value, unchecked bool, err error) {
	switch {
	case c.cfg.Value == nil || kr.Value == nil:
		return convert.Value{Datum: kr.Value}, false, nil
	case c.unchecked != nil:
		v, err = c.unchecked.ConvertUnchecked(ctx, kr.Topic, kr.Value)
		return v, err == nil, err
	}
	v, err = c.cfg.Value.Convert(ctx, kr.Topic, kr.Value)
	return v, false, err
}

// convertKey is key.converter; without one (or for a null key) the key is
// its bytes as they are.
func (c *Connector) convertKey(ctx context.Context, kr *kgo.Record) (convert.Value, error) {
	if c.cfg.Key == nil || kr.Key == nil {
		return convert.Value{Datum: kr.Key}, nil
	}
	k, err := c.cfg.Key.Convert(ctx, kr.Topic, kr.Key)
	if err != nil {
		return convert.Value{}, &keyError{err}
	}
	return k, nil
}

// nullValue applies behavior.on.null.values to a tombstone (or a value
// its converter or a transform made null).
func (c *Connector) nullValue(kr *kgo.Record) error {
	if c.cfg.FailOnNull {
		return errNullValue
	}
	c.Stats.NullsIgnored.Add(1)
	c.cfg.Observer.Tombstone(kr.Topic, kr.Partition)
	return nil
}

// transform runs the connector's transforms on decoded record r, in place (null: its
// value is null); ok false: r is not written. A dropped record's offset is committed
// with the batch, as an ignored tombstone's is. tr is the partition's:
// reused, it costs no allocation per record, and its Scratch may hold the
// value built: every format copies a datum before WriteDatum returns, and
// the partition writes a record before it decodes the next.
func (c *Connector) transform(kr *kgo.Record, r *record, null bool, tr *transform.Record) (bool, error) {
	scratch := tr.Scratch
	if scratch == nil {
		scratch = make([]byte, 0, 1024) // non-nil: the chain may use it
	}
	*tr = transform.Record{Topic: kr.Topic, Partition: kr.Partition, Offset: kr.Offset, Timestamp: kr.Timestamp,
		Key: transform.Value{Schema: r.Key.Schema, Bytes: r.Key.Datum}, Headers: kr.Headers, Scratch: scratch}
	if !null {
		tr.Value = transform.Value{Schema: r.Schema, Bytes: r.Datum}
	}
	keep, err := c.cfg.Transforms.Apply(tr)
	switch {
	case err != nil:
		return false, err
	case !keep:
		c.Stats.Filtered.Add(1)
		return false, nil
	case tr.Value.IsNull():
		return false, c.nullValue(kr)
	case tr.Value.Schema == nil && !c.cfg.Schemaless:
		return false, &transform.Error{Transform: "(chain)", Class: "-", Err: errors.New("the transforms left a value without a schema")}
	}
	r.Schema, r.Datum = tr.Value.Schema, tr.Value.Bytes
	r.Key, r.Headers = convert.Value{Schema: tr.Key.Schema, Datum: tr.Key.Bytes}, tr.Headers
	return true, nil
}

// schemaForFiles is the schema records of topic with registry id id are
// written with: the registry's, with the extra columns, through the
// transforms. Partitions use it to make the committed files' schema
// current again after a recovery.
func (c *Connector) schemaForFiles(ctx context.Context, topic string, id int32) (*schema.Schema, error) {
	s, err := c.schemaByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if c.extras != nil {
		if s, err = c.extras.Schema(s); err != nil {
			return nil, err
		}
	}
	return c.cfg.Transforms.ValueSchema(topic, s)
}

// schemaByID is the value converter's schema of a registry id (a bounded
// wait, convert.Avro.SchemaByID).
func (c *Connector) schemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	src, ok := c.schemaSource()
	if !ok {
		return nil, fmt.Errorf("schema %d: %w: value.converter has no schema ids", id, schema.ErrUnknownSchema)
	}
	return src.SchemaByID(ctx, id)
}

// schemaSource is the value converter when its schema ids are stable
// across restarts, so the WAL's schema id finds its schema again.
func (c *Connector) schemaSource() (convert.SchemaSource, bool) {
	src, ok := c.cfg.Value.(convert.SchemaSource)
	return src, ok
}
