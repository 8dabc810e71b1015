package hive

import (
	"context"
	"errors"
)

// IsRetryable reports whether err is a transient failure talking to the
// metastore (network, transport, timeout, including an expired context
// deadline) that the caller may retry with backoff. Metastore answers
// (not found, exists, MetaException, ...) and cancellation are not.
func IsRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	return errors.Is(err, ErrUnavailable)
}
