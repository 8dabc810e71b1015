package sink

import (
	"strings"
	"testing"
)

// TestUnknownExtraColumnIsAWiringError: a column the sink cannot write is
// refused when the connector is built, not as every record's bad record.
func TestUnknownExtraColumnIsAWiringError(t *testing.T) {
	_, err := New(Config{Name: "x", Brokers: []string{"127.0.0.1:1"}, ExtraColumns: []string{"leader_epoch"}})
	if err == nil || !strings.Contains(err.Error(), `unknown column "leader_epoch"`) {
		t.Fatalf("New = %v; want an error naming the unknown column", err)
	}
}
