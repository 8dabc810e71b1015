package deadletter

import (
	"errors"
	"fmt"
	"strings"
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
	classOf := func(err error) string {
		if s, ok := err.(*staged); ok {
			return s.class
		}
		return ""
	}
	cause := fmt.Errorf("key: %w", convError{})
	kr := &kgo.Record{Topic: "orders", Partition: 3, Offset: 7}
	for _, tc := range []struct {
		name  string
		cause error
		stage string
	}{
		{"no stage given", cause, "VALUE_CONVERTER"},
		{"the key converter", AtStage(StageKeyConverter, "k.Converter", cause), "KEY_CONVERTER"},
		{"a transform", AtStage(StageTransformation, "t.Cast$Value", cause), "TRANSFORMATION"},
		{"the connector's own step", AtStage(StageTaskPut, "s.SinkTask", cause), "TASK_PUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{}
			for _, h := range headers("c", kr, tc.cause) {
				got[h.Key] = string(h.Value)
			}
			want := map[string]string{
				"__connect.errors.topic": "orders", "__connect.errors.partition": "3", "__connect.errors.offset": "7",
				"__connect.errors.connector.name": "c", "__connect.errors.task.id": "0", "__connect.errors.stage": tc.stage,
				"__connect.errors.class.name":           classOf(tc.cause),
				"__connect.errors.exception.class.name": "deadletter.convError", "__connect.errors.exception.message": "key: cannot convert",
				"__connect.errors.exception.stacktrace": "*fmt.wrapError: key: cannot convert\nCaused by: deadletter.convError: cannot convert",
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

// TestErrorChain: the stack-trace header lists each wrapped error with its
// type; joined errors each appear; a cycle a custom Unwrap builds ends.
func TestErrorChain(t *testing.T) {
	base := convError{}
	loop := &cyclic{}
	loop.next = loop
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"one error", base, "deadletter.convError: cannot convert"},
		{"wrapped twice", fmt.Errorf("b: %w", fmt.Errorf("a: %w", base)),
			"*fmt.wrapError: b: a: cannot convert\nCaused by: *fmt.wrapError: a: cannot convert\nCaused by: deadletter.convError: cannot convert"},
		{"joined", errors.Join(base, errors.New("other")),
			"*errors.joinError: cannot convert\nother\nCaused by: deadletter.convError: cannot convert\nCaused by: *errors.errorString: other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errorChain(tc.err); got != tc.want {
				t.Fatalf("errorChain\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	if n := strings.Count(errorChain(loop), "\n"); n != maxChainDepth-1 {
		t.Fatalf("a cyclic chain gave %d lines, want %d", n+1, maxChainDepth)
	}
}

type cyclic struct{ next error }

func (c *cyclic) Error() string { return "loop" }
func (c *cyclic) Unwrap() error { return c.next }
