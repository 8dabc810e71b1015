package partitioner

import "fmt"

// ConfigError is a partitioner setting New cannot use. Key is the
// connector key it comes from (e.g. "path.format"), so the config layer can
// report it in its own terms.
type ConfigError struct {
	Key    string
	Value  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("partitioner: %s %q: %s", e.Key, e.Value, e.Reason)
}

// RecordError is a record the partitioner cannot place: a missing field, a
// value of the wrong type, an unparsable timestamp. It is about the record,
// not the sink, so the caller routes it by errors.tolerance (fail the task
// or send the record to the dead letter queue).
type RecordError struct {
	// What names the part of the record at fault: `field "a.b"`,
	// `timestamp field "ts"` or "record timestamp".
	What   string
	Reason string
	Err    error // the underlying cause, if any (a decode or parse error)
}

func (e *RecordError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("partitioner: %s: %s: %v", e.What, e.Reason, e.Err)
	}
	return fmt.Sprintf("partitioner: %s: %s", e.What, e.Reason)
}

func (e *RecordError) Unwrap() error { return e.Err }

// PathError is an encoded partition path that does not match the
// partitioner's columns, found when splitting a directory back into Hive
// partition values.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("partitioner: path %q: %s", e.Path, e.Reason)
}
