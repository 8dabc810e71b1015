package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// fakeTexts is a registry of .proto texts: ids and subjects' versions.
type fakeTexts struct {
	byID      map[int32]schema.Raw
	byVersion map[string]schema.Raw // "subject/version"
	lookups   atomic.Int64
	down      error         // every lookup fails with it (an outage)
	hold      chan struct{} // when set, RawByID answers once it is closed
}

func (f *fakeTexts) RawByID(_ context.Context, id int32) (schema.Raw, error) {
	if f.hold != nil {
		<-f.hold
	}
	f.lookups.Add(1)
	if f.down != nil {
		return schema.Raw{}, f.down
	}
	r, ok := f.byID[id]
	if !ok {
		return schema.Raw{}, fmt.Errorf("id %d: %w", id, schema.ErrUnknownSchema)
	}
	return r, nil
}

func (f *fakeTexts) RawByVersion(_ context.Context, subject string, version int) (schema.Raw, error) {
	f.lookups.Add(1)
	r, ok := f.byVersion[fmt.Sprintf("%s/%d", subject, version)]
	if !ok {
		return schema.Raw{}, fmt.Errorf("subject %s version %d: %w", subject, version, schema.ErrUnknownSchema)
	}
	return r, nil
}

const commonProto = `syntax = "proto3";
package common;
message Address { string city = 1; }
`

// orderProto covers every mapping of ProtobufData's table (Confluent's
// "Protobuf Schema Serializer and Deserializer" docs and ProtobufData's
// toConnectSchema, confluentinc/schema-registry protobuf-converter).
const orderProto = `syntax = "proto3";
package shop.v1;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "common.proto";

enum Color { COLOR_UNSPECIFIED = 0; RED = 1; GREEN = 2; }

message Order {
  int32 i32 = 1;
  sint32 s32 = 2;
  sfixed32 sf32 = 3;
  uint32 u32 = 4;
  fixed32 f32 = 5;
  int64 i64 = 6;
  uint64 u64 = 7;
  float fl = 8;
  double db = 9;
  bool ok = 10;
  string name = 11;
  bytes raw = 12;
  Color color = 13;
  repeated string tags = 14;
  map<string, int64> counts = 15;
  common.Address ship = 16;
  common.Address bill = 17;
  oneof payment { string card = 18; int64 voucher = 19; }
  google.protobuf.Timestamp at = 20;
  google.protobuf.StringValue note = 21;
  optional string nick = 22;
  repeated Line lines = 23;
  message Line { string sku = 1; int32 qty = 2; }
}

message Other { string x = 1; }
`

const (
	orderID = 7
	otherID = 8 // a file with one message
)

func orderRegistry() *fakeTexts {
	return &fakeTexts{
		byID: map[int32]schema.Raw{
			orderID: {Type: "PROTOBUF", Text: orderProto, References: []schema.Reference{{Name: "common.proto", Subject: "common-value", Version: 1}}},
			otherID: {Type: "PROTOBUF", Text: `syntax = "proto3"; message Only { string x = 1; }`},
			9:       {Type: "AVRO", Text: `"string"`},
			10:      {Type: "PROTOBUF", Text: `syntax = "proto3"; message Broken { strin x = 1; }`},
			11:      {Type: "PROTOBUF", Text: orderProto, References: []schema.Reference{{Name: "common.proto", Subject: "missing-value", Version: 3}}},
		},
		byVersion: map[string]schema.Raw{"common-value/1": {Type: "PROTOBUF", Text: commonProto}},
	}
}

// descriptors compiles the test's own copy of the schema, as a producer
// has it.
func descriptors(t testing.TB) protoreflect.FileDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{"order.proto": orderProto, "common.proto": commonProto}),
	})}
	files, err := c.Compile(context.Background(), "order.proto")
	if err != nil {
		t.Fatal(err)
	}
	return files[0]
}

// wire frames a message as Confluent's KafkaProtobufSerializer does.
func wire(t testing.TB, id int32, indexes []int, m proto.Message) []byte {
	t.Helper()
	payload, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var idx []byte
	if len(indexes) == 1 && indexes[0] == 0 {
		idx = []byte{0}
	} else {
		idx = binary.AppendVarint(nil, int64(len(indexes)))
		for _, i := range indexes {
			idx = binary.AppendVarint(idx, int64(i))
		}
	}
	return schema.AppendWire(nil, id, append(idx, payload...))
}

