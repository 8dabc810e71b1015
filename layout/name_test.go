package layout

import "testing"

func TestFinalNameRoundTrip(t *testing.T) {
	name := FinalName("orders.v1", 3, 0, 999, 10, ".avro")
	if name != "orders.v1+3+0000000000+0000000999.avro" {
		t.Fatalf("FinalName = %q", name)
	}
	r, ok := ParseFinalName("/topics/orders.v1/partition=3/" + name)
	if !ok || r != (FileRange{Topic: "orders.v1", Partition: 3, Start: 0, End: 999, Ext: ".avro"}) {
		t.Fatalf("ParseFinalName = %+v, %v", r, ok)
	}
}

func TestFinalNameWidth(t *testing.T) {
	if got := FinalName("t", 0, 12345678901, 12345678902, 10, ".avro"); got != "t+0+12345678901+12345678902.avro" {
		t.Fatalf("offsets wider than the pad must not be cut: %q", got)
	}
	if got := FinalName("t", 0, 5, 7, 3, ""); got != "t+0+005+007" {
		t.Fatalf("pad 3 = %q", got)
	}
}

func TestParseFinalNameRejects(t *testing.T) {
	for _, name := range []string{
		"",
		"3f2c9d1e-aaaa_tmp.avro",          // a reference temp file
		"t+0+1.avro",                      // too few fields
		"t+0+10+9.avro",                   // end before start
		"t+x+1+2.avro",                    // partition not a number
		"t+0+1+2+3.avro",                  // too many fields
		"bad topic+0+1+2.avro",            // space in topic
		"t+99999999999+1+2.avro",          // partition overflows int32
		"t+0+99999999999999999999+1.avro", // offset overflows int64
	} {
		if r, ok := ParseFinalName(name); ok {
			t.Errorf("ParseFinalName(%q) = %+v, want rejection", name, r)
		}
	}
}
