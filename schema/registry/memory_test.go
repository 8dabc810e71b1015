package registry

import (
	"context"
	"errors"
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