func set(m *dynamicpb.Message, name string, v any) {
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(name))
	m.Set(fd, protoreflect.ValueOf(v))
}

func u(branch string, v any) any { return map[string]any{branch: v} }

func fullOrder(t testing.TB) *dynamicpb.Message {
	fd := descriptors(t)
	md := fd.Messages().ByName("Order")
	m := dynamicpb.NewMessage(md)
	set(m, "i32", int32(-5))
	set(m, "s32", int32(-6))
	set(m, "sf32", int32(7))
	set(m, "u32", uint32(4000000000))
	set(m, "f32", uint32(5))
	set(m, "i64", int64(-1)<<40)
	set(m, "u64", uint64(1)<<63)
	set(m, "fl", float32(1.5))
	set(m, "db", 2.25)
	set(m, "ok", true)
	set(m, "name", "Ada")
	set(m, "raw", []byte{0, 1})
	set(m, "color", protoreflect.EnumNumber(2))
	tags := m.Mutable(md.Fields().ByName("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	counts := m.Mutable(md.Fields().ByName("counts")).Map()
	counts.Set(protoreflect.ValueOfString("y").MapKey(), protoreflect.ValueOfInt64(2))
	counts.Set(protoreflect.ValueOfString("x").MapKey(), protoreflect.ValueOfInt64(1))
	ship := m.Mutable(md.Fields().ByName("ship")).Message()
	ship.Set(ship.Descriptor().Fields().ByName("city"), protoreflect.ValueOfString("Oslo"))
	set(m, "voucher", int64(42))
	at := m.Mutable(md.Fields().ByName("at")).Message()
	at.Set(at.Descriptor().Fields().ByName("seconds"), protoreflect.ValueOfInt64(1_700_000_000))
	at.Set(at.Descriptor().Fields().ByName("nanos"), protoreflect.ValueOfInt32(123_999_999))
	note := m.Mutable(md.Fields().ByName("note")).Message()
	note.Set(note.Descriptor().Fields().ByName("value"), protoreflect.ValueOfString("fragile"))
	lines := m.Mutable(md.Fields().ByName("lines")).List()
	line := lines.NewElement()
	line.Message().Set(line.Message().Descriptor().Fields().ByName("sku"), protoreflect.ValueOfString("S1"))
	line.Message().Set(line.Message().Descriptor().Fields().ByName("qty"), protoreflect.ValueOfInt32(3))
	lines.Append(line)
	return m
}

// TestProtobufToAvroValues: each Protobuf type reads back from the Avro
// datum as ProtobufData's toConnectData and AvroData map it (every field
// optional, so each value is a union branch).
func TestProtobufToAvroValues(t *testing.T) {
	p := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0)
	v, err := p.Convert(context.Background(), "orders", wire(t, orderID, []int{0}, fullOrder(t)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Schema.Native(v.Datum)
	if err != nil {
		t.Fatalf("datum does not decode with its schema: %v\n%s", err, v.Schema.Text)
	}
	rec := got.(map[string]any)
	for _, tc := range []struct {
		field string
		want  any
	}{
		{"payment_0", u("io.confluent.connect.protobuf.Union.payment", map[string]any{"card": nil, "voucher": u("long", int64(42))})},
		{"i32", u("int", int32(-5))},
		{"s32", u("int", int32(-6))},
		{"sf32", u("int", int32(7))},
		{"u32", u("long", int64(4000000000))}, // uint32 → int64, unsigned
		{"f32", u("long", int64(5))},
		{"i64", u("long", int64(-1)<<40)},
		{"u64", u("long", int64(-1)<<63)}, // uint64 → int64: the same 64 bits
		{"fl", u("float", float32(1.5))},
		{"db", u("double", 2.25)},
		{"ok", u("boolean", true)},
		{"name", u("string", "Ada")},
		{"raw", u("bytes", []byte{0, 1})},
		{"color", u("string", "GREEN")}, // enum → the value's name
		{"tags", u("array", []any{u("string", "a"), u("string", "b")})},
		{"counts", u("array", []any{ // optional keys: an array of MapEntry records
			map[string]any{"key": u("string", "x"), "value": u("long", int64(1))},
			map[string]any{"key": u("string", "y"), "value": u("long", int64(2))},
		})},
		{"ship", u("Address", map[string]any{"city": u("string", "Oslo")})},
		{"bill", nil}, // a message not set is null
		{"at", u("long.timestamp-millis", time.UnixMilli(1_700_000_000_123).UTC())},
		{"note", u("StringValue", map[string]any{"value": u("string", "fragile")})}, // wrapper.for.nullables=false
		{"nick", nil}, // proto3 optional not set: null
		{"lines", u("array", []any{u("Line", map[string]any{"sku": u("string", "S1"), "qty": u("int", int32(3))})})},
	} {
		g, ok := rec[tc.field]
		if !ok {
			t.Errorf("%s: missing from %v", tc.field, rec)
			continue
		}
		if tm, ok := g.(map[string]any); ok {
			if ts, ok := tm["long.timestamp-millis"].(time.Time); ok {
				g = u("long.timestamp-millis", ts.UTC())
			}
		}
		if !reflect.DeepEqual(g, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.field, g, tc.want)
		}
	}
	// The oneof's struct comes first, as ProtobufData adds it first.
	if i, j := strings.Index(v.Schema.Text, `"payment_0"`), strings.Index(v.Schema.Text, `"i32"`); i < 0 || i > j {
		t.Errorf("payment_0 is not the first field:\n%s", v.Schema.Text)
	}
}

// TestProtobufDefaults: scalars not set are their defaults (ProtobufData
// reads them with getField), messages and proto3 optionals not set null.
func TestProtobufDefaults(t *testing.T) {
	p := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0)
	md := descriptors(t).Messages().ByName("Order")
	m := dynamicpb.NewMessage(md)
	set(m, "nick", "")
	v, err := p.Convert(context.Background(), "orders", wire(t, orderID, []int{0}, m))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.Schema.Native(v.Datum)
	rec := got.(map[string]any)
	for field, want := range map[string]any{
		"i32": u("int", int32(0)), "name": u("string", ""), "color": u("string", "COLOR_UNSPECIFIED"),
		"tags": u("array", []any{}), "payment_0": nil, "ship": nil, "at": nil, "nick": u("string", ""),
	} {
		if !reflect.DeepEqual(rec[field], want) {
			t.Errorf("%s = %#v, want %#v", field, rec[field], want)
		}
	}
}

// TestProtobufWrapperForNullables: with wrapper.for.nullables=true a
// wrapper is its optional primitive (ProtobufData.toUnwrappedOrStructSchema).
func TestProtobufWrapperForNullables(t *testing.T) {
	p := NewProtobuf(orderRegistry(), ProtobufOptions{WrapperForNullables: true}, 0)
	v, err := p.Convert(context.Background(), "orders", wire(t, orderID, []int{0}, fullOrder(t)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.Schema.Native(v.Datum)
	if note := got.(map[string]any)["note"]; !reflect.DeepEqual(note, u("string", "fragile")) {
		t.Errorf("note = %#v, want the string", note)
	}
}

// TestProtobufSchemaCached: a registry id is fetched and compiled once,
// whatever the number of records (its references too).
func TestProtobufSchemaCached(t *testing.T) {
	reg := orderRegistry()
	p := NewProtobuf(reg, ProtobufOptions{}, 0)
	data := wire(t, orderID, []int{0}, fullOrder(t))
	var first *schema.Schema
	for range 50 {
		v, err := p.Convert(context.Background(), "orders", data)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = v.Schema
		}
		if v.Schema != first {
			t.Fatal("a second record got another schema")
		}
	}
	if n := reg.lookups.Load(); n != 2 { // the id and its one reference
		t.Errorf("%d registry lookups for 50 records, want 2", n)
	}
	if first.ID != orderID {
		t.Errorf("schema id %d, want the registry's %d", first.ID, orderID)
	}
}

// TestProtobufMessageIndexes: the wire format's indexes name the message
// (Confluent's MessageIndexes: a count, then the path; the single byte 0
// for the first message), and one registry id is one message.
func TestProtobufMessageIndexes(t *testing.T) {
	fd := descriptors(t)
	line := dynamicpb.NewMessage(fd.Messages().ByName("Order").Messages().ByName("Line"))
	set(line, "sku", "S9")
	p := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0)
	// A producer's indexes come from its descriptor, whose nested types
	// include the map fields' entries (CountsEntry comes before Line).
	lineAt := line.Descriptor().Index()
	v, err := p.Convert(context.Background(), "lines", wire(t, orderID, []int{0, lineAt}, line))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Schema.Text, `"name":"Line"`) {
		t.Errorf("indexes [0, %d] should read Order.Line:\n%s", lineAt, v.Schema.Text)
	}
	_, err = p.Convert(context.Background(), "lines", wire(t, orderID, []int{0}, fullOrder(t)))
	if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), "one message type per registry schema id") {
		t.Errorf("another message of a bound id: %v, want a conversion error", err)
	}
	other := dynamicpb.NewMessage(fd.Messages().ByName("Other"))
	set(other, "x", "y")
	v, err = NewProtobuf(orderRegistry(), ProtobufOptions{}, 0).Convert(context.Background(), "others", wire(t, orderID, []int{1}, other))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := v.Schema.Native(v.Datum); !reflect.DeepEqual(got, map[string]any{"x": u("string", "y")}) {
		t.Errorf("Other = %#v", got)
	}
}

