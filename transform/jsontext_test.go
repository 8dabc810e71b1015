package transform

import (
	"encoding/json"
	"testing"
)

// TestParseObject: the top-level scan finds each member's key and value
// text whatever the strings hold (brackets, escaped quotes, backslashes)
// and whatever the spacing, and refuses what is not one JSON object; the
// members written back are the object, compact.
func TestParseObject(t *testing.T) {
	for _, tc := range []struct {
		in      string
		names   []string
		out     string // "": refused
		notJSON bool   // refused as not JSON, not as another JSON type
	}{
		{in: `{}`, out: `{}`},
		{in: " { } ", out: `{}`},
		{in: `{"a":"}{","b":[{"c":"]"}]}`, names: []string{"a", "b"}, out: `{"a":"}{","b":[{"c":"]"}]}`},
		{in: `{"a\"b" : "x\\" , "c":"\\\"" }`, names: []string{`a"b`, "c"}, out: `{"a\"b":"x\\","c":"\\\""}`},
		{in: "{\n\t\"a\": [ 1 , 2 ],\r\n \"s\": \"a b\\n\" }", names: []string{"a", "s"}, out: `{"a":[1,2],"s":"a b\n"}`},
		{in: `{"n":-1.5e+3,"t":true,"z":null}`, names: []string{"n", "t", "z"}, out: `{"n":-1.5e+3,"t":true,"z":null}`},
		{in: `{"\u0041":1}`, names: []string{"A"}, out: `{"\u0041":1}`},
		{in: `[1]`},
		{in: `"x"`},
		{in: `{"a":1} x`, notJSON: true},
		{in: `{"a":1,}`, notJSON: true},
		{in: `{"a" 1}`, notJSON: true},
		{in: `{"a":"1}`, notJSON: true},
		{in: `{"a":[1}`, notJSON: true},
	} {
		ms, err := parseObject([]byte(tc.in), nil)
		if tc.out == "" {
			if err == nil {
				t.Errorf("%s: parsed, want refused", tc.in)
			} else if got := errorIsNotObject(err); got == tc.notJSON {
				t.Errorf("%s: err %v (not an object: %v), want not JSON: %v", tc.in, err, got, tc.notJSON)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		var names []string
		for _, m := range ms {
			names = append(names, string(m.name()))
		}
		equal(t, tc.in+" names", names, tc.names)
		out := string(appendObject(nil, ms))
		equal(t, tc.in+" written", out, tc.out)
		if !json.Valid([]byte(out)) {
			t.Errorf("%s: written %s is not JSON", tc.in, out)
		}
	}
}

func errorIsNotObject(err error) bool { return err == errNotAnObject }
