package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// ProtobufClass is Confluent's Protobuf converter.
const ProtobufClass = "io.confluent.connect.protobuf.ProtobufConverter"

// SchemaTexts is what the Protobuf converter asks the registry: a schema
// of any type by id, and the subjects' versions its references name.
// schema/registry.Client has both.
type SchemaTexts interface {
	RawByID(ctx context.Context, id int32) (schema.Raw, error)
	RawByVersion(ctx context.Context, subject string, version int) (schema.Raw, error)
}

// ProtobufOptions are ProtobufConverter's settings (ProtobufDataConfig)
// that change the mapping.
type ProtobufOptions struct {
	// WrapperForNullables is wrapper.for.nullables (default false): the
	// google.protobuf wrappers become optional primitives instead of a
	// struct with one field "value".
	WrapperForNullables bool
}

// Protobuf is Confluent's ProtobufConverter: the wire format (magic byte,
// schema id, message indexes, the message), the .proto schema from the
// registry with its references, and the message mapped to Avro as
// Confluent's ProtobufData maps it to Connect and AvroData maps that to
// Avro (protodata.go). A registry id is parsed once: its file and the
// Avro form of each message read are cached for the process.
//
// One registry id is one writer schema id for the sink (the WAL records
// it, files rotate when it changes), so each id is bound to the message
// its first record names; a record of the same id naming another message
// of the file is refused (bad record), since two Avro schemas under one
// id would share a file.
type Protobuf struct {
	reg  SchemaTexts
	opts ProtobufOptions

	// files are the ids compiled; the partitions that meet a new id
	// together wait for one fetch and compile. Unbounded: a file dropped
	// and compiled again would lose the message its id is bound to.
	files *byID[*protoFile]
	mu    sync.RWMutex // guards each protoFile's bound
}

// protoFile is a registry id compiled: its file, or why it cannot be read.
type protoFile struct {
	file protoreflect.FileDescriptor
	err  error
	// bound is the one message this id's records are read as (nil: none
	// read yet), with its path of message indexes.
	bound *protoMessage
}

type protoMessage struct {
	path   string // message indexes, "0" or "1.0": the wire's, for errors
	desc   protoreflect.MessageDescriptor
	schema *schema.Schema
	err    error // the message has no Avro form: every record with it is bad
}

// NewProtobuf reads values through reg; a registry lookup waits wait at
// most (<= 0: DefaultLookupWait).
func NewProtobuf(reg SchemaTexts, opts ProtobufOptions, wait time.Duration) *Protobuf {
	if wait <= 0 {
		wait = DefaultLookupWait
	}
	p := &Protobuf{reg: reg, opts: opts}
	p.files = newByID(0, wait, p.compile)
	return p
}

// Convert reads one record as ProtobufConverter.toConnectData does.
func (p *Protobuf) Convert(ctx context.Context, _ string, data []byte) (Value, error) {
	id, rest, err := schema.ParseWire(data)
	if err != nil {
		return Value{}, err
	}
	indexes, payload, err := messageIndexes(rest)
	if err != nil {
		return Value{}, protoError(fmt.Sprintf("schema %d: the message indexes", id), err)
	}
	m, err := p.message(ctx, id, indexes)
	if err != nil {
		return Value{}, err
	}
	msg := dynamicpb.NewMessage(m.desc)
	if err := proto.Unmarshal(payload, msg); err != nil {
		return Value{}, protoError(fmt.Sprintf("schema %d: not a %s message", id, m.desc.FullName()), err)
	}
	datum, err := encodeMessage(nil, msg, p.opts)
	if err != nil {
		return Value{}, protoError(fmt.Sprintf("schema %d: message %s", id, m.desc.FullName()), err)
	}
	return Value{Schema: m.schema, Datum: datum}, nil
}

// SchemaByID is the Avro form of the message an id's records are read as:
// the one this process bound it to, or, before any record, the file's
// only message when it has one and nothing nested. Otherwise the message
// is unknown until a record names it (ErrUnknownSchema): the partition
// then takes the next record's schema as current, as after a schema the
// registry lost.
func (p *Protobuf) SchemaByID(ctx context.Context, id int32) (*schema.Schema, error) {
	f, err := p.file(ctx, id)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	m := f.bound
	p.mu.RUnlock()
	if m == nil {
		if msgs := f.file.Messages(); msgs.Len() != 1 || msgs.Get(0).Messages().Len() != 0 {
			return nil, fmt.Errorf("schema %d: %w: its file has more than one message and this process has read no record of it yet",
				id, schema.ErrUnknownSchema)
		}
		if m, err = p.build(f, id, []int{0}); err != nil {
			return nil, err
		}
	}
	return m.schema, m.err
}

// message finds the message the indexes name in schema id's file.
func (p *Protobuf) message(ctx context.Context, id int32, indexes []int) (*protoMessage, error) {
	f, err := p.file(ctx, id)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	m := f.bound
	p.mu.RUnlock()
	if m == nil {
		if m, err = p.build(f, id, indexes); err != nil {
			return nil, err
		}
		p.mu.Lock()
		if f.bound == nil {
			f.bound = m // the first record of the id names its message
		}
		m = f.bound
		p.mu.Unlock()
	}
	if path := indexPath(indexes); m.path != path {
		return nil, protoError(fmt.Sprintf("schema %d: message indexes [%s] name %s, but this id's records are read as %s (indexes [%s]): "+
			"hdfs-sink writes one message type per registry schema id", id, path, describe(f.file, indexes), m.desc.FullName(), m.path), nil)
	}
	if m.err != nil {
		return nil, m.err
	}
	return m, nil
}

