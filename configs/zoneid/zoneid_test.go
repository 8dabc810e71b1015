package zoneid

import (
	"testing"
	"time"
)

// TestZoneID: the forms java.time.ZoneId.of accepts, and some it refuses.
func TestZoneID(t *testing.T) {
	good := map[string]int{
		"UTC": 0, "Z": 0, "GMT": 0, "UT": 0, "+05:30": 19800, "-08:00": -28800, "+5": 18000, "+0530": 19800,
		"+05:30:15": 19815, "UTC+01:00": 3600, "GMT-3": -10800, "UT+14": 50400, "+18:00": 64800,
	}
	for v, offset := range good {
		loc, err := Parse(v)
		if err != nil {
			t.Errorf("Parse(%q): %v", v, err)
			continue
		}
		if _, off := timeIn(loc); off != offset {
			t.Errorf("Parse(%q) offset %d, want %d", v, off, offset)
		}
	}
	for _, v := range []string{"Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "EST5EDT"} {
		if _, err := Parse(v); err != nil {
			t.Errorf("Parse(%q): %v", v, err)
		}
	}
	for _, v := range []string{"+19:00", "+05:60", "+5:30", "+123", "Mars/Olympus", "Local", "UTC+", "GMT+ab", "1", "+"} {
		if _, err := Parse(v); err == nil {
			t.Errorf("Parse(%q) accepted", v)
		}
	}
}

func timeIn(loc *time.Location) (string, int) {
	return time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC).In(loc).Zone()
}
