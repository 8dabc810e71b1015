package registry

import (
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Error reports a failed registry request for one schema id.
type Error struct {
	ID      int32
	URL     string // registry base URL that was asked
	Status  int    // HTTP status; 0 when no response arrived
	Code    int    // registry error_code from the body, 0 if absent
	Message string // registry message from the body
	Err     error  // transport or decoding error, if any
	// TLSFailure says why the TLS handshake failed verification, if it did.
	TLSFailure string

	retryable bool
	refused   bool
}

// Retryable reports whether the failure is transient (no response, timeout,
// HTTP 408/429/5xx), so the lookup is worth repeating.
func (e *Error) Retryable() bool { return e.retryable }

// Refused reports that the registry refused the client (HTTP 401/403, a
// refused token) or its TLS handshake failed verification: final.
func (e *Error) Refused() bool { return e.refused }

// NotFound reports a definitive "no such schema" (HTTP 404).
func (e *Error) NotFound() bool { return e.Status == 404 }

func (e *Error) Error() string {
	prefix := fmt.Sprintf("schema: registry %s: id %d", e.URL, e.ID)
	switch {
	case e.NotFound():
		prefix += ": " + schema.ErrUnknownSchema.Error()
	case e.TLSFailure != "":
		return prefix + ": TLS: " + e.TLSFailure
	case e.refused:
		prefix += ": refused"
	}
	if e.Status == 0 {
		return fmt.Sprintf("%s: %v", prefix, e.Err)
	}
	return fmt.Sprintf("%s: HTTP %d (error_code %d): %s", prefix, e.Status, e.Code, e.Message)
}

// Unwrap exposes schema.ErrUnknownSchema for a 404,
// schema.ErrRegistryRefused for a refusal, and the underlying error.
func (e *Error) Unwrap() []error {
	switch {
	case e.NotFound():
		return []error{schema.ErrUnknownSchema, e.Err}
	case e.refused:
		return []error{schema.ErrRegistryRefused, e.Err}
	}
	return []error{e.Err}
}
