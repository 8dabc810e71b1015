package schema

import (
	"errors"
	"reflect"
	"testing"
)

const userSchema = `{"type":"record","name":"User","fields":[
	{"name":"id","type":"long"},
	{"name":"name","type":"string"},
	{"name":"email","type":["null","string"],"default":null}]}`

func mustSchema(t testing.TB, id int32, text string) *Schema {
	t.Helper()
	s, err := New(id, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func encodeUser(t testing.TB, s *Schema) []byte {
	t.Helper()
	b, err := s.Codec.BinaryFromNative(nil, map[string]any{
		"id": int64(42), "name": "ada", "email": map[string]any{"string": "a@b.c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestValidateFailures(t *testing.T) {
	s := mustSchema(t, 3, userSchema)
	good := encodeUser(t, s)
	tests := []struct {
		name     string
		datum    []byte
		trailing int
	}{
		{"empty", nil, 0},
		{"truncated string", good[:len(good)-3], 0},
		{"truncated after first field", good[:1], 0},
		{"trailing bytes", append(append([]byte{}, good...), 0, 0), 2},
		{"negative string length", []byte{0x54, 0x01}, 0},
		{"string longer than datum", []byte{0x54, 0x7e, 'a'}, 0},
		{"union index out of range", []byte{0x54, 0x06, 'a', 'd', 'a', 0x08}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate(tt.datum)
			if !errors.Is(err, ErrCorruptDatum) {
				t.Fatalf("Validate = %v, want ErrCorruptDatum", err)
			}
			var de *DatumError
			if !errors.As(err, &de) || de.SchemaID != 3 || de.Trailing != tt.trailing {
				t.Fatalf("err = %#v, want schema 3, trailing %d", err, tt.trailing)
			}
		})
	}
}

func TestNative(t *testing.T) {
	s := mustSchema(t, 1, userSchema)
	v, err := s.Native(encodeUser(t, s))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"id": int64(42), "name": "ada", "email": map[string]any{"string": "a@b.c"}}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("Native = %#v, want %#v", v, want)
	}
}

func TestNewRejectsInvalidSchema(t *testing.T) {
	for _, text := range []string{``, `{`, `{"type":"record","name":"X"}`, `"nosuchtype"`} {
		_, err := New(9, text)
		var se *SchemaError
		if !errors.Is(err, ErrUnsupportedSchema) || !errors.As(err, &se) || se.ID != 9 {
			t.Errorf("New(%q) = %v, want *SchemaError for id 9", text, err)
		}
	}
}

func FuzzValidate(f *testing.F) {
	s := mustSchema(f, 1, `{"type":"record","name":"R","fields":[
		{"name":"a","type":{"type":"array","items":"string"}},
		{"name":"m","type":{"type":"map","values":["null","bytes","double"]}},
		{"name":"f","type":{"type":"fixed","name":"F","size":4}}]}`)
	f.Add([]byte{})
	f.Add([]byte{0x02, 0x02, 'x', 0x00, 0x00, 1, 2, 3, 4})
	f.Add([]byte{0x01, 0x7f, 0x02})
	f.Fuzz(func(t *testing.T, datum []byte) {
		v, err := s.Native(datum)
		if (err == nil) == (v == nil) {
			t.Fatalf("Native = %v, %v: want exactly one of value or error", v, err)
		}
		if err != nil && !errors.Is(err, ErrCorruptDatum) {
			t.Fatalf("error %v is not ErrCorruptDatum", err)
		}
	})
}
