package deadletter

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

type convError struct{}

func (convError) Error() string { return "cannot convert" }

// TestHeadersStage: __connect.errors.stage says where the record failed,
// as Connect's Stage does (VALUE_CONVERTER unless the sink says
// otherwise); the exception's class and message are the cause's, with or
// without the stage.
func TestHeadersStage(t *testing.T) {
	cause := fmt.Errorf("key: %w", convError{})
	kr := &kgo.Record{Topic: "orders", Partition: 3, Offset: 7}
	for _, tc := range []struct {
		name  string
		cause error
		stage string
	}{
		{"no stage given", cause, "VALUE_CONVERTER"},
		{"the key converter", AtStage(StageKeyConverter, cause), "KEY_CONVERTER"},
		{"a transform", AtStage(StageTransformation, cause), "TRANSFORMATION"},
		{"the connector's own step", AtStage(StageTaskPut, cause), "TASK_PUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, h := range headers("c", kr, tc.cause) {
				got[h.Key] = string(h.Value)
			}
			want := map[string]string{
				"__connect.errors.topic": "orders", "__connect.errors.partition": "3", "__connect.errors.offset": "7",
				"__connect.errors.connector.name": "c", "__connect.errors.stage": tc.stage,
				"__connect.errors.exception.class.name": "deadletter.convError", "__connect.errors.exception.message": "key: cannot convert",
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("headers\n got %v\nwant %v", got, want)
			}
			if StageOf(tc.cause) != Stage(tc.stage) || !errors.Is(tc.cause, convError{}) {
				t.Fatalf("StageOf = %s, errors.Is the cause %v", StageOf(tc.cause), errors.Is(tc.cause, convError{}))
			}
		})
	}
}
