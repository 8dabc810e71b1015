package schema

import (
	"errors"
	"fmt"
)

// Sentinels callers match with errors.Is. Each is carried by a typed error
// below that says where and why.
var (
	// ErrNotFramed: a value is not in the Confluent wire format.
	ErrNotFramed = errors.New("value is not in the Confluent wire format")
	// ErrCorruptDatum: a datum does not decode with its writer schema.
	ErrCorruptDatum = errors.New("corrupt Avro datum")
	// ErrUnknownSchema: the registry definitively has no schema with that id.
	ErrUnknownSchema = errors.New("schema id not found in registry")
	// ErrUnsupportedSchema: the registry returned a schema this sink cannot
	// use (not Avro, has references, or does not parse).
	ErrUnsupportedSchema = errors.New("unsupported schema")
	// ErrIncompatible: a datum written with one schema cannot be read as
	// another (Avro schema resolution fails).
	ErrIncompatible = errors.New("incompatible schemas")
	// ErrRegistryRefused: the registry refused the client (HTTP 401 or
	// 403, or a token it needs was refused), or its TLS handshake failed
	// verification. No retry can fix it: the connector must stop and say so.
	ErrRegistryRefused = errors.New("the schema registry refused the client")
)

// FrameReason says why a value is not Confluent-framed.
type FrameReason string

// Reasons for a FrameError.
const (
	ReasonEmpty    FrameReason = "empty value"
	ReasonMagic    FrameReason = "wrong magic byte"
	ReasonTooShort FrameReason = "shorter than the 5-byte header"
)

// FrameError reports a value that is not in the Confluent wire format.
type FrameError struct {
	Reason FrameReason
	Len    int  // length of the value
	Magic  byte // first byte, when there is one
}

func (e *FrameError) Error() string {
	if e.Reason == ReasonMagic {
		return fmt.Sprintf("schema: %v: %s 0x%02x (%d bytes)", ErrNotFramed, e.Reason, e.Magic, e.Len)
	}
	return fmt.Sprintf("schema: %v: %s (%d bytes)", ErrNotFramed, e.Reason, e.Len)
}

// Unwrap makes errors.Is(err, ErrNotFramed) hold.
func (e *FrameError) Unwrap() error { return ErrNotFramed }

// DatumError reports a datum that does not decode with its schema.
type DatumError struct {
	SchemaID int32
	Len      int   // datum length
	Trailing int   // bytes left after a complete decode; 0 if decoding failed
	Err      error // decoder error, nil for trailing bytes
}

func (e *DatumError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("schema: %v (schema %d): %d trailing bytes after %d-byte datum",
			ErrCorruptDatum, e.SchemaID, e.Trailing, e.Len)
	}
	return fmt.Sprintf("schema: %v (schema %d, %d bytes): %v", ErrCorruptDatum, e.SchemaID, e.Len, e.Err)
}

// Unwrap exposes both ErrCorruptDatum and the decoder's error.
func (e *DatumError) Unwrap() []error { return []error{ErrCorruptDatum, e.Err} }

// SchemaError reports a schema the sink cannot use.
type SchemaError struct {
	ID     int32
	Reason string
	Err    error // parser error, if any
}

func (e *SchemaError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("schema: id %d: %v: %s", e.ID, ErrUnsupportedSchema, e.Reason)
	}
	return fmt.Sprintf("schema: id %d: %v: %s: %v", e.ID, ErrUnsupportedSchema, e.Reason, e.Err)
}

// Unwrap exposes both ErrUnsupportedSchema and the parser's error.
func (e *SchemaError) Unwrap() []error { return []error{ErrUnsupportedSchema, e.Err} }

// IncompatibleError reports why a datum written with schema WriterID cannot
// be projected onto schema ReaderID. Path names the place in the reader
// schema, e.g. "User.address.zip", "User.tags[]", "User.attrs{}".
type IncompatibleError struct {
	WriterID, ReaderID int32
	Path               string
	Reason             string
}

func (e *IncompatibleError) Error() string {
	return fmt.Sprintf("schema: %v: schema %d cannot be read as schema %d: %s: %s",
		ErrIncompatible, e.WriterID, e.ReaderID, e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrIncompatible) hold.
func (e *IncompatibleError) Unwrap() error { return ErrIncompatible }
