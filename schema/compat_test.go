package schema

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

const (
	userV1 = `{"type":"record","name":"User","namespace":"com.example","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":"string"}]}`
	userV2 = `{"type":"record","name":"User","namespace":"com.example","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":"string"},
		{"name":"email","type":["null","string"],"default":null}]}`
	// userV2Doc differs from userV2 only in documentation, aliases, order,
	// defaults and custom properties, as Connect's AvroData adds them.
	userV2Doc = `{"type":"record","name":"User","namespace":"com.example",
		"doc":"a user","aliases":["Person"],"connect.version":3,"connect.name":"com.example.User",
		"fields":[
		{"name":"id","type":{"type":"long","connect.type":"int64"},"doc":"key","order":"descending"},
		{"name":"name","type":"string","default":"anon","aliases":["label"]},
		{"name":"email","type":["null",{"type":"string","avro.java.string":"String"}],"default":null,"x-owner":"crm"}]}`
	// userAge needs a field older records lack and cannot default.
	userAge = `{"type":"record","name":"User","namespace":"com.example","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":"string"},
		{"name":"age","type":"int"}]}`
	// userNameInt changes name's type in a way no promotion covers.
	userNameInt = `{"type":"record","name":"User","namespace":"com.example","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":"int"}]}`
	person = `{"type":"record","name":"Person","namespace":"com.example","fields":[
		{"name":"id","type":"long"},
		{"name":"name","type":"string"}]}`
	// userTS only adds a logical type: material, because the column type
	// changes though the bytes do not.
	userTS = `{"type":"record","name":"User","namespace":"com.example","fields":[
		{"name":"id","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"name","type":"string"}]}`
)

func TestDecide(t *testing.T) {
	var (
		v1       = mustSchema(t, 1, userV1)
		v2       = mustSchema(t, 2, userV2)
		v2doc    = mustSchema(t, 7, userV2Doc)
		age      = mustSchema(t, 5, userAge)
		nameInt  = mustSchema(t, 8, userNameInt)
		personV  = mustSchema(t, 6, person)
		ts       = mustSchema(t, 9, userTS)
		v2sameID = mustSchema(t, 2, userV2)
	)
	type tc struct {
		mode              Compatibility
		name              string
		current, incoming *Schema
		want              Decision
		wantPath          string // non-empty: want *IncompatibleError at this path
	}
	var tests []tc
	for _, mode := range []Compatibility{CompatNone, CompatBackward, CompatForward, CompatFull} {
		tests = append(tests,
			tc{mode, "no current", nil, v1, Rotate, ""},
			tc{mode, "same pointer", v2, v2, Same, ""},
			tc{mode, "same id and text", v2, v2sameID, Same, ""},
			tc{mode, "doc-only newer", v2, v2doc, Same, ""},
			tc{mode, "doc-only older", v2doc, v2, Same, ""},
		)
	}
	tests = append(tests,
		tc{CompatNone, "newer", v1, v2, Rotate, ""},
		tc{CompatNone, "older", v2, v1, Rotate, ""},
		tc{CompatNone, "incompatible older", age, v1, Rotate, ""},
		tc{CompatNone, "logical type added", v1, ts, Rotate, ""},

		tc{CompatBackward, "newer", v1, v2, Rotate, ""},
		tc{CompatBackward, "older", v2, v1, ProjectToCurrent, ""},
		tc{CompatBackward, "older doc variant", v2doc, v1, ProjectToCurrent, ""},
		tc{CompatBackward, "incompatible older", age, v1, 0, "User.age"},
		tc{CompatBackward, "top-level name differs", personV, v1, Rotate, ""},
		tc{CompatBackward, "logical type only, older", ts, v1, 0, "User.id"},

		tc{CompatFull, "newer", v1, v2, Rotate, ""},
		tc{CompatFull, "older", v2, v1, ProjectToCurrent, ""},
		tc{CompatFull, "incompatible older", age, v1, 0, "User.age"},
		tc{CompatFull, "top-level name differs", personV, v1, Rotate, ""},

		tc{CompatForward, "newer", v1, v2, ProjectToCurrent, ""},
		tc{CompatForward, "older", v2, v1, Rotate, ""},
		tc{CompatForward, "older incompatible still rotates", age, v1, Rotate, ""},
		tc{CompatForward, "incompatible newer", v1, nameInt, 0, "User.name"},
		tc{CompatForward, "newer with other name", v1, personV, 0, "User"},
	)
	for _, tt := range tests {
		t.Run(tt.mode.String()+"/"+tt.name, func(t *testing.T) {
			got, err := tt.mode.Decide(tt.current, tt.incoming)
			if tt.wantPath != "" {
				var ie *IncompatibleError
				if !errors.As(err, &ie) || !errors.Is(err, ErrIncompatible) || ie.Path != tt.wantPath {
					t.Fatalf("Decide = %v, %v; want *IncompatibleError at %s", got, err, tt.wantPath)
				}
				if ie.WriterID != tt.incoming.ID || ie.ReaderID != tt.current.ID {
					t.Fatalf("error ids = %d→%d, want %d→%d", ie.WriterID, ie.ReaderID, tt.incoming.ID, tt.current.ID)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Decide = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestDecideNilIncoming(t *testing.T) {
	if _, err := CompatBackward.Decide(mustSchema(t, 1, userV1), nil); err == nil {
		t.Fatal("Decide(current, nil) succeeded")
	}
}

// Same promises the datum can be appended unchanged: check it decodes with
// the current schema to the same value.
func TestDecideSameMeansSameBytes(t *testing.T) {
	v2, v2doc := mustSchema(t, 2, userV2), mustSchema(t, 7, userV2Doc)
	datum, err := v2doc.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(-3), "name": "x", "email": map[string]any{"string": "e"}})
	if err != nil {
		t.Fatal(err)
	}
	a, err := v2.Native(datum)
	if err != nil {
		t.Fatal(err)
	}
	b, err := v2doc.Native(datum)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("decodes differ: %#v vs %#v", a, b)
	}
}

func TestParseCompatibility(t *testing.T) {
	good := map[string]Compatibility{
		"": CompatNone, "NONE": CompatNone, "backward": CompatBackward,
		"Forward": CompatForward, "FULL": CompatFull,
	}
	for in, want := range good {
		if got, err := ParseCompatibility(in); err != nil || got != want {
			t.Errorf("ParseCompatibility(%q) = %v, %v; want %v", in, got, err, want)
		}
		if in != "" && !strings.EqualFold(want.String(), in) {
			t.Errorf("%v.String() does not round-trip %q", want, in)
		}
	}
	for _, in := range []string{"FULL_TRANSITIVE", "back", " NONE"} {
		if _, err := ParseCompatibility(in); !errors.Is(err, ErrBadCompatibility) {
			t.Errorf("ParseCompatibility(%q) = %v, want ErrBadCompatibility", in, err)
		}
	}
}
