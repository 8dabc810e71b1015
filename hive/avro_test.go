package hive

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// rec wraps field JSON in a top-level record.
func rec(fields ...string) string {
	return `{"type":"record","name":"R","namespace":"com.ex","fields":[` + strings.Join(fields, ",") + `]}`
}

func TestHiveColumnsTypes(t *testing.T) {
	tests := []struct {
		name  string
		field string // the type JSON of field "f"
		want  string
	}{
		{"boolean", `"boolean"`, "boolean"},
		{"int", `"int"`, "int"},
		{"long", `"long"`, "bigint"},
		{"float", `"float"`, "float"},
		{"double", `"double"`, "double"},
		{"string", `"string"`, "string"},
		{"bytes", `"bytes"`, "binary"},
		{"null", `"null"`, "void"},
		{"primitive object", `{"type":"long"}`, "bigint"},
		{"enum", `{"type":"enum","name":"E","symbols":["A","B"]}`, "string"},
		{"fixed", `{"type":"fixed","name":"F","size":16}`, "binary"},
		{"date", `{"type":"int","logicalType":"date"}`, "date"},
		{"time-millis stays int", `{"type":"int","logicalType":"time-millis"}`, "int"},
		{"time-micros stays bigint", `{"type":"long","logicalType":"time-micros"}`, "bigint"},
		{"timestamp-millis", `{"type":"long","logicalType":"timestamp-millis"}`, "timestamp"},
		{"timestamp-micros", `{"type":"long","logicalType":"timestamp-micros"}`, "timestamp"},
		{"local-timestamp-millis", `{"type":"long","logicalType":"local-timestamp-millis"}`, "timestamp"},
		{"decimal bytes", `{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}`, "decimal(10,2)"},
		{"decimal default scale", `{"type":"bytes","logicalType":"decimal","precision":5}`, "decimal(5,0)"},
		{"decimal fixed", `{"type":"fixed","name":"D","size":8,"logicalType":"decimal","precision":18,"scale":4}`, "decimal(18,4)"},
		{"decimal max precision", `{"type":"bytes","logicalType":"decimal","precision":38,"scale":38}`, "decimal(38,38)"},
		{"uuid", `{"type":"string","logicalType":"uuid"}`, "string"},
		{"duration fixed", `{"type":"fixed","name":"Dur","size":12,"logicalType":"duration"}`, "binary"},
		// The Avro spec: invalid or misplaced logical types are ignored.
		{"date on string ignored", `{"type":"string","logicalType":"date"}`, "string"},
		{"timestamp on int ignored", `{"type":"int","logicalType":"timestamp-millis"}`, "int"},
		{"unknown logical ignored", `{"type":"long","logicalType":"epoch-weeks"}`, "bigint"},
		{"decimal scale > precision ignored", `{"type":"bytes","logicalType":"decimal","precision":2,"scale":3}`, "binary"},
		{"decimal without precision ignored", `{"type":"bytes","logicalType":"decimal"}`, "binary"},
		{"decimal negative scale ignored", `{"type":"bytes","logicalType":"decimal","precision":4,"scale":-1}`, "binary"},
		{"decimal non-integer precision ignored", `{"type":"bytes","logicalType":"decimal","precision":4.5}`, "binary"},
		{"decimal on string ignored", `{"type":"string","logicalType":"decimal","precision":4}`, "string"},
		{"nullable", `["null","string"]`, "string"},
		{"nullable null last", `["long","null"]`, "bigint"},
		{"nullable logical", `["null",{"type":"long","logicalType":"timestamp-millis"}]`, "timestamp"},
		{"single branch union", `["int"]`, "int"},
		{"only null union", `["null"]`, "void"},
		{"wide union", `["null","int","string"]`, "uniontype<int,string>"},
		{"array", `{"type":"array","items":"string"}`, "array<string>"},
		{"array of nullable", `{"type":"array","items":["null","int"]}`, "array<int>"},
		{"map", `{"type":"map","values":"long"}`, "map<string,bigint>"},
		{"map of arrays of dates", `{"type":"map","values":{"type":"array","items":{"type":"int","logicalType":"date"}}}`, "map<string,array<date>>"},
		{"record", `{"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"y","type":["null","string"]}]}`, "struct<x:int,y:string>"},
		{"nested records", `{"type":"record","name":"A","fields":[{"name":"b","type":{"type":"record","name":"B","fields":[{"name":"t","type":{"type":"long","logicalType":"timestamp-micros"}}]}}]}`, "struct<b:struct<t:timestamp>>"},
		{"array of records", `{"type":"array","items":{"type":"record","name":"I","fields":[{"name":"v","type":"double"}]}}`, "array<struct<v:double>>"},
		{"error type is a record", `{"type":"error","name":"Err","fields":[{"name":"m","type":"string"}]}`, "struct<m:string>"},
		// The columns follow the avsc model the Parquet and JSON writers
		// use, so a table never declares a type its files do not hold: the
		// nanos timestamps are plain INT64 there, not Hive timestamps.
		{"timestamp-nanos stays bigint", `{"type":"long","logicalType":"timestamp-nanos"}`, "bigint"},
		{"local-timestamp-nanos stays bigint", `{"type":"long","logicalType":"local-timestamp-nanos"}`, "bigint"},
		{"null branch as object", `[{"type":"null"},"int"]`, "int"},
		{"record reused by name", `{"type":"record","name":"P","fields":[{"name":"a","type":{"type":"record","name":"Q","fields":[{"name":"x","type":"int"}]}},{"name":"b","type":["null","Q"]}]}`, "struct<a:struct<x:int>,b:struct<x:int>>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := HiveColumns(rec(`{"name":"f","type":` + tt.field + `}`))
			if err != nil {
				t.Fatalf("HiveColumns: %v", err)
			}
			if len(cols) != 1 || cols[0].Type != tt.want {
				t.Fatalf("got %+v, want type %q", cols, tt.want)
			}
		})
	}
}

