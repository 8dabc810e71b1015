package hive

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/thrift/lib/go/thrift"
	hms "github.com/beltran/gohive/hive_metastore"
)

// Sentinel kinds. Every error a Client returns is an *Error whose Kind is one
// of these, so callers branch with errors.Is and still get the operation,
// the object and the metastore's own message from Error().
var (
	// ErrNotFound: the database, table or partition does not exist
	// (NoSuchObjectException).
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: the object exists (AlreadyExistsException).
	ErrAlreadyExists = errors.New("already exists")
	// ErrTableExists is what CreateTable returns for an existing table; it
	// also matches ErrAlreadyExists.
	ErrTableExists = fmt.Errorf("table %w", ErrAlreadyExists)
	// ErrInvalidOperation: the metastore refused the change
	// (InvalidOperationException), e.g. changed partition keys.
	ErrInvalidOperation = errors.New("invalid operation")
	// ErrInvalidObject: the metastore rejected the object's definition
	// (InvalidObjectException), e.g. a bad table name.
	ErrInvalidObject = errors.New("invalid object")
	// ErrMetastore: a MetaException, the metastore's catch-all (database
	// errors, HDFS errors while creating directories, ...).
	ErrMetastore = errors.New("metastore error")
	// ErrServer: a Thrift application exception (internal server error,
	// unknown method on an older or newer metastore).
	ErrServer = errors.New("server error")
	// ErrUnavailable: network or transport failure, including timeouts. The
	// connection is dropped and the next call redials; retrying with backoff
	// is the right reaction.
	ErrUnavailable = errors.New("metastore unavailable")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("client closed")
	// ErrInvalidURI: the metastore URI cannot be parsed.
	ErrInvalidURI = errors.New("invalid metastore uri")
	// ErrInvalidTable: the Table or Partition passed in is incomplete or
	// inconsistent; detected locally, nothing was sent.
	ErrInvalidTable = errors.New("invalid table definition")
	// ErrInvalidSchema: the Avro schema is malformed or cannot be expressed
	// as Hive columns.
	ErrInvalidSchema = errors.New("invalid avro schema")
)

// Error is the error type of every Client method.
type Error struct {
	Op      string // operation, e.g. "create table"
	Object  string // "db.table", "db" or the URI
	Kind    error  // one of the Err* sentinels
	Message string // the metastore's message, when it sent one
	Err     error  // underlying error (Thrift exception, net error, ctx error)
}

func (e *Error) Error() string {
	s := "hive: " + e.Op
	if e.Object != "" {
		s += " " + e.Object
	}
	s += ": " + e.Kind.Error()
	switch {
	case e.Message != "":
		s += ": " + e.Message
	case e.Err != nil:
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap exposes both the kind and the cause, so errors.Is works for the
// sentinels and for context.DeadlineExceeded, and errors.As for the Thrift
// exception types.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// mapError turns what the generated client returned into an *Error. ctx is
// the caller's context: when it is done, its error becomes the cause, since
// the transport error is only a symptom of us closing the socket.
func mapError(ctx context.Context, op, object string, err error) error {
	if err == nil {
		return nil
	}
	kind, msg := classify(err)
	if kind == ErrUnavailable && ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return &Error{Op: op, Object: object, Kind: kind, Message: msg, Err: err}
}

// classify maps a Thrift error to a sentinel and the server's message.
func classify(err error) (kind error, msg string) {
	var (
		exists *hms.AlreadyExistsException
		noObj  *hms.NoSuchObjectException
		invOp  *hms.InvalidOperationException
		invObj *hms.InvalidObjectException
		meta   *hms.MetaException
		app    thrift.TApplicationException
	)
	switch {
	case errors.As(err, &exists):
		return ErrAlreadyExists, exists.Message
	case errors.As(err, &noObj):
		return ErrNotFound, noObj.Message
	case errors.As(err, &invOp):
		return ErrInvalidOperation, invOp.Message
	case errors.As(err, &invObj):
		return ErrInvalidObject, invObj.Message
	case errors.As(err, &meta):
		return ErrMetastore, meta.Message
	case errors.As(err, &app) && !desyncs(app.TypeId()):
		return ErrServer, app.Error()
	}
	return ErrUnavailable, ""
}

// keepsConnection reports whether the connection is still in a known state
// after err: true only for complete answers from the server. Anything else
// (timeouts, resets, protocol errors) may have left half a reply on the
// wire, so the connection must be dropped.
func keepsConnection(err error) bool {
	if err == nil {
		return true
	}
	kind, _ := classify(err)
	return kind != ErrUnavailable
}

// desyncs reports whether an application exception was raised by our own
// client because the reply did not match the request: the stream is out of
// step and the connection is unusable, which is a transport failure.
func desyncs(typeID int32) bool {
	switch typeID {
	case thrift.WRONG_METHOD_NAME, thrift.BAD_SEQUENCE_ID,
		thrift.INVALID_MESSAGE_TYPE_EXCEPTION, thrift.PROTOCOL_ERROR:
		return true
	}
	return false
}
