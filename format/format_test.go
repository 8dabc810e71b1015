package format

import "testing"

// TestValueErrorText: the message the encoders' value errors always had.
func TestValueErrorText(t *testing.T) {
	err := error(&ValueError{Path: "a.b", Msg: "int64 is not a string value"})
	if got := err.Error(); got != "field a.b: int64 is not a string value" {
		t.Fatalf("Error() = %q", got)
	}
}
