package registry

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Memory is an in-process schema.Registry for unit tests and the embedded
// demo. Like a real registry it hands out ids from 1 and returns the same id
// when the same schema text is registered again.
type Memory struct {
	mu      sync.RWMutex
	byID    map[int32]*schema.Schema
	byText  map[string]int32
	next    int32
	lookups atomic.Int64
}

// NewMemory returns an empty registry.
func NewMemory() *Memory {
	return &Memory{byID: map[int32]*schema.Schema{}, byText: map[string]int32{}, next: 1}
}

// Register stores schemaJSON and returns its id; an invalid Avro schema
// fails with schema.ErrUnsupportedSchema.
func (m *Memory) Register(schemaJSON string) (int32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.byText[schemaJSON]; ok {
		return id, nil
	}
	s, err := schema.New(m.next, schemaJSON)
	if err != nil {
		return 0, err
	}
	m.byID[s.ID], m.byText[schemaJSON] = s, s.ID
	m.next++
	return s.ID, nil
}

// SchemaByID implements schema.Registry.
func (m *Memory) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	m.lookups.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if s, ok := m.byID[id]; ok {
		return s, nil
	}
	return nil, &Error{ID: id, URL: "mem://", Status: 404, Code: 40403, Message: "Schema not found"}
}

// Lookups counts SchemaByID calls, for tests of callers' caching.
func (m *Memory) Lookups() int64 { return m.lookups.Load() }
