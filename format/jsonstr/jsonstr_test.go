package jsonstr

import (
	"encoding/json"
	"testing"
)

// TestAppend: strings are escaped as JSON needs (and as Jackson writes
// them), other characters kept, invalid UTF-8 replaced; each result
// decodes back to the input (with U+FFFD for the invalid byte).
func TestAppend(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		`q"b\`:         `"q\"b\\"`,
		"nl\n\t\r\x01": `"nl\n\t\r\u0001"`,
		"wörld ✓":      `"wörld ✓"`,
		"<&>":          `"<&>"`,
		"bad\xffutf8":  `"bad` + "\uFFFD" + `utf8"`,
	} {
		got := string(Append(nil, in))
		if got != want {
			t.Errorf("Append(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("%q: %s does not decode: %v", in, got, err)
		}
	}
}
