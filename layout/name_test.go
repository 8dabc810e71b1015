package layout

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

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

// TestFinalNameBytesCountsFinalName: the length arithmetic the name checks
// use is the length of the name the writer builds, offsets wider than the
// pad included.
func TestFinalNameBytesCountsFinalName(t *testing.T) {
	offsets := []int64{0, 7, 9, 10, 99, 9_999_999_999, 10_000_000_000, 123_456_789_012, math.MaxInt64, -1, -10, math.MinInt64}
	for _, p := range []int32{0, 9, 10, 12345, math.MaxInt32, -1} {
		for _, pad := range []int{0, 1, 3, 10, 19, 25} {
			for _, start := range offsets {
				for _, end := range offsets {
					name := FinalName("orders", p, start, end, pad, ".snappy.parquet")
					if got := FinalNameBytes(len("orders"), p, start, end, pad, ".snappy.parquet"); got != len(name) {
						t.Fatalf("FinalNameBytes(p=%d start=%d end=%d pad=%d) = %d; len(%q) = %d", p, start, end, pad, got, name, len(name))
					}
				}
			}
		}
	}
}

// TestCheckNamesUsesPadWidthAndPartition (n6, n7): the limit is computed
// from the configured pad width, as the reference names files, not from
// 19-digit offsets; and from the partition's own number, whose digits count.
func TestCheckNamesUsesPadWidthAndPartition(t *testing.T) {
	for _, c := range []struct {
		topic   int // characters
		p       int32
		pad     int
		ext     string
		wantLen int // 0: fits
	}{
		{topic: 226, p: 0, pad: 10, ext: ".avro"},                // 255 exactly: the reference writes it
		{topic: 209, p: 0, pad: 10, ext: ".avro"},                // refused while 19 digits were assumed
		{topic: 227, p: 0, pad: 10, ext: ".avro", wantLen: 256},  // one over
		{topic: 225, p: 9, pad: 10, ext: ".avro"},                // one digit of partition
		{topic: 225, p: 10, pad: 10, ext: ".avro"},               // two digits, one character less
		{topic: 226, p: 10, pad: 10, ext: ".avro", wantLen: 256}, // fits partition 0, not 10
		{topic: 224, p: 100, pad: 10, ext: ".avro"},
		{topic: 225, p: 100, pad: 10, ext: ".avro", wantLen: 256},
		{topic: 190, p: 0, pad: 30, ext: ".avro", wantLen: 259}, // wide pads count as configured
		{topic: 216, p: 0, pad: 10, ext: ".snappy.parquet"},
		{topic: 217, p: 0, pad: 10, ext: ".snappy.parquet", wantLen: 256},
		{topic: 249, p: 0, pad: 1, ext: ""}, // Kafka's longest topic with pad 1
	} {
		lay := Topic{Name: strings.Repeat("t", c.topic)}
		err := lay.CheckNames(c.p, c.pad, c.ext)
		var ne *NameError
		switch {
		case c.wantLen == 0 && err != nil:
			t.Errorf("topic of %d, partition %d, pad %d, %q: %v; want it to fit", c.topic, c.p, c.pad, c.ext, err)
		case c.wantLen == 0:
			if n := len(FinalName(lay.Name, c.p, 0, 0, c.pad, c.ext)); n > MaxNameBytes {
				t.Errorf("accepted a name of %d bytes", n)
			}
		case !errors.As(err, &ne) || ne.Length != c.wantLen || ne.Partition != c.p || ne.MaxTopic != c.topic-(c.wantLen-MaxNameBytes):
			t.Errorf("topic of %d, partition %d, pad %d, %q: %v (%+v); want a NameError of %d bytes", c.topic, c.p, c.pad, c.ext, err, ne, c.wantLen)
		}
	}
}

// TestCheckCommitNameSeesOffsetsOutgrowThePad: a name that fits at the pad
// width is refused once its offsets are wider (F7: never publish a commit
// whose rename cannot succeed).
func TestCheckCommitNameSeesOffsetsOutgrowThePad(t *testing.T) {
	lay := Topic{Name: strings.Repeat("t", 226)}
	for _, c := range []struct {
		start, end int64
		wantLen    int // 0: fits
	}{
		{0, 9_999_999_999, 0},
		{9_999_999_999, 10_000_000_000, 256},
		{10_000_000_000, 10_000_000_001, 257},
	} {
		err := lay.CheckCommitName(0, c.start, c.end, 10, ".avro")
		var ne *NameError
		switch {
		case c.wantLen == 0 && err != nil:
			t.Errorf("offsets %d..%d: %v; want it to fit", c.start, c.end, err)
		case c.wantLen != 0 && (!errors.As(err, &ne) || ne.Length != c.wantLen || ne.Start != c.start || ne.End != c.end):
			t.Errorf("offsets %d..%d: %v; want a NameError of %d bytes", c.start, c.end, err, c.wantLen)
		case c.wantLen != 0 && !strings.Contains(err.Error(), fmt.Sprintf("offsets %d to %d", c.start, c.end)):
			t.Errorf("error does not name the offsets: %v", err)
		}
	}
}

func TestHighestPartition(t *testing.T) {
	for _, c := range []struct {
		topic int
		want  int64
	}{
		{227, -1},
		{226, 9},
		{225, 99},
		{218, 999_999_999},
		{217, math.MaxInt32},
		{5, math.MaxInt32},
	} {
		lay := Topic{Name: strings.Repeat("t", c.topic)}
		if got := lay.HighestPartition(10, ".avro"); got != c.want {
			t.Errorf("topic of %d: HighestPartition = %d, want %d", c.topic, got, c.want)
		}
		if c.want >= 0 && c.want < math.MaxInt32 {
			if lay.CheckNames(int32(c.want), 10, ".avro") != nil || lay.CheckNames(int32(c.want+1), 10, ".avro") == nil {
				t.Errorf("topic of %d: partition %d should be the last that fits", c.topic, c.want)
			}
		}
	}
}

// TestSuperseded: inputs a generation covers are superseded; a file
// committed after the compaction, files of other partitions and other
// directories are not.
func TestSuperseded(t *testing.T) {
	lay := Topic{TopicsDir: "/t", Name: "o"}
	in := func(dir string, p int32, s, e int64) string { return lay.FinalPath(dir, p, s, e, 10, ".avro") }
	gen := func(dir string, p int32, s, e int64) string {
		return lay.CompactedDir(dir) + "/" + FinalName("o", p, s, e, 10, ".avro")
	}
	paths := []string{
		in("h=1", 0, 0, 4), in("h=1", 0, 5, 9), in("h=1", 1, 0, 4), in("h=1", 0, 20, 21),
		in("h=2", 0, 10, 14),
		gen("h=1", 0, 0, 9), gen("h=1", 0, 30, 31),
	}
	got := lay.Superseded(paths)
	want := map[string]bool{in("h=1", 0, 0, 4): true, in("h=1", 0, 5, 9): true}
	if len(got) != len(want) {
		t.Fatalf("superseded %v, want %v", got, want)
	}
	for p := range want {
		if !got[p] {
			t.Errorf("%s not superseded", p)
		}
	}
}
