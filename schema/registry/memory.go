package registry

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// Memory is an in-process registry for unit tests and the embedded demo.
// It answers what Client answers: Avro schemas by id (schema.Registry),
// and schemas of any type with their references by id and by subject
// version (RawByID, RawByVersion: what the Protobuf and JSON Schema
// converters read). Like a real registry it hands out ids from 1, returns
// the same id when the same schema (type, text, references) is registered
// again, under any subject, and numbers each subject's versions from 1.
type Memory struct {
	mu       sync.RWMutex
	byID     map[int32]*schema.Schema // the Avro schemas, parsed
	raws     map[int32]schema.Raw     // every schema as registered
	byText   map[string]int32         // rawKey → id
	subjects map[string][]int32       // subject → its versions' ids, version 1 first
	next     int32
	lookups  atomic.Int64
	raw      atomic.Int64
}

// NewMemory returns an empty registry.
func NewMemory() *Memory {
	return &Memory{byID: map[int32]*schema.Schema{}, raws: map[int32]schema.Raw{}, byText: map[string]int32{},
		subjects: map[string][]int32{}, next: 1}
}

// Register stores Avro schema schemaJSON under no subject and returns its
// id; an invalid Avro schema fails with schema.ErrUnsupportedSchema.
func (m *Memory) Register(schemaJSON string) (int32, error) {
	id, _, err := m.RegisterRaw("", schema.Raw{Type: "AVRO", Text: schemaJSON})
	return id, err
}

// RegisterRaw stores r (Type "" is AVRO, as the registry API's default)
// under subject as its next version, or under no subject when subject is
// "", and returns its id and version. An Avro schema is checked as
// Register checks it; the others are stored as they are (a real registry
// parses them, the converters do here). A reference must name a subject
// version the registry has.
func (m *Memory) RegisterRaw(subject string, r schema.Raw) (id int32, version int, err error) {
	if r.Type == "" {
		r.Type = "AVRO"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ref := range r.References {
		if _, ok := m.version(ref.Subject, ref.Version); !ok {
			return 0, 0, fmt.Errorf("schema registry: reference %q: subject %q version %d: %w", ref.Name, ref.Subject, ref.Version, schema.ErrUnknownSchema)
		}
	}
	id, ok := m.byText[rawKey(r)]
	if !ok {
		if id, err = m.add(r); err != nil {
			return 0, 0, err
		}
	}
	if subject == "" {
		return id, 0, nil
	}
	if v := slices.Index(m.subjects[subject], id); v >= 0 {
		return id, v + 1, nil // registered there already: its version
	}
	m.subjects[subject] = append(m.subjects[subject], id)
	return id, len(m.subjects[subject]), nil
}

// add gives r the next id.
func (m *Memory) add(r schema.Raw) (int32, error) {
	id := m.next
	if r.Type == "AVRO" && len(r.References) == 0 { // with references: SchemaByID refuses it, as Client does
		s, err := schema.New(id, r.Text)
		if err != nil {
			return 0, err
		}
		m.byID[id] = s
	}
	m.raws[id], m.byText[rawKey(r)] = r, id
	m.next++
	return id, nil
}

func rawKey(r schema.Raw) string {
	var b strings.Builder
	b.WriteString(r.Type + "\x00" + r.Text)
	for _, ref := range r.References {
		fmt.Fprintf(&b, "\x00%s\x00%s\x00%d", ref.Name, ref.Subject, ref.Version)
	}
	return b.String()
}

func (m *Memory) version(subject string, version int) (int32, bool) {
	ids := m.subjects[subject]
	if version < 1 || version > len(ids) {
		return 0, false
	}
	return ids[version-1], true
}

// SchemaByID implements schema.Registry. A schema of another type than
// Avro is refused as Client refuses it (schema.ErrUnsupportedSchema).
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
	r, ok := m.raws[id]
	switch {
	case !ok:
		return nil, notFound(id, 40403, "Schema not found")
	case r.Type != "AVRO":
		return nil, &schema.SchemaError{ID: id, Reason: fmt.Sprintf("schema type %s is not AVRO", r.Type)}
	}
	return nil, &schema.SchemaError{ID: id, Reason: fmt.Sprintf("schema references are not supported (%d references, first %q)", len(r.References), r.References[0].Name)}
}

// RawByID is the schema with id as registered, of any type, as
// Client.RawByID returns it.
func (m *Memory) RawByID(ctx context.Context, id int32) (schema.Raw, error) {
	m.raw.Add(1)
	if err := ctx.Err(); err != nil {
		return schema.Raw{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if r, ok := m.raws[id]; ok {
		return withReferences(r), nil
	}
	return schema.Raw{}, fmt.Errorf("schema registry: id %d: %w", id, notFound(id, 40403, "Schema not found"))
}

// RawByVersion is a subject's version as registered, as
// Client.RawByVersion returns it: how references are read.
func (m *Memory) RawByVersion(ctx context.Context, subject string, version int) (schema.Raw, error) {
	m.raw.Add(1)
	if err := ctx.Err(); err != nil {
		return schema.Raw{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	what := fmt.Sprintf("subject %q version %d", subject, version)
	if _, ok := m.subjects[subject]; !ok {
		return schema.Raw{}, fmt.Errorf("schema registry: %s: %w", what, notFound(0, 40401, "Subject not found"))
	}
	id, ok := m.version(subject, version)
	if !ok {
		return schema.Raw{}, fmt.Errorf("schema registry: %s: %w", what, notFound(0, 40402, "Version not found"))
	}
	return withReferences(m.raws[id]), nil
}

// withReferences is r with a references slice of its own: a caller may
// not change what the registry holds.
func withReferences(r schema.Raw) schema.Raw {
	r.References = slices.Clone(r.References)
	return r
}

func notFound(id int32, code int, msg string) *Error {
	return &Error{ID: id, URL: "mem://", Status: 404, Code: code, Message: msg}
}

// Lookups counts SchemaByID calls, for tests of callers' caching.
func (m *Memory) Lookups() int64 { return m.lookups.Load() }

// RawLookups counts RawByID and RawByVersion calls, for tests of the
// Protobuf and JSON Schema converters' caching.
func (m *Memory) RawLookups() int64 { return m.raw.Load() }
