package convert

import (
	"context"
	"time"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// AvroClass is Confluent's Avro converter, the only one whose values name
// a registry schema id.
const AvroClass = "io.confluent.connect.avro.AvroConverter"

// DefaultLookupWait bounds a schema lookup that goes to the registry.
const DefaultLookupWait = 30 * time.Second

// Avro is Confluent's AvroConverter: the wire format (magic byte, schema
// id, binary datum), the writer schema from the registry, and the datum
// checked against it so a corrupt record never reaches a committed file.
type Avro struct {
	reg   schema.Registry
	cache interface {
		Cached(id int32) *schema.Schema
	}
	wait time.Duration
}

// NewAvro reads values through reg. A lookup that is not cached waits
// wait at most (<= 0: DefaultLookupWait).
func NewAvro(reg schema.Registry, wait time.Duration) *Avro {
	if wait <= 0 {
		wait = DefaultLookupWait
	}
	a := &Avro{reg: reg, wait: wait}
	a.cache, _ = reg.(interface{ Cached(int32) *schema.Schema })
	return a
}

// Convert splits the framing, finds the schema and checks the datum.
func (a *Avro) Convert(ctx context.Context, topic string, data []byte) (Value, error) {
	v, err := a.ConvertUnchecked(ctx, topic, data)
	if err != nil {
		return Value{}, err
	}
	if err := v.Schema.Validate(v.Datum); err != nil {
		return Value{}, err
	}
	return v, nil
}

// ConvertUnchecked is Convert without the datum's check, for a caller
// whose next step scans the whole datum as Schema.Validate does and that
// calls Validate itself when that step fails: the sink before transforms
// that rewrite every value (transform.Chain.Validates), so that a record
// is scanned once, not twice.
func (a *Avro) ConvertUnchecked(ctx context.Context, _ string, data []byte) (Value, error) {
	id, datum, err := schema.ParseWire(data)
	if err != nil {
		return Value{}, err
	}
	s, err := a.SchemaByID(ctx, id)
	if err != nil {
		return Value{}, err
	}
	return Value{Schema: s, Datum: datum}, nil
}

// SchemaByID waits the lookup wait at most for a schema. The poll loop
// writes a poll's partitions in parallel and waits for all of them, so a
// lookup that waited for the registry as long as it was down held every
// partition of the connector (and the group's rebalances); past the wait
// the partition breaks, the others go on, and it retries with backoff.
func (a *Avro) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	if a.cache != nil {
		// Nearly every record: a deadline costs a timer and a context per
		// record (18 % of all CPU in a profile, issue 25), and a cached
		// schema never waits.
		if s := a.cache.Cached(id); s != nil {
			return s, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, a.wait)
	defer cancel()
	return a.reg.SchemaByID(ctx, id)
}
