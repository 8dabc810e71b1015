package registry

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// TestRawByIDAndVersion: a Protobuf schema comes back as registered, with
// its type and references; an outage is retried, a missing subject is
// final and says ErrUnknownSchema.
func TestRawByIDAndVersion(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/schemas/ids/5":
			if calls.Add(1) == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte(`{"schema":"syntax = \"proto3\"; import \"a.proto\"; message M { A a = 1; }","schemaType":"PROTOBUF",` +
				`"references":[{"name":"a.proto","subject":"a-value","version":2}]}`))
		case "/subjects/a-value/versions/2":
			_, _ = w.Write([]byte(`{"subject":"a-value","version":2,"id":4,"schema":"syntax = \"proto3\"; message A {}","schemaType":"PROTOBUF"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error_code":40401,"message":"Subject not found"}`))
		}
	}))
	defer srv.Close()
	c, err := NewClient(ClientConfig{URLs: []string{srv.URL}, InitialBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw, err := c.RawByID(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	want := schema.Raw{Type: "PROTOBUF", Text: `syntax = "proto3"; import "a.proto"; message M { A a = 1; }`,
		References: []schema.Reference{{Name: "a.proto", Subject: "a-value", Version: 2}}}
	if !reflect.DeepEqual(raw, want) || calls.Load() != 2 {
		t.Errorf("RawByID = %+v after %d calls, want %+v after a retry", raw, calls.Load(), want)
	}
	ref, err := c.RawByVersion(ctx, "a-value", 2)
	if err != nil || ref.Text != `syntax = "proto3"; message A {}` || ref.Type != "PROTOBUF" {
		t.Errorf("RawByVersion = %+v, %v", ref, err)
	}
	if _, err := c.RawByVersion(ctx, "gone-value", 1); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Errorf("a missing subject: %v, want ErrUnknownSchema", err)
	}
}
