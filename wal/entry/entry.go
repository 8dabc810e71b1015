// Package entry owns the content of WAL entries: the typed records the sink's
// commit protocol writes (a partition claim, a commit of temp→final file
// moves) and their versioned binary encoding. Framing, checksums and files
// are package wal's concern; this package only turns an Entry into bytes and
// back, strictly: Decode accepts exactly the bytes Encode produces.
package entry

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Version is the encoding version written as the first byte of every new
// entry. Version 1 (the fields up to the file moves) is still read, and
// written back unchanged for an entry decoded from it (Legacy), so a WAL
// written before version 2 keeps working (docs/wal.md, "Versions").
const Version = 2

// versionLegacy is the first encoding: no topic id, connector, leader
// epoch, schema, refusal or record time.
const versionLegacy = 1

// TopicIDSize is the length of a Kafka topic id (a UUID, KIP-516).
const TopicIDSize = 16

// Kind says what an entry records.
type Kind uint8

// Entry kinds. Values are part of the on-disk format.
const (
	// KindClaim records that an owner incarnation took over the partition.
	KindClaim Kind = 1
	// KindCommit records files moved from temp to final names and the
	// offset durably committed once the moves are applied.
	KindCommit Kind = 2
)

func (k Kind) String() string {
	switch k {
	case KindClaim:
		return "claim"
	case KindCommit:
		return "commit"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Entry is one WAL record.
type Entry struct {
	Kind            Kind
	Epoch           string // random id of the owner incarnation
	Owner           string // host:pid, for operators
	Topic           string
	Partition       int32
	CommittedOffset int64      // highest Kafka offset durably committed once applied (-1: none)
	Files           []FileMove // KindCommit only
	UnixMillis      int64

	// The fields below are version 2's. A Legacy entry has them all zero,
	// except LeaderEpoch, which is -1 (unknown).

	// TopicID is Kafka's id of the topic whose records the committed files
	// hold (KIP-516): a topic deleted and re-created under the same name
	// has a new one. Zero: unknown (a broker that does not send it, an
	// offsets reset, or a WAL written before version 2).
	TopicID [TopicIDSize]byte
	// Connector names the connector that wrote the entry: two connectors
	// writing one topic into the same directories meet here, whichever
	// processes they run in. Empty: unknown (tools, version 1).
	Connector string
	// LeaderEpoch is the leader epoch of the record at CommittedOffset, so
	// a consumer resuming after it can detect a log truncated below it
	// (KIP-320). -1: unknown.
	LeaderEpoch int32
	// SchemaID is the registry id of the schema of the committed files, the
	// schema that schema.compatibility compares the next record with. 0:
	// none (schemaless values, nothing written, or unknown).
	SchemaID int32
	// Refused, when not empty, says why the partition must not be written
	// until an operator resets it (a claim only): Kafka's log no longer
	// continues what the store holds. Every later claim carries it on.
	Refused string
	// MaxRecordMillis is the highest record time (milliseconds since 1970,
	// the time the partitioner files records by) of everything the
	// partition has committed so far, carried on by claims: completeness
	// markers compare it with a time directory's end (docs/design.md §11).
	// 0: none or unknown (nothing committed, an offsets reset, version 1),
	// which can only hold a directory back, never mark it early.
	MaxRecordMillis int64
	// Legacy marks an entry decoded from version 1; Encode then writes
	// version 1, so every decoded entry re-encodes to its own bytes.
	Legacy bool
}

// FileMove is one temp→final rename of a data file, with the Kafka offsets
// (inclusive) and record count it holds.
type FileMove struct {
	Temp, Final            string
	StartOffset, EndOffset int64
	Records                int64
}

// Errors matched by errors.Is on encode and decode failures.
var (
	ErrInvalid      = errors.New("invalid entry")
	ErrShort        = errors.New("data too short")
	ErrTrailing     = errors.New("trailing data")
	ErrVersion      = errors.New("unknown entry version")
	ErrNonCanonical = errors.New("non-canonical varint")
)

// DecodeError reports where and why an entry failed to decode.
type DecodeError struct {
	Offset int    // byte offset in the entry
	Field  string // field being decoded
	Err    error  // one of the Err* values, possibly wrapped
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decode entry: %s at offset %d: %v", e.Field, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Validate reports whether e can be written: Encode and Decode both apply it
// so that every decodable entry re-encodes to the same bytes.
func (e Entry) Validate() error {
	switch {
	case e.Kind != KindClaim && e.Kind != KindCommit:
		return fmt.Errorf("%w: unknown kind %d", ErrInvalid, e.Kind)
	case e.Kind == KindClaim && len(e.Files) > 0:
		return fmt.Errorf("%w: claim with %d files", ErrInvalid, len(e.Files))
	case e.Epoch == "" || e.Topic == "":
		return fmt.Errorf("%w: empty epoch or topic", ErrInvalid)
	case e.Partition < 0:
		return fmt.Errorf("%w: partition %d", ErrInvalid, e.Partition)
	case e.CommittedOffset < -1:
		return fmt.Errorf("%w: committed offset %d", ErrInvalid, e.CommittedOffset)
	case e.Kind == KindCommit && e.Refused != "":
		return fmt.Errorf("%w: a refused partition commits nothing", ErrInvalid)
	}
	if err := e.validateV2(); err != nil {
		return err
	}
	for i, f := range e.Files {
		if err := f.validate(); err != nil {
			return fmt.Errorf("file %d: %w", i, err)
		}
	}
	return nil
}

func (e Entry) validateV2() error {
	switch {
	case e.LeaderEpoch < -1:
		return fmt.Errorf("%w: leader epoch %d", ErrInvalid, e.LeaderEpoch)
	case e.SchemaID < 0:
		return fmt.Errorf("%w: schema id %d", ErrInvalid, e.SchemaID)
	case e.MaxRecordMillis < 0:
		return fmt.Errorf("%w: max record time %d (0 stands for none)", ErrInvalid, e.MaxRecordMillis)
	case e.Legacy && (e.TopicID != [TopicIDSize]byte{} || e.Connector != "" || e.LeaderEpoch != -1 || e.SchemaID != 0 || e.Refused != "" || e.MaxRecordMillis != 0):
		return fmt.Errorf("%w: a version 1 entry has no topic id, connector, leader epoch, schema, refusal or record time", ErrInvalid)
	}
	return nil
}

func (f FileMove) validate() error {
	switch {
	case f.Temp == "" || f.Final == "":
		return fmt.Errorf("%w: empty temp or final name", ErrInvalid)
	case f.StartOffset < 0 || f.EndOffset < f.StartOffset:
		return fmt.Errorf("%w: offsets [%d, %d]", ErrInvalid, f.StartOffset, f.EndOffset)
	case f.Records < 0:
		return fmt.Errorf("%w: %d records", ErrInvalid, f.Records)
	}
	return nil
}

// Encode returns e's binary encoding (see docs/wal.md, "Entry encoding").
func Encode(e Entry) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("encode entry: %w", err)
	}
	version := byte(Version)
	if e.Legacy {
		version = versionLegacy
	}
	b := make([]byte, 0, 106+len(e.Epoch)+len(e.Owner)+len(e.Topic)+len(e.Connector)+len(e.Refused)+64*len(e.Files))
	b = append(b, version, byte(e.Kind))
	b = appendString(b, e.Epoch)
	b = appendString(b, e.Owner)
	b = appendString(b, e.Topic)
	b = binary.AppendVarint(b, int64(e.Partition))
	b = binary.AppendVarint(b, e.CommittedOffset)
	b = binary.AppendVarint(b, e.UnixMillis)
	b = binary.AppendUvarint(b, uint64(len(e.Files)))
	for _, f := range e.Files {
		b = appendString(b, f.Temp)
		b = appendString(b, f.Final)
		b = binary.AppendVarint(b, f.StartOffset)
		b = binary.AppendVarint(b, f.EndOffset)
		b = binary.AppendVarint(b, f.Records)
	}
	if e.Legacy {
		return b, nil
	}
	b = append(b, e.TopicID[:]...)
	b = appendString(b, e.Connector)
	b = binary.AppendVarint(b, int64(e.LeaderEpoch))
	b = binary.AppendVarint(b, int64(e.SchemaID))
	b = appendString(b, e.Refused)
	return binary.AppendVarint(b, e.MaxRecordMillis), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode parses an encoded entry. It rejects unknown versions, short or
// trailing data, non-minimal varints and entries that fail Validate, so a
// successful Decode re-encodes to exactly b.
func Decode(b []byte) (Entry, error) {
	d := decoder{b: b}
	e := d.entry()
	if d.err == nil && d.off != len(b) {
		d.fail("end", fmt.Errorf("%w: %d bytes", ErrTrailing, len(b)-d.off))
	}
	if d.err == nil {
		if err := e.Validate(); err != nil {
			d.fail("entry", err)
		}
	}
	if d.err != nil {
		return Entry{}, d.err
	}
	return e, nil
}

// decoder reads fields in order; after the first failure every read is a
// no-op, so entry() reads straight through and the caller checks err once.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) entry() Entry {
	var e Entry
	v := d.byte("version")
	if d.err == nil && v != Version && v != versionLegacy {
		d.fail("version", fmt.Errorf("%w: %d", ErrVersion, v))
	}
	e.Kind = Kind(d.byte("kind"))
	e.Epoch = d.string("epoch")
	e.Owner = d.string("owner")
	e.Topic = d.string("topic")
	e.Partition = d.int32("partition")
	e.CommittedOffset = d.varint("committed offset")
	e.UnixMillis = d.varint("unix millis")
	n := d.uvarint("file count")
	if d.err == nil && n > uint64(len(d.b)-d.off) {
		// Each file takes at least one byte: a larger count is a lie that
		// must not size an allocation.
		d.fail("file count", fmt.Errorf("%w: %d files in %d bytes", ErrShort, n, len(d.b)-d.off))
	}
	for i := uint64(0); d.err == nil && i < n; i++ {
		e.Files = append(e.Files, FileMove{
			Temp:        d.string("file temp"),
			Final:       d.string("file final"),
			StartOffset: d.varint("file start offset"),
			EndOffset:   d.varint("file end offset"),
			Records:     d.varint("file records"),
		})
	}
	if v == versionLegacy {
		e.Legacy, e.LeaderEpoch = true, -1
		return e
	}
	copy(e.TopicID[:], d.bytes("topic id", TopicIDSize))
	e.Connector = d.string("connector")
	e.LeaderEpoch = d.int32("leader epoch")
	e.SchemaID = d.int32("schema id")
	e.Refused = d.string("refused")
	e.MaxRecordMillis = d.varint("max record millis")
	return e
}

func (d *decoder) fail(field string, err error) {
	if d.err == nil {
		d.err = &DecodeError{Offset: d.off, Field: field, Err: err}
	}
}

func (d *decoder) byte(field string) byte {
	if d.err != nil {
		return 0
	}
	if d.off >= len(d.b) {
		d.fail(field, ErrShort)
		return 0
	}
	d.off++
	return d.b[d.off-1]
}

func (d *decoder) uvarint(field string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	var minimal [binary.MaxVarintLen64]byte
	switch {
	case n == 0:
		d.fail(field, ErrShort)
	case n < 0:
		d.fail(field, fmt.Errorf("%w: overflows 64 bits", ErrNonCanonical))
	case n != binary.PutUvarint(minimal[:], v):
		d.fail(field, ErrNonCanonical)
	default:
		d.off += n
		return v
	}
	return 0
}

func (d *decoder) varint(field string) int64 {
	u := d.uvarint(field)
	// Zig-zag decoding, as binary.Varint does; minimality was checked on u.
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) int32(field string) int32 {
	v := d.varint(field)
	if v < math.MinInt32 || v > math.MaxInt32 {
		d.fail(field, fmt.Errorf("%w: %d out of int32 range", ErrInvalid, v))
		return 0
	}
	return int32(v)
}

// bytes reads n raw bytes.
func (d *decoder) bytes(field string, n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.fail(field, fmt.Errorf("%w: %d bytes, %d left", ErrShort, n, len(d.b)-d.off))
		return nil
	}
	d.off += n
	return d.b[d.off-n : d.off]
}

func (d *decoder) string(field string) string {
	n := d.uvarint(field)
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)-d.off) {
		d.fail(field, fmt.Errorf("%w: string of %d bytes, %d left", ErrShort, n, len(d.b)-d.off))
		return ""
	}
	s := string(d.b[d.off : d.off+int(n)])
	d.off += int(n)
	return s
}