// build compiles the message the indexes name to its Avro form.
func (p *Protobuf) build(f *protoFile, id int32, indexes []int) (*protoMessage, error) {
	desc, err := findMessage(f.file, indexes)
	if err != nil {
		return nil, protoError(fmt.Sprintf("schema %d", id), err)
	}
	m := &protoMessage{path: indexPath(indexes), desc: desc}
	text, err := avroOfMessage(desc, p.opts)
	if err == nil {
		m.schema, err = schema.New(id, text)
	}
	if err != nil {
		m.err = protoError(fmt.Sprintf("schema %d: message %s has no Avro form", id, desc.FullName()), err)
	}
	return m, nil
}

// file is schema id compiled, from the cache or the registry. A schema
// that cannot be read is cached too: each of its records is bad, and
// asking the registry again would not change it (ids are immutable).
func (p *Protobuf) file(ctx context.Context, id int32) (*protoFile, error) {
	f, err := p.files.get(ctx, id)
	if err != nil {
		return nil, err // not the record's fault: the sink retries
	}
	if f.err != nil {
		return nil, f.err
	}
	return f, nil
}

// compile fetches schema id and the schemas it references and compiles
// them. An error is returned only when the registry could not answer;
// a schema that is not Protobuf or does not compile is a protoFile.err.
func (p *Protobuf) compile(ctx context.Context, id int32) (*protoFile, error) {
	raw, err := p.reg.RawByID(ctx, id)
	if err != nil {
		if errors.Is(err, schema.ErrUnknownSchema) {
			return &protoFile{err: err}, nil
		}
		return nil, err
	}
	if raw.Type != "PROTOBUF" {
		return &protoFile{err: &schema.SchemaError{ID: id, Reason: fmt.Sprintf("schema type %s is not PROTOBUF (the converter is ProtobufConverter)", raw.Type)}}, nil
	}
	main := fmt.Sprintf("registry-schema-%d.proto", id)
	sources := map[string]string{main: raw.Text}
	if err := p.references(ctx, raw.References, sources, 0); err != nil {
		var bad *schema.SchemaError
		if errors.As(err, &bad) || errors.Is(err, schema.ErrUnknownSchema) {
			return &protoFile{err: fmt.Errorf("schema %d: %w", id, err)}, nil
		}
		return nil, err
	}
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(sources),
	})}
	files, err := c.Compile(ctx, main)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return &protoFile{err: &schema.SchemaError{ID: id, Reason: "the .proto schema does not compile: " + err.Error()}}, nil
	}
	return &protoFile{file: files[0]}, nil
}

// maxReferenceDepth bounds a chain of imports: a registry with a cycle of
// references must not make the converter loop.
const maxReferenceDepth = 32

// references adds the text of each referenced schema (and of theirs)
// under the import path the referring file uses.
func (p *Protobuf) references(ctx context.Context, refs []schema.Reference, sources map[string]string, depth int) error {
	if depth > maxReferenceDepth {
		return &schema.SchemaError{Reason: fmt.Sprintf("references nested deeper than %d", maxReferenceDepth)}
	}
	for _, ref := range refs {
		if _, ok := sources[ref.Name]; ok {
			continue
		}
		raw, err := p.reg.RawByVersion(ctx, ref.Subject, ref.Version)
		if err != nil {
			return fmt.Errorf("reference %q (subject %q version %d): %w", ref.Name, ref.Subject, ref.Version, err)
		}
		if raw.Type != "PROTOBUF" {
			return &schema.SchemaError{Reason: fmt.Sprintf("reference %q (subject %q version %d) is a %s schema, not PROTOBUF", ref.Name, ref.Subject, ref.Version, raw.Type)}
		}
		sources[ref.Name] = raw.Text
		if err := p.references(ctx, raw.References, sources, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// messageIndexes reads Confluent's message-index array: a zigzag varint
// count, then that many zigzag varint indexes; a count of 0 (the single
// byte 0) means the file's first message, [0].
func messageIndexes(b []byte) (indexes []int, rest []byte, err error) {
	n, k := binary.Varint(b)
	if k <= 0 {
		return nil, nil, errors.New("no message-index count after the schema id")
	}
	b = b[k:]
	if n == 0 {
		return []int{0}, b, nil
	}
	if n < 0 || n > 100 {
		return nil, nil, fmt.Errorf("message-index count %d is not in [0, 100]", n)
	}
	indexes = make([]int, n)
	for i := range indexes {
		v, k := binary.Varint(b)
		if k <= 0 || v < 0 || v > 1<<20 {
			return nil, nil, fmt.Errorf("message index %d of %d is not a valid varint", i+1, n)
		}
		indexes[i], b = int(v), b[k:]
	}
	return indexes, b, nil
}

// findMessage follows the indexes: the first among the file's top-level
// messages, each next among the previous one's nested messages.
func findMessage(f protoreflect.FileDescriptor, indexes []int) (protoreflect.MessageDescriptor, error) {
	msgs := f.Messages()
	var md protoreflect.MessageDescriptor
	for depth, i := range indexes {
		if i >= msgs.Len() {
			where := "the file"
			if md != nil {
				where = string(md.FullName())
			}
			return nil, fmt.Errorf("message indexes [%s]: index %d at depth %d, but %s has %d messages", indexPath(indexes), i, depth, where, msgs.Len())
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, errors.New("no message indexes")
	}
	return md, nil
}

func describe(f protoreflect.FileDescriptor, indexes []int) string {
	md, err := findMessage(f, indexes)
	if err != nil {
		return "no message"
	}
	return string(md.FullName())
}

func indexPath(indexes []int) string {
	s := make([]string, len(indexes))
	for i, v := range indexes {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ".")
}

func protoError(reason string, err error) error {
	return &Error{Converter: "ProtobufConverter", Reason: reason, Err: err}
}
