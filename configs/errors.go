package configs

import (
	"errors"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// FieldError is a bad or missing value of one key of one connector.
type FieldError struct {
	Connector string // "" when the connector has no name yet
	Source    string
	Key       string
	Value     string
	Set       bool   // false: the key is missing
	Reason    string // what is allowed or required
	// Origin says where the value came from when it is not the file named
	// by Source: "worker connect.properties", "environment CONNECT_X".
	Origin string
	// Err classifies the refusal when callers need to tell it apart
	// (ErrConnectorProviders); nil for an ordinary bad value.
	Err error
}

// Unwrap returns the class of the refusal, if any.
func (e *FieldError) Unwrap() error { return e.Err }

// ErrConnectorProviders is a connector file (or a REST body) declaring its
// own config.providers*: only the worker's providers are honoured, as in
// Kafka Connect, so that the worker's allowed.paths and allowlists bound
// what a connector's placeholders can read. The REST API answers it with
// 400 like any other refused config.
var ErrConnectorProviders = errors.New("config providers are declared by the worker only")

func (e *FieldError) Error() string {
	where := whereIs(e.Connector, e.Source)
	if !e.Set {
		return fmt.Sprintf("%s%s is not set: %s", where, e.Key, e.Reason)
	}
	from := ""
	if e.Origin != "" {
		from = " (from " + e.Origin + ")"
	}
	return fmt.Sprintf("%s%s = %q%s: %s", where, e.Key, e.Value, from, e.Reason)
}

func whereIs(connector, source string) string {
	if connector == "" {
		return source + ": "
	}
	return fmt.Sprintf("connector %q (%s): ", connector, source)
}

// ResolveError is a value whose config provider placeholder does not
// resolve. It names the key and the placeholder, never the value.
type ResolveError struct {
	Connector, Source, Key string
	Err                    error
}

func (e *ResolveError) Error() string {
	return fmt.Sprintf("%s%s: %v", whereIs(e.Connector, e.Source), e.Key, e.Err)
}

// Unwrap returns the underlying error.
func (e *ResolveError) Unwrap() error { return e.Err }

// FileError is a connector file that cannot be read or decoded at all.
type FileError struct {
	Source string
	Err    error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.Source, e.Err) }

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// DuplicateNameError is two files defining the same connector name.
type DuplicateNameError struct {
	Name, First, Second string
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("connector %q is defined twice: in %s and in %s", e.Name, e.First, e.Second)
}

// Warning is a problem that does not stop the connector: an unknown key, or
// a key that is accepted but ignored.
type Warning struct {
	Connector string
	Source    string // the worker, for a warning about a worker key
	Key       string
	Message   string
}

func (w Warning) String() string {
	if w.Connector == "" && w.Source != "" {
		return fmt.Sprintf("%s: %s: %s", w.Source, w.Key, w.Message)
	}
	return fmt.Sprintf("connector %q: %s: %s", w.Connector, w.Key, w.Message)
}

// SyntaxError is a file that is not well-formed JSON or properties, or
// breaks a rule of the file itself (a duplicate key, invalid UTF-8), at a
// line and column: the file's syntax is configs/syntax's.
type SyntaxError = syntax.Error
