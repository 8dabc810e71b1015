package syntax

import (
	"reflect"
	"testing"
)

// TestFormatPropertiesRoundTrip: what FormatProperties writes reads back
// as the same map, whatever the keys and values hold.
func TestFormatPropertiesRoundTrip(t *testing.T) {
	m := map[string]string{
		"name": "orders", "plain": "value", "key with space": " leading and trailing ",
		"k=eq:colon#hash!bang": "v=eq:colon#hash!bang", "backslash": `C:\dir\file \u0041`,
		"multi": "line1\nline2\r\tend\f", "jaas": `Module required username="u" password="p";`,
		"unicode": "zürich ☃", "empty": "", "#comment-like": "!x",
	}
	data := FormatProperties([]string{"written by the REST API", "second\nline"}, m)
	props, err := ParseProperties("x.properties", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	got := map[string]string{}
	for _, p := range props {
		got[p.Key] = p.Value
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("read back %q\nwant %q\nfile:\n%s", got, m, data)
	}
}