func TestHiveColumnsNamedReferences(t *testing.T) {
	schema := rec(
		`{"name":"home","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"}]}}`,
		`{"name":"work","type":["null","Addr"]}`, // short name, enclosing namespace
		`{"name":"old","type":"com.ex.Addr"}`,    // full name
		`{"name":"kind","type":{"type":"enum","name":"Kind","namespace":"other","symbols":["A"]}}`,
		`{"name":"kind2","type":"other.Kind"}`,
		`{"name":"money","type":{"type":"fixed","name":"Money","size":8,"logicalType":"decimal","precision":12,"scale":2}}`,
		`{"name":"money2","type":{"type":"Money"}}`, // reference in object form
	)
	cols, err := HiveColumns(schema)
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "home", Type: "struct<city:string>"},
		{Name: "work", Type: "struct<city:string>"},
		{Name: "old", Type: "struct<city:string>"},
		{Name: "kind", Type: "string"},
		{Name: "kind2", Type: "string"},
		{Name: "money", Type: "decimal(12,2)"},
		{Name: "money2", Type: "decimal(12,2)"},
	}
	if !reflect.DeepEqual(cols, want) {
		t.Fatalf("got  %+v\nwant %+v", cols, want)
	}
}

func TestHiveColumnsDocsAndNames(t *testing.T) {
	cols, err := HiveColumns(rec(
		`{"name":"Größe","type":"int"}`,
		`{"name":"price","type":"double","doc":"Preis in €, 価格 🙂"}`,
		`{"name":"CamelCase","type":"string","doc":""}`,
	))
	if err == nil {
		t.Fatalf("non-ASCII field name accepted: %+v", cols)
	}
	cols, err = HiveColumns(rec(
		`{"name":"price","type":"double","doc":"Preis in €, 価格 🙂"}`,
		`{"name":"CamelCase","type":"string"}`,
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []Column{
		{Name: "price", Type: "double", Comment: "Preis in €, 価格 🙂"},
		{Name: "CamelCase", Type: "string"}, // case is Hive's business
	}
	if !reflect.DeepEqual(cols, want) {
		t.Fatalf("got %+v, want %+v", cols, want)
	}
}

func TestHiveColumnsErrors(t *testing.T) {
	tests := []struct {
		name, schema, wantMsg string
	}{
		{"not json", `{"type":`, "not JSON"},
		{"primitive top level", `"string"`, "top level must be a record"},
		{"array top level", `{"type":"array","items":"int"}`, "top level must be a record"},
		{"union top level", `["null",{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}]`, "top level must be a record"},
		{"no fields", `{"type":"record","name":"R","fields":[]}`, "no fields"},
		{"record without name", `{"type":"record","fields":[{"name":"a","type":"int"}]}`, "without name"},
		{"empty nested record", rec(`{"name":"a","type":{"type":"record","name":"E","fields":[]}}`), "no fields"},
		{"field without type", rec(`{"name":"a"}`), "field without type"},
		{"field not object", rec(`"a"`), "not an object"},
		{"bad field name", rec(`{"name":"a b","type":"int"}`), "invalid field name"},
		{"empty field name", rec(`{"name":"","type":"int"}`), "invalid field name"},
		{"duplicate field", rec(`{"name":"a","type":"int"}`, `{"name":"A","type":"int"}`), "duplicate field"},
		{"unknown type", rec(`{"name":"a","type":"Nope"}`), `unknown type "Nope"`},
		{"array without items", rec(`{"name":"a","type":{"type":"array"}}`), "without \"items\""},
		{"map without values", rec(`{"name":"a","type":{"type":"map"}}`), "without \"values\""},
		{"type not string", rec(`{"name":"a","type":{"type":{"type":"int"}}}`), `"type" must be a string`},
		{"number as type", rec(`{"name":"a","type":5}`), "unexpected JSON"},
		{"nested union", rec(`{"name":"a","type":["null",["int","string"]]}`), "union directly inside a union"},
		{"recursive record", rec(`{"name":"n","type":{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"]}]}}`), "recursive type com.ex.Node"},
		{"self-recursive top level", rec(`{"name":"child","type":["null","R"]}`), "recursive type com.ex.R"},
		{"redefined type", rec(`{"name":"a","type":{"type":"enum","name":"E","symbols":["X"]}}`, `{"name":"b","type":{"type":"enum","name":"E","symbols":["Y"]}}`), "defined twice"},
		{"decimal too wide", rec(`{"name":"a","type":{"type":"bytes","logicalType":"decimal","precision":39}}`), "exceeds Hive's maximum 38"},
		{"fixed decimal too wide", rec(`{"name":"a","type":{"type":"fixed","name":"W","size":32,"logicalType":"decimal","precision":60}}`), "exceeds"},
		{"error path names nested field", rec(`{"name":"outer","type":{"type":"record","name":"O","fields":[{"name":"inner","type":"Missing"}]}}`), "outer.inner"},
		// goavro cannot decode the first two, Java Avro (Hive) cannot read the third.
		{"fixed without size", rec(`{"name":"a","type":{"type":"fixed","name":"F"}}`), "without a valid size"},
		{"empty union", rec(`{"name":"a","type":[]}`), "empty union"},
		{"record wrapped in type", `{"type":` + rec(`{"name":"a","type":"int"}`) + `}`, "top level must be a record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cols, err := HiveColumns(tt.schema)
			if err == nil {
				t.Fatalf("no error, columns %+v", cols)
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("error %v does not match ErrInvalidSchema", err)
			}
			var se *ColumnError
			if !errors.As(err, &se) {
				t.Errorf("error %T is not a *ColumnError", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestTableName(t *testing.T) {
	tests := []struct{ pattern, topic, want string }{
		{"${topic}", "orders", "orders"},
		{"", "orders.v1", "orders_v1"},
		{"${topic}", "my-topic.eu", "my_topic_eu"},
		{"raw_${topic}_tbl", "a-b", "raw_a_b_tbl"},
		{"${topic}_${topic}", "x", "x_x"},
		{"fixed", "ignored", "fixed"},
		{"${topic}", "MixedCase", "MixedCase"},
	}
	for _, tt := range tests {
		if got := TableName(tt.pattern, tt.topic); got != tt.want {
			t.Errorf("TableName(%q, %q) = %q, want %q", tt.pattern, tt.topic, got, tt.want)
		}
	}
}

func TestTruncateRunes(t *testing.T) {
	long := strings.Repeat("é価🙂", 100) // 300 runes, multi-byte
	got := truncateRunes(long, maxCommentLen)
	if n := len([]rune(got)); n != maxCommentLen {
		t.Fatalf("got %d runes, want %d", n, maxCommentLen)
	}
	if !strings.HasPrefix(long, got) || !strings.HasSuffix(got, "é") {
		t.Fatalf("truncation broke the text: ...%q", got[len(got)-8:])
	}
	if s := "short ü"; truncateRunes(s, maxCommentLen) != s {
		t.Fatal("short string changed")
	}
}
