package wiring

import "testing"

func TestServiceSPN(t *testing.T) {
	if got := serviceSPN("hive/_HOST@EXAMPLE.COM", "HMS1.example.com"); got != "hive/hms1.example.com" {
		t.Errorf("serviceSPN = %q", got)
	}
}
