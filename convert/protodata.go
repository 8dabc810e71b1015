package convert

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The Protobuf → Connect mapping of Confluent's ProtobufData
// (toConnectSchema, toConnectData), whose Connect schema then becomes Avro
// as AvroData writes it (connect.go). In short:
//   - a message is a struct named by the message's short name (the
//     default, enhanced.protobuf.schema.support=false); every field is
//     optional, the top-level struct is not;
//   - int32, sint32, sfixed32 → int32; uint32 and fixed32 (unsigned),
//     int64, sint64, sfixed64, uint64, fixed64 → int64; float → float32,
//     double → float64; bool, string, bytes as they are; an enum → its
//     value's name as a string;
//   - repeated → an array of optional elements; a map → a Connect map
//     whose optional keys make AvroData write an array of MapEntry
//     records {key, value};
//   - a real oneof → a field "<oneof>_<index>" (before the other fields)
//     holding an optional struct io.confluent.connect.protobuf.Union.<oneof>
//     with one optional field per member, only the set one not null;
//   - google.protobuf.Timestamp → Connect Timestamp (milliseconds),
//     google.type.Date → Date, google.type.TimeOfDay → Time; the
//     google.protobuf wrappers → a struct with one field "value", or with
//     wrapper.for.nullables=true the optional primitive;
//   - a message field not set is null; a scalar not set is its default,
//     except a proto3 optional one, which is null (as newer ProtobufData
//     reads a field with presence).
const (
	protobufUnionPrefix = "io.confluent.connect.protobuf.Union."
	protobufTimestamp   = "google.protobuf.Timestamp"
	protobufDate        = "google.type.Date"
	protobufTimeOfDay   = "google.type.TimeOfDay"
	protobufDecimal     = "confluent.type.Decimal"
)

// wrapperKinds are the google.protobuf wrappers' value types.
var wrapperKinds = map[protoreflect.FullName]bool{
	"google.protobuf.DoubleValue": true, "google.protobuf.FloatValue": true, "google.protobuf.Int64Value": true,
	"google.protobuf.UInt64Value": true, "google.protobuf.Int32Value": true, "google.protobuf.UInt32Value": true,
	"google.protobuf.BoolValue": true, "google.protobuf.StringValue": true, "google.protobuf.BytesValue": true,
}

// protoMapper builds the Connect schema of a message.
type protoMapper struct {
	opts ProtobufOptions
	// short is the message each short name stands for: Avro needs
	// distinct record names, and ProtobufData names structs by short name.
	short map[string]protoreflect.FullName
	open  map[protoreflect.FullName]bool // being mapped: a recursion
}

// avroOfMessage is the Avro schema JSON of a message.
func avroOfMessage(md protoreflect.MessageDescriptor, opts ProtobufOptions) (string, error) {
	m := &protoMapper{opts: opts, short: map[string]protoreflect.FullName{}, open: map[protoreflect.FullName]bool{}}
	cs, err := m.message(md)
	if err != nil {
		return "", err
	}
	root, err := compile(cs, string(md.Name()))
	if err != nil {
		return "", err
	}
	return avroSchema(cs, root)
}

func (m *protoMapper) message(md protoreflect.MessageDescriptor) (*connectSchema, error) {
	full, name := md.FullName(), string(md.Name())
	if other, ok := m.short[name]; ok && other != full {
		return nil, fmt.Errorf("messages %s and %s have one short name, %q: their Avro records would have one name", other, full, name)
	}
	if m.open[full] {
		return nil, fmt.Errorf("message %s contains itself: a recursive message has no Connect schema", full)
	}
	m.short[name], m.open[full] = full, true
	defer delete(m.open, full)
	cs := &connectSchema{Type: "struct", Name: name, ref: string(full)}
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		u := &connectSchema{Type: "struct", Optional: true, Name: protobufUnionPrefix + string(od.Name()),
			ref: string(od.FullName()), Field: unionField(od)}
		for j := range od.Fields().Len() {
			f, err := m.field(od.Fields().Get(j))
			if err != nil {
				return nil, err
			}
			u.Fields = append(u.Fields, f)
		}
		cs.Fields = append(cs.Fields, u)
	}
	for _, fd := range plainFields(md) {
		f, err := m.field(fd)
		if err != nil {
			return nil, err
		}
		cs.Fields = append(cs.Fields, f)
	}
	return cs, nil
}

// unionField is the field ProtobufData gives a oneof: its name and index.
func unionField(od protoreflect.OneofDescriptor) string {
	return string(od.Name()) + "_" + strconv.Itoa(od.Index())
}

// plainFields are a message's fields outside its real oneofs, in order.
func plainFields(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	fields := md.Fields()
	out := make([]protoreflect.FieldDescriptor, 0, fields.Len())
	for i := range fields.Len() {
		if fd := fields.Get(i); !inRealOneof(fd) {
			out = append(out, fd)
		}
	}
	return out
}

