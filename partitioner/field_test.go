package partitioner

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFieldEncode(t *testing.T) {
	withCity := set("customer", map[string]any{"tier": int32(3),
		"address": map[string]any{"shop.Address": map[string]any{"city": "Paris"}}})
	tests := []struct {
		name   string
		fields []string
		change func(map[string]any)
		want   string
	}{
		{"string", []string{"country"}, nil, "country=FR"},
		{"long int boolean enum", []string{"id", "qty", "paid", "color"}, nil, "id=42/qty=-7/paid=true/color=RED"},
		{"null union", []string{"region"}, nil, "region=null"},
		{"string union", []string{"region"}, set("region", map[string]any{"string": "west"}), "region=west"},
		{"nested", []string{"customer.tier"}, nil, "customer.tier=3"},
		{"nested behind a union", []string{"customer.address.city", "country"}, withCity, "customer.address.city=Paris/country=FR"},
		{"escaped", []string{"country"}, set("country", "a/b:c=d"), "country=a%2Fb%3Ac%3Dd"},
		{"empty", []string{"country"}, set("country", ""), "country=__HIVE_DEFAULT_PARTITION__"},
		{"utf-8 kept", []string{"country"}, set("country", "Zürich"), "country=Zürich"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(Config{Kind: KindField, FieldNames: tc.fields})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Encode(order(t, tc.change))
			if err != nil || got != tc.want {
				t.Fatalf("Encode = %q, %v; want %q", got, err, tc.want)
			}
			if !reflect.DeepEqual(p.Fields(), tc.fields) {
				t.Errorf("Fields = %q, want %q", p.Fields(), tc.fields)
			}
			vals, err := p.Values(got)
			if err != nil || len(vals) != len(tc.fields) {
				t.Fatalf("Values(%q) = %q, %v", got, vals, err)
			}
			// Each value re-encodes to its own path component.
			for i, v := range vals {
				if c := escapePathName(tc.fields[i]) + "=" + escapePathName(v); c != strings.Split(got, "/")[i] {
					t.Errorf("value %d %q re-encodes to %q, path has %q", i, v, c, strings.Split(got, "/")[i])
				}
			}
		})
	}
}

func TestFieldValuesUnescape(t *testing.T) {
	p, _ := NewField([]string{"country", "region"})
	vals, err := p.Values("country=a%2Fb%3Ac/region=null")
	if err != nil || !reflect.DeepEqual(vals, []string{"a/b:c", "null"}) {
		t.Fatalf("Values = %q, %v", vals, err)
	}
}

func TestFieldErrors(t *testing.T) {
	const must = "; a partition field must be int, long, string, boolean or enum"
	tests := []struct {
		name  string
		field string
		rec   func(t *testing.T) Record
		want  string
	}{
		{"missing", "nope", rec(nil), `partitioner: field "nope": the record value has no field "nope"`},
		{"missing nested", "customer.nope", rec(nil), `partitioner: field "customer.nope": "customer" has no field "nope"`},
		{"through a string", "country.x", rec(nil), `partitioner: field "country.x": "country" is a string, not a record`},
		{"through null", "customer.address.city", rec(nil), `partitioner: field "customer.address.city": "customer.address" is null, not a record`},
		{"double", "price", rec(nil), `partitioner: field "price": value is a double` + must},
		{"record", "customer", rec(nil), `partitioner: field "customer": value is a record or map` + must},
		{"array", "tags", rec(nil), `partitioner: field "tags": value is an array` + must},
		{"timestamp", "ts", rec(nil), `partitioner: field "ts": value is a timestamp or date` + must},
		{"decimal", "amount", rec(nil), `partitioner: field "amount": value is a decimal` + must},
		{"primitive value", "id", func(t *testing.T) Record { return avroRecord(t, `"string"`, "hello") },
			`partitioner: field "id": the record value is a string, not a record`},
		{"null value", "id", func(*testing.T) Record { return Record{} },
			`partitioner: field "id": the record value is null, not a record`},
		{"decode fails", "id", func(*testing.T) Record { return failingValue(errBoom) },
			`partitioner: field "id": decode value: boom`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewField([]string{tc.field})
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Encode(tc.rec(t))
			var re *RecordError
			if !errors.As(err, &re) || err.Error() != tc.want {
				t.Fatalf("error %v, want *RecordError %q", err, tc.want)
			}
			if tc.name == "decode fails" && !errors.Is(err, errBoom) {
				t.Errorf("error %v does not wrap the decode error", err)
			}
		})
	}
}

func rec(change func(map[string]any)) func(t *testing.T) Record {
	return func(t *testing.T) Record { return order(t, change) }
}

// TestFieldValueTooLongForADirectoryIsARecordError: a value whose directory
// name would pass the store's 255-byte limit can never be written; it is
// the record's fault (a bad record), not a store failure to retry forever.
func TestFieldValueTooLongForADirectoryIsARecordError(t *testing.T) {
	f, err := NewField([]string{"customer"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 250)
	_, err = f.Encode(Record{Value: func() (any, error) { return map[string]any{"customer": long}, nil }})
	var re *RecordError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "259 bytes, over the 255") {
		t.Fatalf("err = %v; want a RecordError naming the length", err)
	}
	if _, err := f.Encode(Record{Value: func() (any, error) { return map[string]any{"customer": long[:200]}, nil }}); err != nil {
		t.Fatalf("a 209-byte directory name: %v", err)
	}
}
