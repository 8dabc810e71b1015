package partitioner

import (
	"reflect"
	"testing"
	"time"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// withShortcut is r with Record.Field answered by schema.FieldNative, as
// the sink wires it.
func withShortcut(t *testing.T, native map[string]any) Record {
	t.Helper()
	s, err := schema.New(1, orderSchema)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := s.Codec.BinaryFromNative(nil, native)
	if err != nil {
		t.Fatal(err)
	}
	r := avroRecord(t, orderSchema, native)
	r.Field = func(path []string) (any, bool) { return s.FieldNative(bin, path) }
	return r
}

// TestFieldShortcutSameResults: every field and timestamp partitioner
// gives the same directory, or the same error, whether it reads fields
// through the shortcut or by decoding the whole value.
func TestFieldShortcutSameResults(t *testing.T) {
	var parts []Partitioner
	for _, names := range [][]string{{"country"}, {"qty", "paid", "color"}, {"region"}, {"customer.tier"},
		{"customer.address.city"}, {"price"}, {"tags"}, {"nope"}, {"id", "customer.nope"}} {
		p, err := NewField(names)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	for _, field := range []string{"ts", "ts_us", "day", "opt_ts", "ts_str", "id", "qty", "country", "customer.tier", "nope"} {
		p, err := New(Config{Kind: KindHourly, Locale: "en", Location: time.UTC, Extractor: RecordField, TimestampField: field})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	natives := []map[string]any{baseOrder()}
	withAddr := baseOrder()
	withAddr["customer"] = map[string]any{"tier": int32(1), "address": map[string]any{"shop.Address": map[string]any{"city": "Lyon"}}}
	withAddr["opt_ts"] = goavro.Union("long.timestamp-millis", time.UnixMilli(1_000).UTC())
	withAddr["region"] = goavro.Union("string", "eu")
	natives = append(natives, withAddr)
	for _, native := range natives {
		for _, p := range parts {
			slow, slowErr := p.Encode(avroRecord(t, orderSchema, native))
			fast, fastErr := p.Encode(withShortcut(t, native))
			if slow != fast || !reflect.DeepEqual(errText(slowErr), errText(fastErr)) {
				t.Errorf("%T %v: decode gives %q, %v; shortcut gives %q, %v", p, p.Fields(), slow, slowErr, fast, fastErr)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestFieldShortcutSkipsDecode: when the shortcut answers, the whole value
// is never decoded (the reason the shortcut exists).
func TestFieldShortcutSkipsDecode(t *testing.T) {
	field, err := NewField([]string{"country", "customer.tier"})
	if err != nil {
		t.Fatal(err)
	}
	hourly, err := New(Config{Kind: KindHourly, Locale: "en", Location: time.UTC, Extractor: RecordField, TimestampField: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Partitioner{field, hourly} {
		r := withShortcut(t, baseOrder())
		r.Value = func() (any, error) {
			t.Errorf("%v: whole value decoded although the shortcut answers", p.Fields())
			return nil, nil
		}
		if _, err := p.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
}