func inRealOneof(fd protoreflect.FieldDescriptor) bool {
	od := fd.ContainingOneof()
	return od != nil && !od.IsSynthetic()
}

func (m *protoMapper) field(fd protoreflect.FieldDescriptor) (*connectSchema, error) {
	if fd.IsMap() {
		k, err := m.value(fd.MapKey())
		if err != nil {
			return nil, err
		}
		v, err := m.value(fd.MapValue())
		if err != nil {
			return nil, err
		}
		return &connectSchema{Type: "map", Optional: true, Field: string(fd.Name()), Keys: k, Values: v}, nil
	}
	s, err := m.value(fd)
	if err != nil {
		return nil, err
	}
	if fd.IsList() {
		s = &connectSchema{Type: "array", Optional: true, Items: s}
	}
	s.Field = string(fd.Name())
	return s, nil
}

// value is the optional Connect schema of one value of fd's type.
func (m *protoMapper) value(fd protoreflect.FieldDescriptor) (*connectSchema, error) {
	t := scalarType(fd.Kind())
	if t != "" {
		return &connectSchema{Type: t, Optional: true}, nil
	}
	md := fd.Message()
	if md == nil {
		return nil, fmt.Errorf("field %s: kind %s has no Connect type", fd.FullName(), fd.Kind())
	}
	switch md.FullName() {
	case protobufTimestamp:
		return &connectSchema{Type: "int64", Optional: true, Name: connectTimestamp}, nil
	case protobufDate:
		return &connectSchema{Type: "int32", Optional: true, Name: connectDate}, nil
	case protobufTimeOfDay:
		return &connectSchema{Type: "int32", Optional: true, Name: connectTime}, nil
	case protobufDecimal:
		return nil, fmt.Errorf("field %s: %s is not supported yet", fd.FullName(), protobufDecimal)
	}
	if m.opts.WrapperForNullables && wrapperKinds[md.FullName()] {
		return m.value(md.Fields().ByName("value"))
	}
	s, err := m.message(md)
	if err != nil {
		return nil, err
	}
	s.Optional = true
	return s, nil
}

func scalarType(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind,
		protoreflect.Sfixed64Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "int64"
	case protoreflect.FloatKind:
		return "float32"
	case protoreflect.DoubleKind:
		return "float64"
	case protoreflect.BoolKind:
		return "boolean"
	case protoreflect.StringKind, protoreflect.EnumKind:
		return "string"
	case protoreflect.BytesKind:
		return "bytes"
	}
	return ""
}

// encodeMessage appends the Avro binary of msg's struct (its fields;
// the caller writes a union branch if the struct is optional).
func encodeMessage(dst []byte, msg protoreflect.Message, opts ProtobufOptions) ([]byte, error) {
	md := msg.Descriptor()
	var err error
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() {
			continue
		}
		set := msg.WhichOneof(od)
		if set == nil {
			dst = append(dst, 0) // the union struct is null
			continue
		}
		dst = append(dst, 2)
		for j := range od.Fields().Len() {
			fd := od.Fields().Get(j)
			if fd.Number() != set.Number() {
				dst = append(dst, 0)
				continue
			}
			if dst, err = encodeField(dst, msg, fd, opts); err != nil {
				return nil, err
			}
		}
	}
	for _, fd := range plainFields(md) {
		if dst, err = encodeField(dst, msg, fd, opts); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// encodeField appends one optional field: null when a message (or a
// proto3 optional scalar) is not set, else its value.
func encodeField(dst []byte, msg protoreflect.Message, fd protoreflect.FieldDescriptor, opts ProtobufOptions) ([]byte, error) {
	if nullWhenUnset(fd) && !msg.Has(fd) {
		return append(dst, 0), nil
	}
	dst = append(dst, 2)
	v := msg.Get(fd)
	switch {
	case fd.IsMap():
		return encodeProtoMap(dst, fd, v.Map(), opts)
	case fd.IsList():
		list := v.List()
		if list.Len() > 0 {
			dst = binary.AppendVarint(dst, int64(list.Len()))
			var err error
			for i := range list.Len() {
				if dst, err = encodeProtoValue(append(dst, 2), fd, list.Get(i), opts); err != nil {
					return nil, err
				}
			}
		}
		return append(dst, 0), nil
	}
	return encodeProtoValue(dst, fd, v, opts)
}

// nullWhenUnset: a singular message field, and a proto3 optional scalar
// (in a synthetic oneof), are null when not set; any other scalar is its
// default then (proto2's declared default included), as ProtobufData's
// getField gives it.
func nullWhenUnset(fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() {
		return false
	}
	od := fd.ContainingOneof()
	return fd.Message() != nil || (od != nil && od.IsSynthetic())
}

// encodeProtoMap writes a map as AvroData writes a Connect map with
// optional keys: an array of {key, value} records, here in key order so
// one message gives one datum.
func encodeProtoMap(dst []byte, fd protoreflect.FieldDescriptor, m protoreflect.Map, opts ProtobufOptions) ([]byte, error) {
	keys := make([]protoreflect.MapKey, 0, m.Len())
	m.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k)
		return true
	})
	slices.SortFunc(keys, compareMapKeys)
	if len(keys) > 0 {
		dst = binary.AppendVarint(dst, int64(len(keys)))
		var err error
		for _, k := range keys {
			if dst, err = encodeProtoValue(append(dst, 2), fd.MapKey(), k.Value(), opts); err != nil {
				return nil, err
			}
			if dst, err = encodeProtoValue(append(dst, 2), fd.MapValue(), m.Get(k), opts); err != nil {
				return nil, err
			}
		}
	}
	return append(dst, 0), nil
}