// TestProtobufBadRecords: bytes and schemas that cannot be read are the
// record's fault (errors.tolerance applies), each saying why; an outage
// is not.
func TestProtobufBadRecords(t *testing.T) {
	valid := wire(t, orderID, []int{0}, fullOrder(t))
	for _, tc := range []struct {
		name string
		data []byte
		is   error
		says string
	}{
		{"not framed", []byte("hello"), schema.ErrNotFramed, "magic byte"},
		{"no indexes", schema.AppendWire(nil, orderID, nil), ErrConversion, "message-index count"},
		{"index past the file", schema.AppendWire(nil, orderID, []byte{2, 10}), ErrConversion, "has 2 messages"},
		{"negative count", schema.AppendWire(nil, orderID, []byte{1}), ErrConversion, "not in [0, 100]"},
		{"truncated message", schema.AppendWire(nil, orderID, []byte{0, 0x0a, 0x05, 'a'}), ErrConversion, "not a shop.v1.Order message"},
		{"unknown id", schema.AppendWire(nil, 99, []byte{0}), schema.ErrUnknownSchema, "99"},
		{"not protobuf", schema.AppendWire(nil, 9, []byte{0}), schema.ErrUnsupportedSchema, "AVRO is not PROTOBUF"},
		{"does not compile", schema.AppendWire(nil, 10, []byte{0}), schema.ErrUnsupportedSchema, "does not compile"},
		{"missing reference", schema.AppendWire(nil, 11, []byte{0}), schema.ErrUnknownSchema, `subject "missing-value" version 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0).Convert(context.Background(), "orders", tc.data)
			if !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want %v saying %q", err, tc.is, tc.says)
			}
		})
	}
	reg := orderRegistry()
	reg.down = errors.New("connection refused")
	_, err := NewProtobuf(reg, ProtobufOptions{}, 0).Convert(context.Background(), "orders", valid)
	if err == nil || errors.Is(err, ErrConversion) || errors.Is(err, schema.ErrUnsupportedSchema) {
		t.Errorf("an outage: %v, want an error that is not the record's", err)
	}
}

// TestProtobufSchemaByID: recovery finds a file's only message; with
// several, the message is known once a record named it.
func TestProtobufSchemaByID(t *testing.T) {
	p := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0)
	s, err := p.SchemaByID(context.Background(), otherID)
	if err != nil || s.ID != otherID || !strings.Contains(s.Text, `"Only"`) {
		t.Errorf("the only message: %v, %v", s, err)
	}
	if _, err := p.SchemaByID(context.Background(), orderID); !errors.Is(err, schema.ErrUnknownSchema) {
		t.Errorf("several messages, none read: %v, want ErrUnknownSchema", err)
	}
	v, err := p.Convert(context.Background(), "orders", wire(t, orderID, []int{0}, fullOrder(t)))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := p.SchemaByID(context.Background(), orderID); err != nil || s != v.Schema {
		t.Errorf("after a record: %v, %v; want the record's schema", s, err)
	}
}

// TestProtobufRefusedMappings: what has no Avro form says so.
func TestProtobufRefusedMappings(t *testing.T) {
	for _, tc := range []struct{ name, proto, says string }{
		{"recursive", `syntax = "proto3"; message Node { Node next = 1; }`, "contains itself"},
		{"two oneofs of one name", `syntax = "proto3"; message A { oneof v { string s = 1; } B b = 2; } message B { oneof v { int64 i = 1; } }`, "used by two different structs"},
		{"two short names", `syntax = "proto3"; message A { B.X one = 1; C.X two = 2; } message B { message X {} } message C { message X {} }`, "have one short name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := &fakeTexts{byID: map[int32]schema.Raw{1: {Type: "PROTOBUF", Text: tc.proto}}}
			_, err := NewProtobuf(reg, ProtobufOptions{}, 0).Convert(context.Background(), "t", schema.AppendWire(nil, 1, []byte{0}))
			if !errors.Is(err, ErrConversion) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("err = %v, want a conversion error saying %q", err, tc.says)
			}
		})
	}
}

// TestProtobufMessageReusedAfterOneof: a message first written inside a
// oneof's record (whose namespace io.confluent.connect.protobuf.Union it
// inherits in Avro) is referenced by that full name later.
func TestProtobufMessageReusedAfterOneof(t *testing.T) {
	text := `syntax = "proto3"; message Pay { oneof how { Card card = 1; string cash = 2; } Card backup = 3; } message Card { string no = 1; }`
	reg := &fakeTexts{byID: map[int32]schema.Raw{1: {Type: "PROTOBUF", Text: text}}}
	// card set (field 1: Card{no: "4"}), backup set (field 3: Card{no: "5"}).
	msg := []byte{0x0a, 0x03, 0x0a, 0x01, '4', 0x1a, 0x03, 0x0a, 0x01, '5'}
	v, err := NewProtobuf(reg, ProtobufOptions{}, 0).Convert(context.Background(), "t", schema.AppendWire(nil, 1, append([]byte{0}, msg...)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Schema.Native(v.Datum)
	if err != nil {
		t.Fatalf("%v\n%s", err, v.Schema.Text)
	}
	card := "io.confluent.connect.protobuf.Union.Card"
	want := map[string]any{
		"how_0":  u("io.confluent.connect.protobuf.Union.how", map[string]any{"card": u(card, map[string]any{"no": u("string", "4")}), "cash": nil}),
		"backup": u(card, map[string]any{"no": u("string", "5")}),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v\n%s", got, want, v.Schema.Text)
	}
}

// TestProtobufConcurrentFirstRecords: partitions convert in parallel; the
// ones that meet a new id together share one fetch and one binding. The
// registry answers only once all eight have missed the cache.
func TestProtobufConcurrentFirstRecords(t *testing.T) {
	reg := orderRegistry()
	reg.hold = make(chan struct{})
	p := NewProtobuf(reg, ProtobufOptions{}, 0)
	var missed sync.WaitGroup
	missed.Add(8)
	p.files.missed = func(int32) { missed.Done() }
	go func() { missed.Wait(); close(reg.hold) }()
	data := wire(t, orderID, []int{0}, fullOrder(t))
	schemas := make(chan *schema.Schema, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			v, err := p.Convert(context.Background(), "orders", data)
			if err != nil {
				t.Error(err)
			}
			schemas <- v.Schema
		})
	}
	wg.Wait()
	close(schemas)
	first := <-schemas
	for s := range schemas {
		if s != first {
			t.Fatal("two partitions got two schemas for one id")
		}
	}
	if n := reg.lookups.Load(); n != 2 {
		t.Errorf("%d registry lookups, want the id and its reference once", n)
	}
}

// TestProtobufProto2Defaults: a proto2 optional scalar not set is its
// declared default, as getField gives it to ProtobufData; a message not
// set is null.
func TestProtobufProto2Defaults(t *testing.T) {
	text := `syntax = "proto2"; message P { optional int32 n = 1 [default = 7]; optional string s = 2; optional P2 m = 3; } message P2 { optional bool b = 1; }`
	reg := &fakeTexts{byID: map[int32]schema.Raw{1: {Type: "PROTOBUF", Text: text}}}
	v, err := NewProtobuf(reg, ProtobufOptions{}, 0).Convert(context.Background(), "t", schema.AppendWire(nil, 1, []byte{0}))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := v.Schema.Native(v.Datum)
	want := map[string]any{"n": u("int", int32(7)), "s": u("string", ""), "m": nil}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}

// BenchmarkProtobufConvert is one record of the test's Order (every
// mapping) through a converter whose schema is cached: decode, map, encode.
func BenchmarkProtobufConvert(b *testing.B) {
	p := NewProtobuf(orderRegistry(), ProtobufOptions{}, 0)
	data := wire(b, orderID, []int{0}, fullOrder(b))
	ctx := context.Background()
	if _, err := p.Convert(ctx, "orders", data); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Convert(ctx, "orders", data); err != nil {
			b.Fatal(err)
		}
	}
}
