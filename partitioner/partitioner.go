// Package partitioner owns how a record maps to an output directory below
// <topics.dir>/<topic>/ (the reference's "encoded partition"), and the Hive
// partition columns and values that directory stands for.
//
// It implements the reference's Default, Field, TimeBased, Daily and Hourly
// partitioners with the Wallclock, Record and RecordField timestamp
// extractors, and reads Joda path.format patterns itself. Records are seen
// through Record, whose value is decoded lazily, so partitioners that only
// look at Kafka metadata never pay for an Avro decode.
package partitioner

import (
	"strconv"
	"time"
)

// Record is what a partitioner may look at.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Timestamp int64 // Kafka record timestamp, epoch milliseconds; -1 when absent

	// Value decodes the record value to goavro's native form: map[string]any
	// for records, nil or map[string]any{"<type name>": v} for unions,
	// time.Time for timestamp-millis/micros and date, *big.Rat for decimal.
	// It is called only by partitioners that read fields, at most once per
	// Encode. A nil Value reads as a null value.
	Value func() (any, error)
	// Field, when set, is a shortcut that decodes only the value at path
	// through nested records, in the same native form. It returns false
	// when it cannot answer; Value is used then.
	Field func(path []string) (any, bool)
}

// Partitioner encodes a record's output directory, e.g. "partition=3".
type Partitioner interface {
	Encode(r Record) (string, error)
	// Fields are the Hive partition columns the encoded path carries.
	Fields() []string
	// Values splits an encoded path back into partition values, in Fields
	// order: "year=2026/month=03" gives ["2026", "03"].
	Values(encoded string) ([]string, error)
}

// Timed is a partitioner that files records by time (TimeBased): it says
// which record time chose a directory and the time range a directory
// covers, which completeness markers need.
type Timed interface {
	Partitioner
	EncodeTimed(r Record) (dir string, millis int64, err error)
	Span(millis int64) (dir string, end int64)
}

// Default writes each Kafka partition to "partition=<n>", as the reference's
// DefaultPartitioner does.
type Default struct{}

// Encode returns "partition=<n>".
func (Default) Encode(r Record) (string, error) {
	if r.Partition >= 0 && int(r.Partition) < len(defaultDirs) {
		return defaultDirs[r.Partition], nil
	}
	return defaultDir(r.Partition), nil
}

// defaultDirs are the first partitions' directories, built once: Encode
// runs for every record, and building the string cost an allocation per
// record (issue 25). Past them a partition's directory is built each time.
var defaultDirs = func() (dirs [1024]string) {
	for i := range dirs {
		dirs[i] = defaultDir(int32(i))
	}
	return dirs
}()

func defaultDir(partition int32) string { return "partition=" + strconv.Itoa(int(partition)) }

// Fields is the single column "partition".
func (Default) Fields() []string { return []string{"partition"} }

// Values returns the partition number of "partition=<n>" as a string.
func (d Default) Values(encoded string) ([]string, error) {
	return splitPath(encoded, d.Fields(), true)
}

// Kind names a partitioner, as the config layer spells it.
type Kind string

// The partitioner kinds of the reference.
const (
	KindDefault   Kind = "default"
	KindField     Kind = "field"
	KindTimeBased Kind = "timebased"
	KindDaily     Kind = "daily"
	KindHourly    Kind = "hourly"
)

// Extractor names where a time-based partitioner takes a record's time.
type Extractor string

// The reference's timestamp extractors.
const (
	Wallclock   Extractor = "Wallclock"   // the sink's clock when the record is written
	RecordTime  Extractor = "Record"      // the Kafka record timestamp
	RecordField Extractor = "RecordField" // a field of the record value (timestamp.field)
)

// The reference's fixed layouts for Daily and Hourly.
const (
	DailyPathFormat  = "'year'=YYYY/'month'=MM/'day'=dd"
	HourlyPathFormat = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH"
)

// DefaultTimestampField is the reference's default timestamp.field.
const DefaultTimestampField = "timestamp"

// Config selects and configures a partitioner. Only the fields its Kind
// uses are read.
type Config struct {
	Kind       Kind     // "" means default
	FieldNames []string // field: partition.field.name, nested with dots

	// Time-based (timebased, daily, hourly). Daily and Hourly ignore
	// Duration and PathFormat and use the reference's fixed ones.
	Duration       time.Duration  // partition.duration.ms; whole milliseconds, > 0
	PathFormat     string         // Joda pattern; a trailing "/" is removed
	Locale         string         // required, as in the reference; only English has month/day names
	Location       *time.Location // timezone; required
	Extractor      Extractor      // "" means Wallclock
	TimestampField string         // RecordField: "" means "timestamp"; nested with dots
	Now            func() time.Time
}

// New builds the partitioner cfg describes, or a *ConfigError.
func New(cfg Config) (Partitioner, error) {
	switch cfg.Kind {
	case "", KindDefault:
		return Default{}, nil
	case KindField:
		return NewField(cfg.FieldNames)
	case KindTimeBased:
		return NewTimeBased(cfg)
	case KindDaily:
		cfg.Duration, cfg.PathFormat = 24*time.Hour, DailyPathFormat
		return NewTimeBased(cfg)
	case KindHourly:
		cfg.Duration, cfg.PathFormat = time.Hour, HourlyPathFormat
		return NewTimeBased(cfg)
	}
	return nil, &ConfigError{Key: "partitioner.class", Value: string(cfg.Kind),
		Reason: "must be default, field, timebased, daily or hourly"}
}