func compareMapKeys(a, b protoreflect.MapKey) int {
	switch x := a.Interface().(type) {
	case string:
		return cmp.Compare(x, b.String())
	case bool:
		if x == b.Bool() {
			return 0
		} else if x {
			return 1
		}
		return -1
	case int32, int64:
		return cmp.Compare(a.Int(), b.Int())
	}
	return cmp.Compare(a.Uint(), b.Uint())
}

// encodeProtoValue appends one value of fd's type (not its union branch).
func encodeProtoValue(dst []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value, opts ProtobufOptions) ([]byte, error) {
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind, protoreflect.Int64Kind,
		protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return binary.AppendVarint(dst, v.Int()), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return binary.AppendVarint(dst, int64(v.Uint())), nil // below 2^32: fits
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		// Java's long holds the same 64 bits: above 2^63 reads negative, as in Connect.
		return binary.AppendVarint(dst, int64(v.Uint())), nil //nolint:gosec // the bits, as ProtobufData keeps them
	case protoreflect.FloatKind:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(v.Float()))), nil
	case protoreflect.DoubleKind:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v.Float())), nil
	case protoreflect.BoolKind:
		if v.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case protoreflect.StringKind:
		return appendAvroBytes(dst, []byte(v.String())), nil
	case protoreflect.BytesKind:
		return appendAvroBytes(dst, v.Bytes()), nil
	case protoreflect.EnumKind:
		return appendAvroBytes(dst, []byte(enumName(fd, v.Enum()))), nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return encodeMessageValue(dst, fd.Message(), v.Message(), opts)
	}
	return nil, fmt.Errorf("field %s: kind %s has no Connect type", fd.FullName(), fd.Kind())
}

// enumName is a value's name; a number the enum does not declare (proto3
// keeps it) is written as its decimal digits.
func enumName(fd protoreflect.FieldDescriptor, n protoreflect.EnumNumber) string {
	if ev := fd.Enum().Values().ByNumber(n); ev != nil {
		return string(ev.Name())
	}
	return strconv.Itoa(int(n))
}

func appendAvroBytes(dst, b []byte) []byte {
	return append(binary.AppendVarint(dst, int64(len(b))), b...)
}

// encodeMessageValue writes a message value: the logical types and
// wrappers ProtobufData unwraps, else a struct.
func encodeMessageValue(dst []byte, md protoreflect.MessageDescriptor, msg protoreflect.Message, opts ProtobufOptions) ([]byte, error) {
	get := func(name protoreflect.Name) protoreflect.Value { return msg.Get(md.Fields().ByName(name)) }
	switch md.FullName() {
	case protobufTimestamp:
		// Timestamps.toMillis: seconds and whole milliseconds of the nanos.
		return binary.AppendVarint(dst, get("seconds").Int()*1000+get("nanos").Int()/1_000_000), nil
	case protobufDate:
		return encodeDate(dst, get("year").Int(), get("month").Int(), get("day").Int())
	case protobufTimeOfDay:
		ms := ((get("hours").Int()*60+get("minutes").Int())*60+get("seconds").Int())*1000 + get("nanos").Int()/1_000_000
		if ms < 0 || ms >= 86_400_000 {
			return nil, fmt.Errorf("%s: %d ms is not a time of day", md.FullName(), ms)
		}
		return binary.AppendVarint(dst, ms), nil
	}
	if opts.WrapperForNullables && wrapperKinds[md.FullName()] {
		fd := md.Fields().ByName("value")
		return encodeProtoValue(dst, fd, msg.Get(fd), opts)
	}
	return encodeMessage(dst, msg, opts)
}

// encodeDate is google.type.Date as Connect's Date: days since the epoch.
// A date that does not exist is refused, as ProtobufData's strict
// calendar refuses it.
func encodeDate(dst []byte, y, m, d int64) ([]byte, error) {
	t := time.Date(int(y), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if int64(t.Year()) != y || int64(t.Month()) != m || int64(t.Day()) != d {
		return nil, fmt.Errorf("%s: %04d-%02d-%02d is not a date", protobufDate, y, m, d)
	}
	return binary.AppendVarint(dst, t.Unix()/86400), nil
}
