package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

func TestMemory(t *testing.T) {
	m := NewMemory()
	id1, err := m.Register(userSchema)
	if err != nil || id1 != 1 {
		t.Fatalf("Register = %d, %v; want 1", id1, err)
	}
	id2, err := m.Register(`"string"`)
	if err != nil || id2 != 2 {
		t.Fatalf("Register = %d, %v; want 2", id2, err)
	}
	if again, _ := m.Register(userSchema); again != id1 {
		t.Fatalf("re-register = %d, want %d", again, id1)
	}
	if _, err := m.Register(`{`); !errors.Is(err, schema.ErrUnsupportedSchema) {
		t.Fatalf("invalid schema: %v", err)
	}
	s, err := m.SchemaByID(context.Background(), id1)
	if err != nil || s.ID != id1 || s.Text != userSchema {
		t.Fatalf("SchemaByID = %+v, %v", s, err)
	}
	if _, err := m.SchemaByID(context.Background(), 99); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Fatalf("unknown id: %v", err)
	}
	if m.Lookups() != 2 {
		t.Fatalf("Lookups = %d, want 2", m.Lookups())
	}
}

// TestMemoryRaw: Memory answers RawByID and RawByVersion as Client does
// (raw_test.go): schemas of any type with their references, subjects'
// versions from 1, the same id for the same schema under any subject,
// ErrUnknownSchema for what it does not have; SchemaByID refuses what is
// not plain Avro as Client's does.
func TestMemoryRaw(t *testing.T) {
	ctx := context.Background()
	m := NewMemory()
	common := schema.Raw{Type: "PROTOBUF", Text: `syntax = "proto3"; message A {}`}
	order := schema.Raw{Type: "PROTOBUF", Text: `syntax = "proto3"; import "a.proto"; message M { A a = 1; }`,
		References: []schema.Reference{{Name: "a.proto", Subject: "a-value", Version: 1}}}
	register := func(subject string, r schema.Raw) (int32, int) {
		t.Helper()
		id, v, err := m.RegisterRaw(subject, r)
		if err != nil {
			t.Fatalf("RegisterRaw(%q, %+v): %v", subject, r, err)
		}
		return id, v
	}
	aID, aV := register("a-value", common)
	mID, mV := register("m-value", order)
	avroID, _ := register("", schema.Raw{Text: userSchema}) // "" is AVRO
	jsonID, jsonV := register("m-value", schema.Raw{Type: "JSON", Text: `{"type":"object"}`})
	if againID, againV := register("other-key", common); againID != aID || againV != 1 {
		t.Errorf("the same schema under another subject: id %d version %d, want id %d version 1", againID, againV, aID)
	}
	if againID, againV := register("m-value", order); againID != mID || againV != 1 {
		t.Errorf("the same schema under its subject again: id %d version %d, want id %d version 1", againID, againV, mID)
	}
	if aID != 1 || mID != 2 || avroID != 3 || jsonID != 4 || aV != 1 || mV != 1 || jsonV != 2 {
		t.Errorf("ids %d %d %d %d versions %d %d %d, want ids 1..4 and m-value's versions 1, 2", aID, mID, avroID, jsonID, aV, mV, jsonV)
	}
	if _, _, err := m.RegisterRaw("x-value", schema.Raw{Type: "PROTOBUF", Text: "x",
		References: []schema.Reference{{Name: "b.proto", Subject: "b-value", Version: 1}}}); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Errorf("a reference to a subject the registry lacks: %v, want ErrUnknownSchema", err)
	}

	for _, tc := range []struct {
		name string
		get  func() (schema.Raw, error)
		want schema.Raw
	}{
		{"a Protobuf schema with its reference", func() (schema.Raw, error) { return m.RawByID(ctx, mID) }, order},
		{"an Avro schema", func() (schema.Raw, error) { return m.RawByID(ctx, avroID) }, schema.Raw{Type: "AVRO", Text: userSchema}},
		{"a JSON schema", func() (schema.Raw, error) { return m.RawByID(ctx, jsonID) }, schema.Raw{Type: "JSON", Text: `{"type":"object"}`}},
		{"a reference by subject version", func() (schema.Raw, error) { return m.RawByVersion(ctx, "a-value", 1) }, common},
		{"a subject's second version", func() (schema.Raw, error) { return m.RawByVersion(ctx, "m-value", 2) }, schema.Raw{Type: "JSON", Text: `{"type":"object"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.get()
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		err  func() error
		want error
		says string
	}{
		{"unknown id", func() error { _, err := m.RawByID(ctx, 99); return err }, schema.ErrUnknownSchema, "id 99"},
		{"unknown subject", func() error { _, err := m.RawByVersion(ctx, "gone-value", 1); return err }, schema.ErrUnknownSchema, "Subject not found"},
		{"unknown version", func() error { _, err := m.RawByVersion(ctx, "a-value", 2); return err }, schema.ErrUnknownSchema, "Version not found"},
		{"SchemaByID of a Protobuf id", func() error { _, err := m.SchemaByID(ctx, mID); return err }, schema.ErrUnsupportedSchema, "PROTOBUF is not AVRO"},
		{"SchemaByID of an unknown id", func() error { _, err := m.SchemaByID(ctx, 99); return err }, schema.ErrUnknownSchema, "id 99"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.err(); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want %v saying %q", err, tc.want, tc.says)
			}
		})
	}
	if s, err := m.SchemaByID(ctx, avroID); err != nil || s.Text != userSchema {
		t.Errorf("SchemaByID of the Avro id = %v, %v", s, err)
	}
	if got, _ := m.RawByID(ctx, mID); len(got.References) == 1 {
		got.References[0].Subject = "changed"
		if again, _ := m.RawByID(ctx, mID); again.References[0].Subject != "a-value" {
			t.Error("a caller changed the registry's references")
		}
	}
	if n := m.RawLookups(); n != 10 {
		t.Errorf("RawLookups = %d, want 10", n)
	}
}
